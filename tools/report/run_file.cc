#include "tools/report/run_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "kernels/collectives/communicator.h"
#include "nlohmann/json.hpp"
#include "tools/report/messages.h"
#include "tools/report/model_names.h"

namespace cnnbench::report {
namespace {

// ordered_json keeps the context in file order.
using Json = nlohmann::ordered_json;

// Catches nlohmann's parse error message without exceptions.
class SyntaxErrorCatcher : public nlohmann::json_sax<Json> {
 public:
  std::string message;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    message = e.what();
    return false;
  }
};

// The counters the tables use; anything else in an entry is ignored.
// `ranks`: a train case's data-parallel ranks, checked against its name.
constexpr const char* kCounterNames[] = {
    "images_per_second", "flops", "bytes_per_second", "algbw", "busbw", "algbw_inplace",
    "busbw_inplace", "ranks", "gradient_bytes", "buckets",
    // Inference (and the train cases' accuracy and loss).
    "latency_ms", "latency_ms_p50", "latency_ms_p90", "latency_ms_p95", "latency_ms_p99",
    "latency_ms_min", "latency_ms_max", "timed_iterations", "top1_accuracy", "top5_accuracy",
    "loss", "peak_memory_bytes",
    // The step statistics of train and infer cases (bench/harness/iteration_stats.h).
    "step_ms", "step_ms_p50", "step_ms_p90", "step_ms_p99", "images_per_second_uncertainty",
    "images_per_second_jitter", "drift", "drift_flagged",
    // Power over the timed span (bench/harness/power_sampler.h).
    "power_w", "energy_j", "images_per_joule", "sm_clock_mhz", "sm_clock_mhz_min", "cpu_clock_mhz",
    "cpu_clock_mhz_min", "gpu_temperature_c_max", "throttled_fraction"};

double SecondsPerUnit(const std::string& unit) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1;
  return 0;  // unknown: no time
}

// Google Benchmark's words for non-finite numbers.
constexpr const char* kNonFiniteWords[] = {"-Infinity", "Infinity", "-NaN", "NaN"};

// A number, or one of the non-finite words QuoteNonFiniteNumbers quoted.
std::optional<double> NumberField(const Json& entry, const char* key) {
  auto it = entry.find(key);
  if (it == entry.end()) return std::nullopt;
  if (it->is_number()) return it->get<double>();
  if (!it->is_string()) return std::nullopt;
  const std::string& word = it->get_ref<const std::string&>();
  if (word == "NaN" || word == "-NaN") return std::numeric_limits<double>::quiet_NaN();
  if (word == "Infinity") return std::numeric_limits<double>::infinity();
  if (word == "-Infinity") return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

Counters ReadCounters(const Json& entry) {
  Counters counters;
  for (const char* name : kCounterNames) {
    if (std::optional<double> value = NumberField(entry, name)) counters[name] = *value;
  }
  // A multi-host training case's hosts: host<i>_arrival_ms (host_tables.h).
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    const std::string& key = it.key();
    if (absl::StartsWith(key, "host") && absl::EndsWith(key, "_arrival_ms"))
      if (std::optional<double> value = NumberField(entry, key.c_str())) counters[key] = *value;
  }
  // The repetition's timed iterations: rates over repetitions are
  // weighted by them (IsRateCounter).
  if (std::optional<double> n = NumberField(entry, kIterationsCounter))
    counters[kIterationsCounter] = *n;
  std::optional<double> time = NumberField(entry, "real_time");
  auto unit = entry.find("time_unit");
  if (time && unit != entry.end() && unit->is_string()) {
    double scale = SecondsPerUnit(unit->get<std::string>());
    if (scale > 0) counters["seconds"] = *time * scale;
  }
  return counters;
}

// The entry's numbers that ReadCounters did not take.
Counters OtherNumbers(const Json& entry, const Counters& read) {
  Counters other;
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    if (read.count(it.key()) || it.key() == "real_time") continue;
    if (it->is_number() && !it->is_boolean()) {
      other[it.key()] = it->get<double>();
    } else if (std::optional<double> v = NumberField(entry, it.key().c_str());
               v && it->is_string() && !std::isfinite(*v)) {
      other[it.key()] = *v;  // a quoted NaN or Infinity
    }
  }
  return other;
}

