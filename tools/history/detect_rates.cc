// The rates of change detection (detect.h) on synthetic series with this
// machine's noise: false alarms on noise-only series, and for known 5% and
// 10% steps how often and how exactly the first run is found; a sweep of
// the z threshold and the step penalty, then the defaults in detail.
// Fixed seed: the output is the same on every run (docs/history_detection.md).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "tools/history/detect.h"

// The noise measured on this machine (docs/history_detection.md says how):
// a run's level and each repetition vary log-normally.
ABSL_FLAG(double, sigma_run, 0.020, "run-to-run level noise (sd of log)");
ABSL_FLAG(double, sigma_rep, 0.043, "repetition noise within a run (sd of log)");
ABSL_FLAG(int, repetitions, 5, "repetitions per run (the published preset's 5)");
ABSL_FLAG(uint64_t, seed, 20261205, "random seed");
ABSL_FLAG(bool, sweep, true, "print the sweep of z threshold and penalty");

namespace cnnbench::history {
namespace {

// Normal deviates from mt19937_64 (fully specified) by Box-Muller, so the
// numbers do not depend on the standard library's distributions.
class Noise {
 public:
  explicit Noise(uint64_t seed) : engine_(seed) {}
  double Uniform() { return ((engine_() >> 11) + 0.5) * 0x1.0p-53; }
  double Normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double r = std::sqrt(-2 * std::log(Uniform())), angle = 2 * M_PI * Uniform();
    spare_ = r * std::sin(angle);
    has_spare_ = true;
    return r * std::cos(angle);
  }

