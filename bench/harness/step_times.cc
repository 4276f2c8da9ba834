#include "bench/harness/step_times.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cnnbench::bench {

StepTimes& StepTimes::Global() {
  static StepTimes* times = new StepTimes();
  return *times;
}

void StepTimes::Add(const std::string& run_name, std::vector<double> seconds,
                    std::vector<std::vector<double>> rank_arrivals) {
  std::lock_guard<std::mutex> lock(mutex_);
  kept_[run_name].push_back(std::move(seconds));
  arrivals_[run_name].push_back(std::move(rank_arrivals));
}

std::vector<std::vector<double>> StepTimes::TakeRankArrivals(const std::string& run_name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = taken_.find(run_name);
  if (found == taken_.end()) return {};
  std::vector<std::vector<double>> arrivals = std::move(found->second);
  taken_.erase(found);
  return arrivals;
}

std::optional<std::vector<double>> StepTimes::Take(const std::string& run_name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = kept_.find(run_name);
  if (found == kept_.end() || found->second.empty()) return std::nullopt;
  std::vector<double> seconds = std::move(found->second.front());
  found->second.pop_front();
  std::deque<std::vector<std::vector<double>>>& arrivals = arrivals_[run_name];
  if (!arrivals.empty()) {
    taken_[run_name] = std::move(arrivals.front());
    arrivals.pop_front();
  }
  return seconds;
}

void StepTimes::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  kept_.clear();
  arrivals_.clear();
  taken_.clear();
}

namespace {

// Seconds as a JSON list of milliseconds, 6 significant digits.
std::string MillisecondList(const std::vector<double>& seconds) {
  std::string list = "[";
  for (size_t i = 0; i < seconds.size(); ++i)
    absl::StrAppend(&list, i == 0 ? "" : ", ", absl::StrFormat("%.6g", seconds[i] * 1e3));
  return list + "]";
}

// `entry` with `"key": value` added as its last field; unchanged when it
// does not end in a closing brace.
std::string WithLastField(const std::string& entry, const char* key, const std::string& value) {
  const size_t close = entry.rfind('}');
  if (close == std::string::npos) return entry;
  // Back over the newline and indentation before the closing brace.
  size_t end = close;
  while (end > 0 && (entry[end - 1] == ' ' || entry[end - 1] == '\n')) --end;
  return absl::StrCat(entry.substr(0, end), ",\n      \"", key, "\": ", value, entry.substr(end));
}

}  // namespace

std::string WithStepTimes(const std::string& entry, const std::vector<double>& seconds) {
  return WithLastField(entry, "step_times_ms", MillisecondList(seconds));
}

std::string WithRankArrivals(const std::string& entry,
                             const std::vector<std::vector<double>>& rank_arrivals) {
  if (rank_arrivals.empty()) return entry;
  std::string lists = "[";
  for (size_t r = 0; r < rank_arrivals.size(); ++r)
    absl::StrAppend(&lists, r == 0 ? "" : ", ", MillisecondList(rank_arrivals[r]));
  return WithLastField(entry, "rank_arrival_ms", lists + "]");
}

}  // namespace cnnbench::bench
