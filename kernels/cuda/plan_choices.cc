#include "kernels/cuda/plan_choices.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/compile_log.h"

namespace cnnbench::cuda {
namespace {

constexpr absl::string_view kHeader = "# cnnbench cuda plan choices v1";

void Log(const std::string& path, absl::string_view what) {
  CompileLog({{"plan_cache", path}, {"note", std::string(what)}});
}

bool ParseBool(absl::string_view text, bool* value) {
  if (text == "0" || text == "1") {
    *value = text == "1";
    return true;
  }
  return false;
}

}  // namespace

std::string RecordedEngine::ToText() const {
  std::vector<std::string> knob_text;
  for (const auto& [type, value] : knobs) knob_text.push_back(absl::StrCat(type, ":", value));
  return absl::StrCat("engine=", engine_id, ";knobs=", absl::StrJoin(knob_text, ","),
                      ";rtc=", runtime_compiled ? 1 : 0, ";relaxed=", relaxed ? 1 : 0);
}

absl::Status RecordedEngine::CheckReplayable() const {
  constexpr int kNotSet = 0, kFrontendOnly = 1000;  // cudnn-frontend's KnobType_t
  for (const auto& [type, value] : knobs) {
    if (type == kNotSet)
      return absl::FailedPreconditionError(absl::StrCat(
          "engine ", engine_id, ": a knob (value ", value,
          ") has a type cudnn-frontend does not name, so the engine cannot be built again "
          "from its id and knobs"));
    if (type >= kFrontendOnly)
      return absl::FailedPreconditionError(
          absl::StrCat("engine ", engine_id, ": knob type ", type,
                       " is cudnn-frontend's own, which cuDNN's engines do not take"));
  }
  return absl::OkStatus();
}

absl::StatusOr<RecordedEngine> RecordedEngine::Parse(absl::string_view text) {
  RecordedEngine engine;
  bool seen_engine = false, seen_knobs = false, seen_rtc = false, seen_relaxed = false;
  for (absl::string_view field : absl::StrSplit(text, ';')) {
    const std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(field, '=');
    bool ok = true;
    if (kv.first == "engine" && !seen_engine) {
      seen_engine = ok = absl::SimpleAtoi(kv.second, &engine.engine_id) && engine.engine_id >= 0;
    } else if (kv.first == "knobs" && !seen_knobs) {
      seen_knobs = true;
      if (!kv.second.empty()) {
        for (absl::string_view knob : absl::StrSplit(kv.second, ',')) {
          const std::pair<absl::string_view, absl::string_view> tv = absl::StrSplit(knob, ':');
          int type = 0;
          int64_t value = 0;
          if (!absl::SimpleAtoi(tv.first, &type) || !absl::SimpleAtoi(tv.second, &value) ||
              type < 0) {
            ok = false;
            break;
          }
          engine.knobs.emplace_back(type, value);
        }
      }
    } else if (kv.first == "rtc" && !seen_rtc) {
      seen_rtc = ok = ParseBool(kv.second, &engine.runtime_compiled);
    } else if (kv.first == "relaxed" && !seen_relaxed) {
      seen_relaxed = ok = ParseBool(kv.second, &engine.relaxed);
    } else {
      ok = false;
    }
    if (!ok)
      return absl::InvalidArgumentError(
          absl::StrCat("engine \"", text, "\": field \"", field, "\" does not parse"));
  }
  if (!seen_engine || !seen_knobs || !seen_rtc || !seen_relaxed)
    return absl::InvalidArgumentError(absl::StrCat(
        "engine \"", text, "\": wants engine=, knobs=, rtc= and relaxed="));
  std::sort(engine.knobs.begin(), engine.knobs.end());
  return engine;
}

PlanChoices& PlanChoices::Process() {
  static PlanChoices* choices = [] {
    auto* made = new PlanChoices();
    const char* env = std::getenv("CNNBENCH_CUDA_PLAN_CACHE");
    if (env != nullptr && env[0] != '\0') made->Open(env);
    return made;
  }();
  return *choices;
}

std::string PlanChoices::Serialize(const std::string& identity,
                                   const std::map<std::string, PlanChoice>& choices) {
  std::string text = absl::StrCat(kHeader, "\nidentity\t", identity, "\n");
  for (const auto& [key, choice] : choices) {
    std::vector<std::string> engines;
    for (const RecordedEngine& e : choice.engines) engines.push_back(e.ToText());
    absl::StrAppend(&text, "choice\t", key, "\t", choice.form.empty() ? "-" : choice.form, "\t",
                    choice.milliseconds, "\t", absl::StrJoin(engines, "\t"), "\n");
  }
  return text;
}

absl::Status PlanChoices::Parse(absl::string_view text, std::string* identity,
                                std::map<std::string, PlanChoice>* choices) {
  identity->clear();
  choices->clear();
  int number = 0;
  bool header = false, has_identity = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    if (line.empty()) continue;
    if (number == 1) {
      if (line != kHeader)
        return absl::InvalidArgumentError(
            absl::StrCat("line 1 is not \"", kHeader, "\" (not a plan-choice file)"));
      header = true;
      continue;
    }
    const std::vector<absl::string_view> fields = absl::StrSplit(line, '\t');
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat("line ", number, ": ", why));
    };
    if (fields[0] == "identity") {
      if (fields.size() != 2 || has_identity) return bad("wants one identity line of 2 fields");
      *identity = std::string(fields[1]);
      has_identity = true;
      continue;
    }
    if (fields[0] != "choice") return bad(absl::StrCat("unknown record \"", fields[0], "\""));
    if (fields.size() < 5) return bad("a choice wants key, form, milliseconds and an engine");
    PlanChoice choice;
    choice.form = fields[2] == "-" ? "" : std::string(fields[2]);
    if (!absl::SimpleAtod(fields[3], &choice.milliseconds) || !(choice.milliseconds >= 0))
      return bad(absl::StrCat("milliseconds \"", fields[3], "\" is not a number >= 0"));
    for (size_t i = 4; i < fields.size(); ++i) {
      absl::StatusOr<RecordedEngine> engine = RecordedEngine::Parse(fields[i]);
      if (!engine.ok()) return bad(engine.status().message());
      choice.engines.push_back(*std::move(engine));
    }
    if (fields[1].empty()) return bad("an empty key");
    (*choices)[std::string(fields[1])] = std::move(choice);
  }
  if (!header) return absl::InvalidArgumentError("empty (not a plan-choice file)");
  if (!has_identity) return absl::InvalidArgumentError("no identity line");
  return absl::OkStatus();
}