 private:
  std::mt19937_64 engine_;
  double spare_ = 0;
  bool has_spare_ = false;
};

struct NoiseModel {
  double sigma_run, sigma_rep, scale;  // scale: a multiple of both sigmas
  int repetitions;
  // A share of runs slowed by 10% to 30% (another build on the machine).
  double slowed = 0;
};

// A series of `runs` runs whose level is multiplied by `step` from run
// `step_at` on (no step: step_at < 0).
std::vector<SeriesPoint> MakeSeries(int runs, int step_at, double step, const NoiseModel& m,
                                    Noise& noise) {
  std::vector<SeriesPoint> points(runs);
  for (int i = 0; i < runs; ++i) {
    points[i].run_id = i + 1;
    const double level = 100 * (step_at >= 0 && i >= step_at ? step : 1);
    double run = m.scale * m.sigma_run * noise.Normal();
    if (m.slowed > 0 && noise.Uniform() < m.slowed) run += std::log(0.9 - 0.2 * noise.Uniform());
    for (int r = 0; r < m.repetitions; ++r)
      points[i].values.push_back(level * std::exp(run + m.scale * m.sigma_rep * noise.Normal()));
  }
  return points;
}

struct Scenario {
  std::string name;
  int runs, step_at;
  double step;
  int count;
  std::vector<std::vector<SeriesPoint>> series;
};

Scenario Make(std::string name, int runs, int step_at, double step, int count, const NoiseModel& m,
              uint64_t seed) {
  Scenario s{std::move(name), runs, step_at, step, count, {}};
  Noise noise(seed);
  for (int i = 0; i < count; ++i) s.series.push_back(MakeSeries(runs, step_at, step, m, noise));
  return s;
}

struct Outcome {
  double changes_per_series = 0;
  double per_1000_runs = 0;
  double found = 0;            // a change within 5 runs of the step, the right way
  double exact = 0;            // ... at the step's first run
  double within_2 = 0;         // ... within 2 runs of it
  double extra = 0;            // other changes per series
  double first_run_alone = 0;  // of those found, |first run's z| > threshold
  double short_method = 0;     // of those found, by the short method
};

Outcome Measure(const Scenario& s, const DetectParams& p) {
  Outcome o;
  int64_t changes = 0, found = 0, exact = 0, within_2 = 0, extra = 0, alone = 0, short_m = 0;
  for (const std::vector<SeriesPoint>& points : s.series) {
    bool hit = false;
    for (const DetectedChange& c : DetectChanges(points, /*higher_is_better=*/true, p)) {
      ++changes;
      const bool right_way = s.step > 1 ? c.ratio > 1 : c.ratio < 1;
      if (s.step_at < 0 || hit || std::abs(c.after - s.step_at) > 5 || !right_way) {
        ++extra;
        continue;
      }
      hit = true;
      ++found;
      exact += c.after == s.step_at;
      within_2 += std::abs(c.after - s.step_at) <= 2;
      alone += std::fabs(c.first_run_z) > p.z_threshold;
      short_m += c.z == 0;
    }
  }
  const double n = s.count;
  o.changes_per_series = changes / n;
  o.per_1000_runs = 1000.0 * changes / (n * s.runs);
  o.found = found / n;
  o.exact = exact / n;
  o.within_2 = within_2 / n;
  o.extra = extra / n;
  o.first_run_alone = found ? static_cast<double>(alone) / found : 0;
  o.short_method = found ? static_cast<double>(short_m) / found : 0;
  return o;
}

std::string Percent(double x) { return absl::StrFormat("%.1f%%", 100 * x); }

// A step of one size at one place, up and down: found counts both.
struct StepPair {
  std::string name;
  Scenario up, down;
};

double Found(const StepPair& s, const DetectParams& p) {
  return (Measure(s.up, p).found + Measure(s.down, p).found) / 2;
}

void PrintHeader(const char* first, const std::vector<Scenario>& noise_only,
                 const std::vector<StepPair>& steps) {
  std::printf("| %s |", first);
  for (const Scenario& s : noise_only) std::printf(" false / 1000 runs (%s) |", s.name.c_str());
  for (const StepPair& s : steps) std::printf(" found: %s |", s.name.c_str());
  std::printf("\n|---|---|");  // `first` names two columns
  for (size_t i = 0; i < noise_only.size() + steps.size(); ++i) std::printf("---|");
  std::printf("\n");
}

void PrintRow(const std::string& first, const DetectParams& p,
              const std::vector<Scenario>& noise_only, const std::vector<StepPair>& steps) {
  std::printf("| %s |", first.c_str());
  for (const Scenario& s : noise_only) std::printf(" %.3f |", Measure(s, p).per_1000_runs);
  for (const StepPair& s : steps) std::printf(" %s |", Percent(Found(s, p)).c_str());
  std::printf("\n");
}

// The sweep: per (z threshold, penalty), false alarms per 1,000 runs and
// the detection of each step (both directions together).
void PrintSweep(const std::vector<Scenario>& noise_only, const std::vector<StepPair>& steps) {
  PrintHeader("z | penalty", noise_only, steps);
  for (double z : {3.0, 4.0, 5.0, 6.0})
    for (double penalty : {2.0, 4.0, 6.0, 8.0, 16.0}) {
      DetectParams p;
      p.z_threshold = z;
      p.step_penalty = penalty;
      PrintRow(absl::StrFormat("%g | %g", z, penalty), p, noise_only, steps);
    }
}

void PrintMinStep(const std::vector<Scenario>& noise_only, const std::vector<StepPair>& steps) {
  PrintHeader("min_step | min_segment", noise_only, steps);
  for (double min_step : {0.03, 0.04, 0.05})
    for (int min_segment : {1, 2, 3}) {
      DetectParams p;
      p.min_step = min_step;
      p.min_segment = min_segment;
      PrintRow(absl::StrFormat("%g | %d", min_step, min_segment), p, noise_only, steps);
    }
}

void PrintDetail(const std::vector<Scenario>& scenarios) {
  const DetectParams p;
  std::printf(
      "| series | changes / series | per 1000 runs | found | at the first run | within 2 runs | "
      "other changes / series | first run alone \\|z\\| > %g | short method |\n",
      p.z_threshold);
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const Scenario& s : scenarios) {
    const Outcome o = Measure(s, p);
    const bool step = s.step_at >= 0;
    std::printf("| %s | %.4f | %.3f | %s | %s | %s | %.4f | %s | %s |\n", s.name.c_str(),
                o.changes_per_series, o.per_1000_runs, step ? Percent(o.found).c_str() : "-",
                step ? Percent(o.exact).c_str() : "-", step ? Percent(o.within_2).c_str() : "-",
                o.extra, step ? Percent(o.first_run_alone).c_str() : "-",
                step ? Percent(o.short_method).c_str() : "-");
  }
}

