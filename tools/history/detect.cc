// Change detection (detect.h): PELT on the runs' log best repetitions names
// each step's first run; a step counts when it is at least min_step and the
// new level's z-score against the window before it confirms it (on a short
// series: the repetitions' test from tools/report/significance and the
// runs' 99% interval of the ratio).
#include "tools/history/detect.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "tools/report/significance.h"

namespace cnnbench::history {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// A window with no spread: its sd is taken as this (on log values), so any
// departure passes the z test and min_step alone judges it.
constexpr double kSpreadFloor = 1e-6;

// A run that measured: its index into the points, the log of its best
// repetition and its usable repetitions.
struct Run {
  int index = 0;
  double log_best = 0;
  std::vector<double> values;
  bool restart = false;
};

std::vector<Run> UsableRuns(const std::vector<SeriesPoint>& points, bool higher_is_better) {
  std::vector<Run> runs;
  bool pending_restart = false;  // an annotation on a failed run takes effect at the next
  for (size_t i = 0; i < points.size(); ++i) {
    pending_restart = pending_restart || points[i].restart;
    const double best = BestOf(points[i], higher_is_better);
    if (std::isnan(best)) continue;
    Run r;
    r.index = static_cast<int>(i);
    r.log_best = std::log(best);
    for (double v : points[i].values)
      if (std::isfinite(v) && v > 0) r.values.push_back(v);
    r.restart = pending_restart;
    pending_restart = false;
    runs.push_back(std::move(r));
  }
  return runs;
}

// [begin, end) of each stretch between restarts.
std::vector<std::pair<int, int>> Epochs(const std::vector<Run>& runs) {
  std::vector<std::pair<int, int>> epochs;
  int begin = 0;
  for (int i = 1; i <= static_cast<int>(runs.size()); ++i) {
    if (i == static_cast<int>(runs.size()) || runs[i].restart) {
      if (i > begin) epochs.emplace_back(begin, i);
      begin = i;
    }
  }
  return epochs;
}

double Median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  return (*std::max_element(v.begin(), v.begin() + mid) + upper) / 2;
}

// The runs' noise (sd of one run's log best), robustly: the MAD of
// successive differences inside epochs, scaled to a normal's sd.
double NoiseSigma(const std::vector<Run>& runs, const std::vector<std::pair<int, int>>& epochs) {
  std::vector<double> diffs;
  for (const auto& [begin, end] : epochs)
    for (int i = begin + 1; i < end; ++i) diffs.push_back(runs[i].log_best - runs[i - 1].log_best);
  if (diffs.empty()) return 0;
  const double center = Median(diffs);
  for (double& d : diffs) d = std::fabs(d - center);
  return 1.4826 * Median(diffs) / std::sqrt(2.0);
}

// Prefix sums of y for O(1) means and squared deviations of any stretch.
class Sums {
 public:
  explicit Sums(const std::vector<double>& y) : sum_(y.size() + 1, 0), squares_(y.size() + 1, 0) {
    for (size_t i = 0; i < y.size(); ++i) {
      sum_[i + 1] = sum_[i] + y[i];
      squares_[i + 1] = squares_[i] + y[i] * y[i];
    }
  }
  double Mean(int begin, int end) const { return (sum_[end] - sum_[begin]) / (end - begin); }
  // Sum of squared deviations from the mean over [begin, end).
  double Cost(int begin, int end) const {
    const double s = sum_[end] - sum_[begin];
    return std::max(0.0, squares_[end] - squares_[begin] - s * s / (end - begin));
  }

 private:
  std::vector<double> sum_, squares_;
};

