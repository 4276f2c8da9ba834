#include "bench/harness/step_times.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cnnbench::bench {

StepTimes& StepTimes::Global() {
  static StepTimes* times = new StepTimes();
  return *times;
}

void StepTimes::Add(const std::string& run_name, std::vector<double> seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  kept_[run_name].push_back(std::move(seconds));
}

std::optional<std::vector<double>> StepTimes::Take(const std::string& run_name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = kept_.find(run_name);
  if (found == kept_.end() || found->second.empty()) return std::nullopt;
  std::vector<double> seconds = std::move(found->second.front());
  found->second.pop_front();
  return seconds;
}

void StepTimes::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  kept_.clear();
}

std::string WithStepTimes(const std::string& entry, const std::vector<double>& seconds) {
  const size_t close = entry.rfind('}');
  if (close == std::string::npos) return entry;
  // Back over the newline and indentation before the closing brace.
  size_t end = close;
  while (end > 0 && (entry[end - 1] == ' ' || entry[end - 1] == '\n')) --end;
  std::string list;
  for (size_t i = 0; i < seconds.size(); ++i)
    absl::StrAppend(&list, i == 0 ? "" : ", ", absl::StrFormat("%.6g", seconds[i] * 1e3));
  return absl::StrCat(entry.substr(0, end), ",\n      \"step_times_ms\": [", list, "]",
                      entry.substr(end));
}

}  // namespace cnnbench::bench