int Main() {
  const NoiseModel m{absl::GetFlag(FLAGS_sigma_run), absl::GetFlag(FLAGS_sigma_rep), 1,
                     absl::GetFlag(FLAGS_repetitions), 0};
  const uint64_t seed = absl::GetFlag(FLAGS_seed);
  const DetectParams d;
  std::printf(
      "noise: run %.1f%%, repetition %.1f%% (sd of log), %d repetitions; seed %llu\n"
      "defaults: window %d, z_threshold %g, min_step %g, min_window %d, step_penalty %g, "
      "min_segment %d\n\n",
      100 * m.sigma_run, 100 * m.sigma_rep, m.repetitions, static_cast<unsigned long long>(seed),
      d.window, d.z_threshold, d.min_step, d.min_window, d.step_penalty, d.min_segment);
  uint64_t k = seed;
  NoiseModel slowed = m;
  slowed.slowed = 0.05;
  std::vector<Scenario> noise_only = {Make("1000 runs", 1000, -1, 1, 200, m, ++k),
                                      Make("100 runs", 100, -1, 1, 1000, m, ++k),
                                      Make("8 runs", 8, -1, 1, 4000, m, ++k),
                                      Make("1000 runs, 5% slowed", 1000, -1, 1, 200, slowed, ++k)};
  // Mid-series: 100 runs either side; short: 3 runs before, 5 after; fresh:
  // 100 runs before, 5 after (the detail adds 3 and 10 after).
  using Place = std::tuple<std::string, int, int, int>;  // name, runs, step at, series
  const std::vector<Place> places = {{"mid (100+100)", 200, 100, 400},
                                     {"short (3+5)", 8, 3, 1000},
                                     {"fresh (100+5)", 105, 100, 400}};
  const std::vector<Place> more = {{"fresh (100+3)", 103, 100, 400},
                                   {"fresh (100+10)", 110, 100, 400}};
  std::vector<StepPair> steps, more_steps;
  for (double size : {0.10, 0.05})
    for (const auto* list : {&places, &more})
      for (const auto& [where, runs, at, count] : *list) {
        const std::string what = absl::StrFormat("%g%% %s", 100 * size, where);
        Scenario up = Make("+" + what, runs, at, 1 + size, count, m, ++k);
        Scenario down = Make("-" + what, runs, at, 1 - size, count, m, ++k);
        (list == &places ? steps : more_steps).push_back({what, std::move(up), std::move(down)});
      }
  if (absl::GetFlag(FLAGS_sweep)) {
    std::printf("Sweep (min_step %g, min_segment %d):\n\n", d.min_step, d.min_segment);
    PrintSweep(noise_only, steps);
    std::printf("\nmin_step and min_segment (z %g, penalty %g):\n\n", d.z_threshold,
                d.step_penalty);
    PrintMinStep(noise_only, steps);
  }
  std::vector<Scenario> all = noise_only;
  const NoiseModel twice{m.sigma_run, m.sigma_rep, 2, m.repetitions, 0};
  all.push_back(Make("1000 runs, noise x2", 1000, -1, 1, 200, twice, ++k));
  all.push_back(Make("8 runs, noise x2", 8, -1, 1, 4000, twice, ++k));
  for (const auto* list : {&steps, &more_steps})
    for (const StepPair& s : *list) {
      all.push_back(s.up);
      all.push_back(s.down);
    }
  std::printf("\nThe defaults in detail:\n\n");
  PrintDetail(all);
  return 0;
}

}  // namespace
}  // namespace cnnbench::history

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return cnnbench::history::Main();
}