// Optimal partitioning with PELT's pruning (Killick et al. 2012): the
// piecewise-constant fit of y minimising the squared residuals plus
// `penalty` per segment, each segment at least `min_segment` long.
// Returns each later segment's first index.
std::vector<int> FitSteps(const std::vector<double>& y, double penalty, int min_segment) {
  const int n = static_cast<int>(y.size());
  if (n < 2 * min_segment) return {};
  const Sums sums(y);
  const double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> best(n + 1, kInf);
  std::vector<int> last(n + 1, 0);
  best[0] = -penalty;
  // Candidates for the last change, each with the time from which it is
  // pruned: one beaten at t may be needed until t itself is a candidate.
  struct Candidate {
    int at;
    int expires;
  };
  std::vector<Candidate> candidates = {{0, std::numeric_limits<int>::max()}};
  for (int t = min_segment; t <= n; ++t) {
    if (t - min_segment >= min_segment)
      candidates.push_back({t - min_segment, std::numeric_limits<int>::max()});
    for (const Candidate& c : candidates) {
      const double cost = best[c.at] + sums.Cost(c.at, t) + penalty;
      if (cost < best[t]) best[t] = cost, last[t] = c.at;
    }
    size_t kept = 0;
    for (Candidate c : candidates) {
      if (best[c.at] + sums.Cost(c.at, t) > best[t])
        c.expires = std::min(c.expires, t + min_segment);
      if (c.expires > t + 1) candidates[kept++] = c;
    }
    candidates.resize(kept);
  }
  std::vector<int> starts;
  for (int t = last[n]; t > 0; t = last[t]) starts.push_back(t);
  std::reverse(starts.begin(), starts.end());
  return starts;
}

// Conbench's lookback over y[max(begin, at - window), at): the mean, and
// the sd of the residuals of its runs, each against the mean of the up to
// `window` runs before it (from `begin` on).
struct Lookback {
  int count = 0;      // runs in the window
  int residuals = 0;  // runs in it with a run before them
  double mean = 0;
  double sd = 0;
};

Lookback LookbackAt(const Sums& sums, const std::vector<double>& y, int begin, int at, int window) {
  Lookback w;
  const int from = std::max(begin, at - window);
  w.count = at - from;
  if (w.count <= 0) return w;
  w.mean = sums.Mean(from, at);
  double sum = 0, squares = 0;
  for (int j = std::max(from, begin + 1); j < at; ++j) {
    const double r = y[j] - sums.Mean(std::max(begin, j - window), j);
    sum += r;
    squares += r * r;
    ++w.residuals;
  }
  if (w.residuals >= 2) {
    const double mean_r = sum / w.residuals;
    w.sd = std::sqrt(std::max(0.0, (squares - w.residuals * mean_r * mean_r) / (w.residuals - 1)));
  }
  return w;
}

// Regularized incomplete beta I_x(a, b) by its continued fraction (Lentz).
double IncompleteBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - IncompleteBeta(b, a, 1 - x);
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log(1 - x)) /
                       a;
  const double tiny = 1e-300;
  double f = 1, c = 1, d = 0;
  for (int i = 0; i <= 400; ++i) {
    const int m = i / 2;
    double numerator;
    if (i == 0) {
      numerator = 1;
    } else if (i % 2 == 0) {
      numerator = (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m));
    } else {
      numerator = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1));
    }
    d = 1 + numerator * d;
    d = std::fabs(d) < tiny ? tiny : d;
    d = 1 / d;
    c = 1 + numerator / c;
    c = std::fabs(c) < tiny ? tiny : c;
    f *= c * d;
    if (std::fabs(1 - c * d) < 1e-12) break;
  }
  return front * (f - 1);
}

// Student's t quantile at 0.995 for (possibly fractional) `df`, by bisection.
double T995(double df) {
  if (!(df < 1e7)) return 2.5758293035489;
  df = std::max(df, 1.0);
  double low = 0, high = 64;
  for (int i = 0; i < 60; ++i) {
    const double t = (low + high) / 2;
    const double upper_tail = IncompleteBeta(df / 2, 0.5, df / (df + t * t)) / 2;
    (upper_tail > 0.005 ? low : high) = t;
  }
  return (low + high) / 2;
}

// The 99% interval of exp(mean(b) - mean(a)) by Welch's t on the log values
// a = y[a0, a1), b = y[b0, b1). A side of one run borrows the other's
// variance; two single runs borrow `sigma` (the series' noise).
std::pair<double, double> RatioInterval(const Sums& sums, int a0, int a1, int b0, int b1,
                                        double sigma) {
  const double na = a1 - a0, nb = b1 - b0;
  const double diff = sums.Mean(b0, b1) - sums.Mean(a0, a1);
  double va = na >= 2 ? sums.Cost(a0, a1) / (na - 1) : kNaN;
  double vb = nb >= 2 ? sums.Cost(b0, b1) / (nb - 1) : kNaN;
  double df;
  if (std::isnan(va) && std::isnan(vb)) {
    va = vb = sigma * sigma;
    df = std::numeric_limits<double>::infinity();
  } else {
    if (std::isnan(va)) va = vb;
    if (std::isnan(vb)) vb = va;
    const double qa = va / na, qb = vb / nb;
    const double known_a = na >= 2 ? na - 1 : nb - 1, known_b = nb >= 2 ? nb - 1 : na - 1;
    df = (qa + qb) * (qa + qb) / (qa * qa / known_a + qb * qb / known_b);
    if (!std::isfinite(df)) df = known_a + known_b;  // both variances 0
  }
  const double half = T995(df) * std::sqrt(va / na + vb / nb);
  return {std::exp(diff - half), std::exp(diff + half)};
}

