// Statistics over every timed iteration of a case: one implementation, one
// method and one set of counter names for the inference cases' latency and
// the training cases' step times.
//   Percentiles are nearest-rank: the p-th percentile of n samples is the
//   smallest sample with at least p% of the samples at or below it, the
//   ceil(p/100 x n)-th smallest (1-based); no interpolation, so every
//   percentile is a time some iteration took. With one sample every
//   percentile is it.
//   Rates follow tf_cnn_benchmarks: per-iteration rate = items / seconds;
//   uncertainty = np.std(rates) / sqrt(n) (population deviation), jitter =
//   1.4826 x the median absolute deviation of the rates (np.median: the mean
//   of the middle two for an even count).
#ifndef CNNBENCH_BENCH_ITERATION_STATS_H_
#define CNNBENCH_BENCH_ITERATION_STATS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "benchmark/benchmark.h"

namespace cnnbench::bench {

// Seconds per iteration, summarised.
struct TimeStats {
  int64_t count = 0;
  double mean = 0, min = 0, max = 0;
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0;
};

// The nearest-rank `percent`-th percentile (0 < percent <= 100) of
// `sorted` (ascending, not empty).
double NearestRank(const std::vector<double>& sorted, double percent);

// InvalidArgument for no samples, or one that is negative or not finite.
absl::StatusOr<TimeStats> SummarizeTimes(std::vector<double> seconds);

// Per-iteration rates (`items` per iteration / its seconds), summarised as
// tf_cnn_benchmarks does.
struct RateStats {
  double mean = 0;         // of the per-iteration rates
  double uncertainty = 0;  // np.std(rates) / sqrt(n)
  double jitter = 0;       // 1.4826 x median(|rate - median(rates)|)
};
absl::StatusOr<RateStats> SummarizeRates(const std::vector<double>& seconds, double items);

// The median as numpy computes it (the mean of the middle two for an even
// count); `values` not empty.
double Median(std::vector<double> values);

// Writes `<prefix>` (the mean), `<prefix>_p50`, `_p90`, `_p95`, `_p99`,
// `_min` and `_max`, in milliseconds, and `timed_iterations` (the count):
// e.g. prefix "latency_ms" for inference, "step_ms" for training.
void AddTimeCounters(benchmark::State& state, absl::string_view prefix, const TimeStats& stats);

// Drift over a run: the mean of the last tenth of the samples (in order)
// over the mean of the first tenth, from kMinDriftSamples samples on
// (thermal throttling, turbo decay or a neighbour shows as a ratio above 1);
// nullopt for fewer.
inline constexpr int kMinDriftSamples = 20;
std::optional<double> DriftRatio(const std::vector<double>& seconds);

// Everything a case that times each step (train, infer) reports of them.
struct StepSummary {
  TimeStats time;
  RateStats rate;               // of `items` per step
  std::optional<double> drift;  // DriftRatio
};
absl::StatusOr<StepSummary> SummarizeSteps(const std::vector<double>& seconds, double items);

// AddTimeCounters(prefix), the rate's `<rate>_uncertainty` and
// `<rate>_jitter` (e.g. images_per_second_uncertainty), and where there is
// a drift, `drift`, and `drift_flagged` = 1 where it is above 1 +
// `drift_threshold` (absent otherwise: what the report marks).
void AddStepCounters(benchmark::State& state, absl::string_view time_prefix, absl::string_view rate,
                     const StepSummary& summary, double drift_threshold);

// The label's note on a drift above 1 + `threshold`: ", slowed 12% over the
// run (drift 1.12: last tenth of N steps / first tenth)"; "" otherwise.
std::string DriftNote(const StepSummary& summary, double threshold);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_ITERATION_STATS_H_
