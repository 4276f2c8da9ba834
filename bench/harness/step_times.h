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
  // With `rank_arrivals` (seconds, by rank then step), each rank's arrival
  // at every step's all-reduce (data-parallel CPU cases; empty otherwise).
  void Add(const std::string& run_name, std::vector<double> seconds,
           std::vector<std::vector<double>> rank_arrivals = {});
  // The oldest kept list of `run_name`, removed; nullopt when none is left.
  std::optional<std::vector<double>> Take(const std::string& run_name);
  // The rank arrivals kept with the list Take returned last for `run_name`
  // (call after it); empty when there were none.
  std::vector<std::vector<double>> TakeRankArrivals(const std::string& run_name);
  void Clear();

 private:
  std::mutex mutex_;
  std::map<std::string, std::deque<std::vector<double>>> kept_;
  // Beside kept_, one per Add; the one Take passed moves to taken_.
  std::map<std::string, std::deque<std::vector<std::vector<double>>>> arrivals_;
  std::map<std::string, std::vector<std::vector<double>>> taken_;
};

// `entry`, one run's JSON object as Google Benchmark's JSON reporter writes
// it ("    {\n ...\n    }"), with `"step_times_ms": [...]` added as its last
// field (milliseconds, 6 significant digits); unchanged when it does not
// end in a closing brace.
std::string WithStepTimes(const std::string& entry, const std::vector<double>& seconds);
// The same with `"rank_arrival_ms": [[...], [...]]` (one list per rank, in
// rank order) added; unchanged when `rank_arrivals` is empty.
std::string WithRankArrivals(const std::string& entry,
                             const std::vector<std::vector<double>>& rank_arrivals);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_STEP_TIMES_H_