// One epoch's runs as the statistics see them.
struct Epoch {
  const std::vector<Run>* runs;
  int offset;             // the epoch's first run in `runs`
  std::vector<double> y;  // log best, centred on the epoch's mean
  Sums sums;
  double sigma;           // the series' noise
  std::string step_text;  // the step fit's description, for `method`
};

struct Judgement {
  bool passes = false;
  double strength = 0;  // |log ratio|: the weakest failing step goes first
  DetectedChange change;
};

// Whether the step at `at`, between the segments [begin, at) and
// [at, end), is a change.
Judgement Judge(const Epoch& e, int begin, int at, int end, const DetectParams& p) {
  Judgement v;
  const int a0 = std::max(begin, at - p.window), b1 = std::min(end, at + p.window);
  const double log_ratio = e.sums.Mean(at, b1) - e.sums.Mean(a0, at);
  v.strength = std::fabs(log_ratio);
  DetectedChange& c = v.change;
  c.before = (*e.runs)[e.offset + at - 1].index;
  c.after = (*e.runs)[e.offset + at].index;
  c.ratio = std::exp(log_ratio);
  std::tie(c.low, c.high) = RatioInterval(e.sums, a0, at, at, b1, e.sigma);
  const Lookback band = LookbackAt(e.sums, e.y, 0, at, p.window);
  if (band.count >= p.min_window && band.residuals >= 2)
    c.first_run_z = (e.y[at] - band.mean) / std::max(band.sd, kSpreadFloor);
  if (std::fabs(c.ratio - 1) < p.min_step) return v;
  const Lookback before = LookbackAt(e.sums, e.y, begin, at, p.window);
  if (before.count >= p.min_window && before.residuals >= 2) {
    const double se =
        std::max(before.sd, kSpreadFloor) * std::sqrt(1.0 / (b1 - at) + 1.0 / before.count);
    c.z = (e.sums.Mean(at, b1) - before.mean) / se;
    v.passes = std::fabs(c.z) > p.z_threshold;
    c.method = absl::StrFormat("z-score of the new level (window %d, |z| > %g) + %s", p.window,
                               p.z_threshold, e.step_text);
    return v;
  }
  std::vector<double> base, current;
  for (int i = a0; i < at; ++i) {
    const auto& values = (*e.runs)[e.offset + i].values;
    base.insert(base.end(), values.begin(), values.end());
  }
  for (int i = at; i < b1; ++i) {
    const auto& values = (*e.runs)[e.offset + i].values;
    current.insert(current.end(), values.begin(), values.end());
  }
  const report::Verdict test = report::Distinguish(base, current);
  // The repetitions alone ignore the runs' own noise: the runs' interval
  // must clear 1 as well.
  const bool runs_apart = c.low > 1 || c.high < 1;
  v.passes = test.distinguishable && runs_apart;
  c.method =
      absl::StrFormat("short series (%d runs before): repetitions %s, runs' 99%% interval %s + %s",
                      at - a0, test.text, runs_apart ? "clear of 1" : "spans 1", e.step_text);
  return v;
}

