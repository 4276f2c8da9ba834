#include "core/compile_log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace cnnbench {
namespace {

struct LogState {
  std::mutex mu;
  int enabled = -1;  // -1: not read from the environment yet
  std::function<void(absl::string_view)> sink;
  bool started = false;
  absl::Time start;
};

LogState& State() {
  static LogState* state = new LogState();
  return *state;
}

thread_local std::string current_layer;

// When the process started, near enough: static initialization, before main.
const std::chrono::steady_clock::time_point kProcessStart = std::chrono::steady_clock::now();

double SecondsSinceStart() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - kProcessStart).count();
}

// The deadline in seconds from the start; < 0: not read from the
// environment yet; 0: none.
std::atomic<double> deadline_seconds{-1.0};

double EnvDeadline() {
  const char* v = std::getenv("CNNBENCH_COMPILE_DEADLINE_S");
  if (v == nullptr || *v == '\0') return 0.0;
  char* end = nullptr;
  const double seconds = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(seconds > 0.0)) {
    std::fprintf(stderr,
                 "cnnbench: CNNBENCH_COMPILE_DEADLINE_S='%s' is not a number of seconds > 0; "
                 "no compile deadline\n",
                 v);
    return 0.0;
  }
  return seconds;
}

bool EnvEnabled() {
  const char* v = std::getenv("CNNBENCH_VERBOSE");
  if (v == nullptr) return false;
  const std::string value = absl::AsciiStrToLower(v);
  return value == "1" || value == "true" || value == "yes" || value == "on";
}

std::string Field(const std::string& key, const std::string& value) {
  const bool bare = !value.empty() && value.find_first_of(" \t\"") == std::string::npos;
  if (bare) return absl::StrCat(key, "=", value);
  std::string quoted;
  for (char c : value) {
    if (c == '"' || c == '\\') quoted.push_back('\\');
    quoted.push_back(c == '\n' ? ' ' : c);
  }
  return absl::StrCat(key, "=\"", quoted, "\"");
}

}  // namespace

bool CompileLogEnabled() {
  LogState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.enabled < 0) s.enabled = EnvEnabled() ? 1 : 0;
  return s.enabled == 1;
}

void SetCompileLog(bool enabled) {
  LogState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  s.enabled = enabled ? 1 : 0;
}

void SetCompileLogSink(std::function<void(absl::string_view)> sink) {
  LogState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  s.sink = std::move(sink);
}

std::string CompileLogSeconds(double seconds) { return absl::StrFormat("%.3fs", seconds); }

void CompileLog(const CompileLogFields& fields) {
  if (!CompileLogEnabled()) return;
  LogState& s = State();
  const absl::Time now = absl::Now();
  std::string line;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.started) {
      s.started = true;
      s.start = now;
    }
    line = absl::StrCat("compile ", absl::FormatTime("%H:%M:%E3S", now, absl::UTCTimeZone()),
                        " +", CompileLogSeconds(absl::ToDoubleSeconds(now - s.start)));
  }
  if (!current_layer.empty()) absl::StrAppend(&line, " ", Field("layer", current_layer));
  for (const auto& [key, value] : fields) absl::StrAppend(&line, " ", Field(key, value));
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.sink) {
    s.sink(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  }
}

CompileLogLayer::CompileLogLayer(std::string layer) : previous_(std::move(current_layer)) {
  current_layer = std::move(layer);
}

CompileLogLayer::~CompileLogLayer() { current_layer = std::move(previous_); }

const std::string& CompileLogLayer::Current() { return current_layer; }

void SetCompileDeadline(double seconds_from_process_start) {
  deadline_seconds = seconds_from_process_start > 0.0 ? seconds_from_process_start : 0.0;
}

double CompileDeadlineSeconds() {
  double d = deadline_seconds.load();
  if (d < 0.0) {
    double expected = -1.0;
    deadline_seconds.compare_exchange_strong(expected, EnvDeadline());
    d = deadline_seconds.load();
  }
  return d;
}

absl::Status CheckCompileDeadline(absl::string_view pass, absl::string_view tried) {
  const double deadline = CompileDeadlineSeconds();
  if (deadline <= 0.0) return absl::OkStatus();
  const double now = SecondsSinceStart();
  if (now < deadline) return absl::OkStatus();
  std::string message = absl::StrCat(
      kCompileDeadlinePrefix, "the compile deadline (", absl::StrFormat("%.1f", deadline),
      " s after the start, --compile_deadline_s) passed at ", absl::StrFormat("%.1f", now),
      " s while building layer ", current_layer.empty() ? "(none)" : current_layer, ", pass ",
      pass);
  if (!tried.empty()) absl::StrAppend(&message, "; tried: ", tried);
  if (CompileLogEnabled())
    CompileLog({{"pass", std::string(pass)}, {"deadline", "passed"}, {"tried", std::string(tried)}});
  return absl::AbortedError(message);
}

bool IsCompileDeadline(const absl::Status& status) {
  return !status.ok() && absl::StrContains(status.message(), kCompileDeadlinePrefix);
}

}  // namespace cnnbench
