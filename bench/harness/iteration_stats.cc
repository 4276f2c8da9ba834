#include "bench/harness/iteration_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status.h"

namespace cnnbench::bench {
namespace {

absl::Status CheckSamples(const std::vector<double>& seconds) {
  if (seconds.empty()) return absl::InvalidArgumentError("no timed iterations to summarise");
  for (size_t i = 0; i < seconds.size(); ++i)
    if (!std::isfinite(seconds[i]) || seconds[i] < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("iteration ", i, " took ", seconds[i], " s: not a time"));
  return absl::OkStatus();
}

}  // namespace

double NearestRank(const std::vector<double>& sorted, double percent) {
  const double n = static_cast<double>(sorted.size());
  // ceil(p / 100 x n), computed so that an exact product is not pushed up
  // by rounding (90% of 10 samples is the 9th, not the 10th).
  const double exact = percent * n / 100.0;
  size_t rank = static_cast<size_t>(std::ceil(exact - 1e-9 * std::max(1.0, exact)));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

absl::StatusOr<TimeStats> SummarizeTimes(std::vector<double> seconds) {
  if (absl::Status s = CheckSamples(seconds); !s.ok()) return s;
  std::sort(seconds.begin(), seconds.end());
  TimeStats t;
  t.count = static_cast<int64_t>(seconds.size());
  t.mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) / seconds.size();
  t.min = seconds.front();
  t.max = seconds.back();
  t.p50 = NearestRank(seconds, 50);
  t.p90 = NearestRank(seconds, 90);
  t.p95 = NearestRank(seconds, 95);
  t.p99 = NearestRank(seconds, 99);
  return t;
}

absl::StatusOr<RateStats> SummarizeRates(const std::vector<double>& seconds, double items) {
  if (absl::Status s = CheckSamples(seconds); !s.ok()) return s;
  std::vector<double> rates;
  rates.reserve(seconds.size());
  for (double s : seconds) {
    if (!(s > 0)) return absl::InvalidArgumentError("an iteration of 0 s has no rate");
    rates.push_back(items / s);
  }
  const double n = static_cast<double>(rates.size());
  RateStats r;
  r.mean = std::accumulate(rates.begin(), rates.end(), 0.0) / n;
  double squares = 0;
  for (double v : rates) squares += (v - r.mean) * (v - r.mean);
  r.uncertainty = std::sqrt(squares / n) / std::sqrt(n);
  const double median = Median(rates);
  std::vector<double> deviations;
  deviations.reserve(rates.size());
  for (double v : rates) deviations.push_back(std::fabs(v - median));
  r.jitter = 1.4826 * Median(deviations);
  return r;
}

std::optional<double> DriftRatio(const std::vector<double>& seconds) {
  const size_t n = seconds.size();
  if (n < static_cast<size_t>(kMinDriftSamples)) return std::nullopt;
  const size_t tenth = n / 10;
  const double first = std::accumulate(seconds.begin(), seconds.begin() + tenth, 0.0);
  const double last = std::accumulate(seconds.end() - tenth, seconds.end(), 0.0);
  if (!(first > 0)) return std::nullopt;
  return last / first;
}

absl::StatusOr<StepSummary> SummarizeSteps(const std::vector<double>& seconds, double items) {
  StepSummary s;
  ASSIGN_OR_RETURN_AS_IS(s.time, SummarizeTimes(seconds));
  ASSIGN_OR_RETURN_AS_IS(s.rate, SummarizeRates(seconds, items));
  s.drift = DriftRatio(seconds);
  return s;
}

void AddStepCounters(benchmark::State& state, absl::string_view time_prefix, absl::string_view rate,
                     const StepSummary& summary, double drift_threshold) {
  AddTimeCounters(state, time_prefix, summary.time);
  const std::string r(rate);
  state.counters[r + "_uncertainty"] = benchmark::Counter(summary.rate.uncertainty);
  state.counters[r + "_jitter"] = benchmark::Counter(summary.rate.jitter);
  if (!summary.drift) return;
  state.counters["drift"] = benchmark::Counter(*summary.drift);
  // Only where flagged: a counter 0 in every repetition has a NaN
  // variation, which Google Benchmark writes as bare NaN (not JSON).
  if (*summary.drift > 1.0 + drift_threshold) state.counters["drift_flagged"] = 1;
}

std::string DriftNote(const StepSummary& summary, double threshold) {
  if (!summary.drift || !(*summary.drift > 1.0 + threshold)) return "";
  return absl::StrFormat(
      ", slowed %.0f%% over the run (drift %.2f: last tenth of %d steps / "
      "first tenth)",
      (*summary.drift - 1.0) * 100.0, *summary.drift, static_cast<int>(summary.time.count));
}

void AddTimeCounters(benchmark::State& state, absl::string_view prefix, const TimeStats& stats) {
  const std::string p(prefix);
  state.counters[p] = benchmark::Counter(stats.mean * 1e3);
  state.counters[p + "_p50"] = benchmark::Counter(stats.p50 * 1e3);
  state.counters[p + "_p90"] = benchmark::Counter(stats.p90 * 1e3);
  state.counters[p + "_p95"] = benchmark::Counter(stats.p95 * 1e3);
  state.counters[p + "_p99"] = benchmark::Counter(stats.p99 * 1e3);
  state.counters[p + "_min"] = benchmark::Counter(stats.min * 1e3);
  state.counters[p + "_max"] = benchmark::Counter(stats.max * 1e3);
  state.counters["timed_iterations"] = benchmark::Counter(static_cast<double>(stats.count));
}

}  // namespace cnnbench::bench
