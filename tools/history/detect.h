// Change detection over one series' history (docs/history_detection.md):
// a lookback z-score as Conbench's and step detection to name the first
// run of each change, with the methods' parameters chosen by measurement
// (tools/history/detect_rates.cc; the rates are in the docs).
// Pure functions over the points; the store feeds them and keeps the result.
#ifndef CNNBENCH_TOOLS_HISTORY_DETECT_H_
#define CNNBENCH_TOOLS_HISTORY_DETECT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace cnnbench::history {

// One run of a series, in run order (oldest first).
struct SeriesPoint {
  int64_t run_id = 0;
  // The repetitions' values of the series' counter (finite, > 0; any other
  // value is ignored, and a point with none is a failed run: skipped).
  std::vector<double> values;
  // A known change (an annotation) takes effect at this run: the window
  // restarts here, and no change is reported across it.
  bool restart = false;
};

// The step fit's penalty per change, in units of the series' noise
// variance times ln n (measured: docs/history_detection.md).
inline constexpr double kMeasuredStepPenalty = 6;

struct DetectParams {
  int window = 100;          // lookback runs (Conbench's)
  double z_threshold = 5.0;  // |z| beyond which a run (or a new level) departs from its window
  double min_step = 0.04;    // a step smaller than this (relative) is not a change
  int min_window = 5;        // runs the z-score needs before it; fewer: the short method
  double step_penalty = kMeasuredStepPenalty;  // 0 or less: the measured default
  // Runs a level must hold to be one: a single run off its neighbours is
  // an outlier (RollingBand shows it), not a change.
  int min_segment = 3;
};

// A change: the level moved between run `before` and run `after` (indices
// into the points; after = before + 1 unless a run between failed to
// measure).
struct DetectedChange {
  int before = 0;
  int after = 0;
  double ratio = 1;  // the level after over the level before (geometric means of best repetitions)
  double low = 1;    // its 99% interval (Welch's t on the runs' log best repetitions)
  double high = 1;
  // The z-score that confirmed the change: the new level (the runs after,
  // up to `window`) against the window before it, in standard errors of
  // the difference (0: the short method confirmed it).
  double z = 0;
  // Conbench's z-score of the first run alone against its window (0 where
  // the window is too short).
  double first_run_z = 0;
  std::string method;  // "z-score (window 100, |z| > 5) + step ...", "short series: ..."
};

// `higher_is_better`: the counter's direction (a rate up, a time down);
// the best repetition is the highest value for a rate, the lowest for a
// time. Changes are returned in run order.
std::vector<DetectedChange> DetectChanges(const std::vector<SeriesPoint>& points,
                                          bool higher_is_better, const DetectParams& params);

// Per point, the rolling band the z-score tests against (the window's
// rolling mean of the best repetitions, +- z_threshold standard deviations
// of its residuals; computed on log values, so the band is a ratio either
// side of the centre); NaN where the window is too short or the point
// failed.
struct Band {
  double center = 0;
  double low = 0;
  double high = 0;
};
std::vector<Band> RollingBand(const std::vector<SeriesPoint>& points, bool higher_is_better,
                              const DetectParams& params);

// The best repetition of a point by the direction (NaN where it has no
// finite value above 0).
double BestOf(const SeriesPoint& point, bool higher_is_better);

}  // namespace cnnbench::history

#endif  // CNNBENCH_TOOLS_HISTORY_DETECT_H_
