// The kept list of each repetition's step times (--keep_step_times): the
// harness hands each train and infer repetition's per-step seconds here
// after the repetition has reported, and the JSON file reporter writes them
// into that run's entry as "step_times_ms": [..] (milliseconds, in step
// order), so a dashboard can plot a run step by step. Repetitions of one
// case are kept in order and taken in the order Google Benchmark reports
// them; a failed repetition keeps nothing (its entry gets no list).
#ifndef CNNBENCH_BENCH_STEP_TIMES_H_
#define CNNBENCH_BENCH_STEP_TIMES_H_

#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace cnnbench::bench {

class StepTimes {
 public:
  // The process's one list (the harness writes, the file reporter reads).
  static StepTimes& Global();

  // Keeps `seconds` as the next repetition of the run named `run_name`
  // (Google Benchmark's instance name, e.g. ".../iterations:100/repeats:5/manual_time").
  void Add(const std::string& run_name, std::vector<double> seconds);
  // The oldest kept list of `run_name`, removed; nullopt when none is left.
  std::optional<std::vector<double>> Take(const std::string& run_name);
  void Clear();

 private:
  std::mutex mutex_;
  std::map<std::string, std::deque<std::vector<double>>> kept_;
};

// `entry`, one run's JSON object as Google Benchmark's JSON reporter writes
// it ("    {\n ...\n    }"), with `"step_times_ms": [...]` added as its last
// field (milliseconds, 6 significant digits); unchanged when it does not
// end in a closing brace.
std::string WithStepTimes(const std::string& entry, const std::vector<double>& seconds);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_STEP_TIMES_H_