std::string StringField(const Json& entry, const char* key) {
  auto it = entry.find(key);
  return it != entry.end() && it->is_string() ? it->get<std::string>() : "";
}

bool BoolField(const Json& entry, const char* key) {
  auto it = entry.find(key);
  return it != entry.end() && it->is_boolean() && it->get<bool>();
}

// Fills algbw/busbw from the time when a collective case reports only time,
// with nccl-tests' definitions (the one table of factors, BusFactor).
void CompleteCollective(const CaseName& c, Counters& counters) {
  auto seconds = counters.find("seconds");
  if (!counters.count("algbw") && seconds != counters.end() && seconds->second > 0) {
    counters["algbw"] = static_cast<double>(c.bytes) / seconds->second;
  }
  auto algbw = counters.find("algbw");
  Collective collective = Collective::kAllReduce;
  if (!counters.count("busbw") && algbw != counters.end() &&
      FindCollective(c.family, &collective)) {
    counters["busbw"] = algbw->second * BusFactor(collective, c.ranks);
  }
}

// The counter the case's tables print: its family's (bench/suite/names.h).
const std::string& NeededCounter(const CaseName& name) {
  return bench::FindCaseFamily(name.family)->counter;
}

bool HasNeededCounter(const CaseName& name, const Counters& c) {
  return c.count(NeededCounter(name)) > 0;
}

std::string NeededCounterText(const CaseName& name) {
  // An all-reduce's busbw is completed from algbw or the time when missing.
  if (name.IsCollective()) return "busbw, algbw or a time";
  return NeededCounter(name);
}

}  // namespace

std::string QuoteNonFiniteNumbers(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  char previous = '\0';  // the last character outside strings that is not white space
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (c == '"') {
        in_string = false;
        previous = c;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out.push_back(c);
      continue;
    }
    // A value starts after ':', '[' or ','; the word must end there too.
    if (previous == ':' || previous == '[' || previous == ',') {
      bool quoted = false;
      for (absl::string_view word : kNonFiniteWords) {
        if (text.substr(i, word.size()) != word) continue;
        const size_t end = i + word.size();
        if (end < text.size() && (absl::ascii_isalnum(text[end]) || text[end] == '_')) continue;
        absl::StrAppend(&out, "\"", word, "\"");
        i = end - 1;
        previous = '"';
        quoted = true;
        break;
      }
      if (quoted) continue;
    }
    out.push_back(c);
    if (!absl::ascii_isspace(c)) previous = c;
  }
  return out;
}

std::string RunFile::Context(absl::string_view key) const {
  std::string value;
  for (const auto& [k, v] : context) {
    if (k == key) value = v;
  }
  return value;
}

std::string JsonSyntaxError(const std::string& text) {
  SyntaxErrorCatcher catcher;
  Json::sax_parse(text.begin(), text.end(), &catcher);
  return catcher.message;
}

namespace {

// One warning per entry, not per repetition.
class EntryWarnings {
 public:
  EntryWarnings(absl::string_view path, std::vector<std::string>* warnings)
      : path_(path), warnings_(warnings) {}
  void operator()(const std::string& entry, const std::string& why) {
    if (warned_.insert(entry).second)
      warnings_->push_back(absl::StrCat(path_, ": entry '", entry, "': ", why));
  }