std::string PlanChoices::Open(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  path_ = path;
  choices_.clear();
  file_identity_.clear();
  write_error_logged_ = false;
  if (path.empty()) return "off";
  std::ifstream in(path, std::ios::binary);
  std::string what;
  if (!in) {
    what = errno == ENOENT ? "not there yet: starting empty"
                           : absl::StrCat("unreadable (", std::strerror(errno),
                                          "): ignored, written afresh");
  } else {
    std::stringstream text;
    text << in.rdbuf();
    std::map<std::string, PlanChoice> read;
    std::string identity;
    const absl::Status parsed = Parse(text.str(), &identity, &read);
    if (parsed.ok()) {
      choices_ = std::move(read);
      file_identity_ = std::move(identity);
      what = absl::StrCat(choices_.size(), " choices read for ", file_identity_);
    } else {
      what = absl::StrCat("ignored, written afresh: ", parsed.message());
    }
  }
  // Bound before the file was opened: the identity check happens now.
  if (bound_ && !choices_.empty() && file_identity_ != identity_) {
    absl::StrAppend(&what, "; they were made with ", file_identity_, ", not ", identity_,
                    ": dropped");
    choices_.clear();
  }
  Log(path, what);
  return what;
}

bool PlanChoices::enabled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !path_.empty() && !conflicted_;
}

std::string PlanChoices::path() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return path_;
}

bool PlanChoices::Bind(const std::string& identity) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (bound_) {
    if (identity != identity_ && !conflicted_) {
      conflicted_ = true;
      Log(path_, absl::StrCat("a second identity (", identity, " after ", identity_,
                              "): the plan cache is off for this process"));
    }
    return !conflicted_;
  }
  bound_ = true;
  identity_ = identity;
  if (!choices_.empty() && file_identity_ != identity) {
    Log(path_, absl::StrCat(choices_.size(), " choices were made with ", file_identity_, ", not ",
                            identity, ": dropped, the file is written afresh"));
    choices_.clear();
  }
  return true;
}

std::optional<PlanChoice> PlanChoices::Find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (path_.empty() || !bound_ || conflicted_) return std::nullopt;
  auto found = choices_.find(key);
  if (found == choices_.end()) return std::nullopt;
  ++hits_;
  return found->second;
}

absl::Status PlanChoices::Record(const std::string& key, const PlanChoice& choice) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (path_.empty() || !bound_ || conflicted_) return absl::OkStatus();
  if (key.empty() || key.find_first_of("\t\n") != std::string::npos ||
      choice.form.find_first_of("\t\n") != std::string::npos || choice.engines.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("plan choice \"", key, "\": an empty key, a tab or newline in its key or "
                     "form, or no engine"));
  choices_[key] = choice;
  ++recorded_;
  return WriteLocked();
}

void PlanChoices::Forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (choices_.erase(key) > 0 && !path_.empty()) WriteLocked().IgnoreError();
}

size_t PlanChoices::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return choices_.size();
}

int PlanChoices::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

int PlanChoices::recorded() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorded_;
}

absl::Status PlanChoices::WriteLocked() {
  const std::string text = Serialize(identity_, choices_);
  const std::string temporary = absl::StrCat(path_, ".tmp.", getpid());
  absl::Status status;
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out || !(out << text) || !out.flush())
      status = absl::UnavailableError(
          absl::StrCat("cannot write the plan-choice file ", temporary, ": ",
                       std::strerror(errno)));
  }
  if (status.ok() && std::rename(temporary.c_str(), path_.c_str()) != 0)
    status = absl::UnavailableError(absl::StrCat("cannot rename ", temporary, " to ", path_,
                                                 ": ", std::strerror(errno)));
  if (!status.ok()) {
    std::remove(temporary.c_str());
    if (!write_error_logged_) Log(path_, status.message());
    write_error_logged_ = true;
  }
  return status;
}

std::string ConvChoiceKey(absl::string_view problem_key, absl::string_view pass,
                          bool deterministic) {
  return absl::StrCat(problem_key, "/", pass, deterministic ? "/deterministic" : "");
}

}  // namespace cnnbench::cuda