// The steps of one epoch that are changes: a failing step is dropped (the
// weakest first) and its neighbours judged again on the merged segments.
std::vector<DetectedChange> EpochChanges(const Epoch& e, std::vector<int> steps,
                                         const DetectParams& p) {
  const int n = static_cast<int>(e.y.size());
  auto bound = [&](int k) {
    return k < 0 ? 0 : k >= static_cast<int>(steps.size()) ? n : steps[k];
  };
  std::vector<Judgement> verdicts;
  for (int k = 0; k < static_cast<int>(steps.size()); ++k)
    verdicts.push_back(Judge(e, bound(k - 1), steps[k], bound(k + 1), p));
  for (;;) {
    int weakest = -1;
    for (int k = 0; k < static_cast<int>(verdicts.size()); ++k)
      if (!verdicts[k].passes && (weakest < 0 || verdicts[k].strength < verdicts[weakest].strength))
        weakest = k;
    if (weakest < 0) break;
    steps.erase(steps.begin() + weakest);
    verdicts.erase(verdicts.begin() + weakest);
    for (int k : {weakest - 1, weakest})
      if (k >= 0 && k < static_cast<int>(steps.size()))
        verdicts[k] = Judge(e, bound(k - 1), steps[k], bound(k + 1), p);
  }
  std::vector<DetectedChange> changes;
  for (Judgement& v : verdicts) changes.push_back(std::move(v.change));
  return changes;
}

DetectParams Sanitized(DetectParams p) {
  p.window = std::max(p.window, 1);
  p.min_window = std::max(p.min_window, 3);  // two residuals for an sd
  p.min_segment = std::max(p.min_segment, 1);
  if (!(p.step_penalty > 0)) p.step_penalty = kMeasuredStepPenalty;
  if (!(p.min_step >= 0)) p.min_step = 0;
  if (std::isnan(p.z_threshold)) p.z_threshold = DetectParams().z_threshold;
  return p;
}

}  // namespace

double BestOf(const SeriesPoint& point, bool higher_is_better) {
  double best = kNaN;
  for (double v : point.values) {
    if (!std::isfinite(v) || v <= 0) continue;
    if (std::isnan(best) || (higher_is_better ? v > best : v < best)) best = v;
  }
  return best;
}

std::vector<DetectedChange> DetectChanges(const std::vector<SeriesPoint>& points,
                                          bool higher_is_better, const DetectParams& params) {
  const DetectParams p = Sanitized(params);
  const std::vector<Run> runs = UsableRuns(points, higher_is_better);
  const std::vector<std::pair<int, int>> epochs = Epochs(runs);
  // Noise below a tenth of min_step cannot hide a reportable step; the floor
  // keeps an all-equal or quantised series from splitting at every wobble.
  const double sigma = std::max(NoiseSigma(runs, epochs), std::max(p.min_step / 10, 1e-6));
  std::vector<DetectedChange> changes;
  for (const auto& [begin, end] : epochs) {
    const int n = end - begin;
    if (n < 2 * p.min_segment) continue;
    std::vector<double> y;
    double mean = 0;
    for (int i = begin; i < end; ++i) mean += runs[i].log_best / n;
    for (int i = begin; i < end; ++i) y.push_back(runs[i].log_best - mean);
    const double penalty = p.step_penalty * sigma * sigma * std::log(static_cast<double>(n));
    Epoch e{&runs,
            begin,
            y,
            Sums(y),
            sigma,
            absl::StrFormat("step (PELT, penalty %g sigma^2 ln n, sigma %.2g%%)", p.step_penalty,
                            100 * sigma)};
    for (DetectedChange& c : EpochChanges(e, FitSteps(y, penalty, p.min_segment), p))
      changes.push_back(std::move(c));
  }
  return changes;
}

std::vector<Band> RollingBand(const std::vector<SeriesPoint>& points, bool higher_is_better,
                              const DetectParams& params) {
  const DetectParams p = Sanitized(params);
  std::vector<Band> bands(points.size(), Band{kNaN, kNaN, kNaN});
  const std::vector<Run> runs = UsableRuns(points, higher_is_better);
  for (const auto& [begin, end] : Epochs(runs)) {
    std::vector<double> y;
    for (int i = begin; i < end; ++i) y.push_back(runs[i].log_best);
    const Sums sums(y);
    for (int at = 0; at < end - begin; ++at) {
      const Lookback w = LookbackAt(sums, y, 0, at, p.window);
      if (w.count < p.min_window || w.residuals < 2) continue;
      const double half = p.z_threshold * w.sd;
      bands[runs[begin + at].index] = {std::exp(w.mean), std::exp(w.mean - half),
                                       std::exp(w.mean + half)};
    }
  }
  return bands;
}

}  // namespace cnnbench::history