 private:
  absl::string_view path_;
  std::vector<std::string>* warnings_;
  std::set<std::string> warned_;
};

// The context's strings, numbers and booleans, as text.
void ReadContext(const Json& json, absl::string_view path, RunFile& file,
                 std::vector<std::string>* warnings) {
  auto context = json.find("context");
  if (context == json.end() || !context->is_object()) {
    warnings->push_back(absl::StrCat(path, ": no \"context\" object; the platform is unknown"));
    return;
  }
  for (const auto& [key, value] : context->items()) {
    if (value.is_string()) {
      file.context.emplace_back(key, value.get<std::string>());
    } else if (value.is_number() || value.is_boolean()) {
      file.context.emplace_back(key, value.dump());
    }
  }
}

// Each entry into its case (repetitions, mean and stddev aggregates, or its
// error), in the file's order; names that do not parse are warned of.
void ReadEntries(const Json& benchmarks, absl::string_view path, RunFile& file,
                 EntryWarnings& warn, std::vector<std::string>* warnings) {
  std::map<std::string, size_t> index;  // canonical name -> position in file.cases
  for (size_t i = 0; i < benchmarks.size(); ++i) {
    const Json& entry = benchmarks[i];
    std::string name = entry.is_object() ? StringField(entry, "name") : "";
    if (name.empty()) {
      warn(absl::StrCat("#", i), "has no \"name\"; skipped");
      continue;
    }
    std::string run_name = StringField(entry, "run_name");
    if (run_name.empty()) run_name = name;
    const bool aggregate = StringField(entry, "run_type") == "aggregate";
    const std::string aggregate_name = aggregate ? StringField(entry, "aggregate_name") : "";
    if (aggregate && aggregate_name != "mean" && aggregate_name != "stddev") continue;

    absl::StatusOr<CaseName> parsed = ParseCaseName(run_name);
    if (!parsed.ok()) {
      warn(run_name, absl::StrCat(parsed.status().message(), "; skipped"));
      continue;
    }
    auto [it, inserted] = index.emplace(parsed->ToString(), file.cases.size());
    if (inserted) {
      FileCase added;
      added.name = *parsed;
      added.entry = run_name;
      file.cases.push_back(std::move(added));
      if (parsed->Is(bench::Family::kTrain) && !IsKnownModel(parsed->model)) {
        warnings->push_back(absl::StrCat(path, ": entry '", run_name, "': model '", parsed->model,
                                         "' is not in tf_cnn_benchmarks' zoo; shown as is"));
      }
    }
    FileCase& c = file.cases[it->second];

    std::string error = StringField(entry, "error_message");
    if (error.empty()) error = StringField(entry, "skip_message");
    if (BoolField(entry, "error_occurred") || BoolField(entry, "skipped")) {
      if (c.error.empty()) c.error = error.empty() ? "skipped with no message" : error;
      continue;
    }
    Counters counters = ReadCounters(entry);
    if (aggregate) counters.erase(kIterationsCounter);  // an aggregate's: the repetitions
    if (aggregate_name == "stddev") {
      c.stddev = counters;  // of the counters as written; a completed busbw has none
      continue;
    }
    if (c.name.IsCollective()) CompleteCollective(c.name, counters);
    if (aggregate) {
      c.mean = counters;
      auto reps = entry.find("repetitions");
      c.mean_repetitions = reps != entry.end() && reps->is_number_integer() ? reps->get<int>() : 1;
    } else {
      c.iterations.push_back(counters);
      c.other.push_back(OtherNumbers(entry, counters));
    }
  }
}

// Keeps only cases with the counter their tables need (or a failure to show).
void KeepUsableCases(RunFile& file, EntryWarnings& warn) {
  std::vector<FileCase> usable;
  for (FileCase& c : file.cases) {
    bool has_counter = c.iterations.empty() ? HasNeededCounter(c.name, c.mean) : true;
    for (const Counters& it : c.iterations)
      has_counter = has_counter && HasNeededCounter(c.name, it);
    const bool measured = !c.iterations.empty() || c.mean_repetitions > 0;
    if (measured && !has_counter) {
      warn(c.entry, absl::StrCat("has no ", NeededCounterText(c.name), " counter; skipped"));
      continue;
    }
    if (c.name.Is(bench::Family::kTrain)) {
      // The run's own count of data-parallel ranks (files before it have none)
      // must be the name's: the GPUs, or the CPU replicas.
      const int named = c.name.gpus > 0 ? c.name.gpus : c.name.replicas;
      std::vector<const Counters*> samples = {&c.mean};
      for (const Counters& it : c.iterations) samples.push_back(&it);
      for (const Counters* counters : samples) {
        auto ranks = counters->find("ranks");
        if (ranks == counters->end() || ranks->second == named) continue;
        warn(c.entry, absl::StrCat("its ranks counter is ", ranks->second, " but the name says ",
                                   named, "; the name counts"));
        break;
      }
    }
    if (measured && !c.error.empty()) {
      warn(c.entry, absl::StrCat("some repetitions failed (", UserMessage(c.error),
                                 "); the table shows the others"));
      c.error.clear();
    }
    usable.push_back(std::move(c));
  }
  file.cases = std::move(usable);
}

}  // namespace

absl::StatusOr<RunFile> ParseRunFile(absl::string_view path, absl::string_view raw_text,
                                     std::vector<std::string>* warnings) {
  const std::string text = QuoteNonFiniteNumbers(raw_text);
  Json json = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not JSON: ", JsonSyntaxError(text)));
  }
  auto benchmarks = json.is_object() ? json.find("benchmarks") : json.end();
  if (!json.is_object() || benchmarks == json.end() || !benchmarks->is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     ": not Google Benchmark JSON output (no \"benchmarks\" array); "
                     "write it with --benchmark_out=FILE --benchmark_out_format=json"));
  }
  RunFile file;
  file.path = std::string(path);
  ReadContext(json, path, file, warnings);
  EntryWarnings warn(path, warnings);
  ReadEntries(*benchmarks, path, file, warn, warnings);
  KeepUsableCases(file, warn);

  size_t steps = 0;  // train and infer cases: a run of either has its tables
  bool aggregated_rates = false;
  for (const FileCase& c : file.cases) {
    steps += c.name.Is(bench::Family::kTrain) || c.name.Is(bench::Family::kInfer);
    if (c.iterations.empty() && c.mean_repetitions > 1)
      for (const auto& [name, value] : c.mean) aggregated_rates |= IsRateCounter(name);
  }
  if (file.cases.empty()) {
    warnings->push_back(absl::StrCat(path, ": no cnnbench cases the report can use"));
  } else if (steps == 0) {
    warnings->push_back(absl::StrCat(path,
                                     ": no train or infer cases (only kernel, peak, collective or "
                                     "input cases); no training or inference tables from this "
                                     "file"));
  }
  // A rate over repetitions is total work over total time; from the mean
  // aggregate alone it can only be the mean of the repetitions' rates.
  if (aggregated_rates)
    warnings->push_back(absl::StrCat(
        path,
        ": only the repetitions' aggregates were written (--benchmark_report_aggregates_only): "
        "its rates (images/s, FLOP/s, bytes/s, busbw) are Google Benchmark's mean of the "
        "repetitions' rates, which one fast repetition pulls up, not total work over total time; "
        "write the repetitions (the default) for that"));
  return file;
}

absl::StatusOr<RunFile> LoadRunFile(const std::string& path, std::vector<std::string>* warnings) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": a folder, not a JSON file (give the files in it)"));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read failed"));
  return ParseRunFile(path, text.str(), warnings);
}

bool IsRateCounter(absl::string_view counter) {
  static const std::set<std::string, std::less<>> kRates = {
      "images_per_second", "flops", "bytes_per_second", "algbw", "busbw", "algbw_inplace",
      "busbw_inplace"};
  return kRates.count(counter) > 0;
}

bool RatePool::Add(double rate, double iterations) {
  if (!std::isfinite(rate) || rate <= 0 || !std::isfinite(iterations) || iterations <= 0)
    return false;
  if (samples_ == 0) reference_ = rate;
  iterations_ += iterations;
  weighted_ += rate == reference_ ? iterations : iterations * (reference_ / rate);
  sum_of_rates_ += rate;
  ++samples_;
  return true;
}

double RatePool::Rate() const { return samples_ == 0 ? 0 : reference_ * (iterations_ / weighted_); }

std::optional<double> RatePool::RateWith(int others, double mean) const {
  if (samples_ == 0 || !std::isfinite(mean) || mean <= 0) return std::nullopt;
  if (others <= 0) return Rate();
  const double each = iterations_ / samples_;
  return reference_ *
         ((iterations_ + others * each) / (weighted_ + others * each * (reference_ / mean)));
}

std::optional<double> CaseMean(const FileCase& c, const std::string& counter) {
  double sum = 0;
  int n = 0;
  RatePool pool;
  const bool rate = IsRateCounter(counter);
  for (const Counters& repetition : c.iterations) {
    auto it = repetition.find(counter);
    if (it == repetition.end()) continue;
    sum += it->second;
    ++n;
    auto iterations = repetition.find(kIterationsCounter);
    if (rate && iterations != repetition.end()) pool.Add(it->second, iterations->second);
  }
  if (n > 0 && pool.samples() == n) return pool.Rate();
  if (n > 0) return sum / n;
  if (auto it = c.mean.find(counter); it != c.mean.end()) return it->second;
  return std::nullopt;
}

}  // namespace cnnbench::report
