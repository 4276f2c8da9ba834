// The static dashboard (docs/history.md "Dashboard"): pages that work from
// file:// with no network, the data split per series so no file grows
// without bound, every string escaped. Written from DashboardData, which
// the store fills (tools/history/store.h); no database here.
#ifndef CNNBENCH_TOOLS_HISTORY_DASHBOARD_H_
#define CNNBENCH_TOOLS_HISTORY_DASHBOARD_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace cnnbench::history {

struct DashPoint {
  int64_t run_id = 0;
  std::string date;     // the run's date as written ("2026-12-04T10:00:00+00:00")
  std::string commit;   // short commit ("" unknown), "+dirty" appended when dirty
  double value = 0;     // the series' figure for the run (rates: total work over total time)
  double best = 0;      // the best repetition
  double min = 0;       // the repetitions' range
  double max = 0;
  int repetitions = 0;
  double band_center = 0;  // the rolling band (NaN: too few runs yet)
  double band_low = 0;
  double band_high = 0;
  std::string status = "ok";  // "ok", or the failure ("OOM", "error: ...") with value NaN
};

struct DashChange {
  int64_t id = 0;
  int64_t series_id = 0;
  int64_t before_run = 0, after_run = 0;
  std::string before_date, after_date, before_commit, after_commit;
  double ratio = 1, low = 1, high = 1;  // after / before, with its 99% interval
  bool regression = false;              // worse by the counter's direction
  bool open = true;                     // not yet annotated
  std::string cause;                    // "oneDNN 2.6.3 -> 3.2 between these runs"
  std::vector<std::pair<std::string, std::string>> environment_diff;  // key, "a -> b"
  std::string method;
};

struct DashAnnotation {
  int64_t run_id = 0;
  std::string date;
  std::string text;
};

struct DashSeries {
  int64_t id = 0;
  int64_t machine_id = 0;
  std::string case_name;   // "train/resnet50/fp32/synthetic/batch:32/gpus:0"
  std::string family;      // "train", "conv", ...
  std::string model;       // "resnet50" ("" for a kernel case)
  std::string precision;   // "fp32"
  std::string counter;     // "images_per_second"
  std::string unit;        // "images/s"
  bool higher_is_better = true;
  std::string settings;    // the measurement settings, "steps=20, batch=32, ..."
  // The reference level: the median of the first 10 runs since the last annotation.
  double baseline = 0;
  std::vector<DashPoint> points;  // run order
  std::vector<DashChange> changes;
  std::vector<DashAnnotation> annotations;
};

struct DashMachine {
  int64_t id = 0;
  std::string platform;
  std::vector<std::pair<std::string, std::string>> identity;  // machine keys, values
  int runs = 0;
  std::string last_date;
};

struct DashboardData {
  std::string store;      // where the data came from (no password)
  std::string generated;  // when the pages were written
  std::vector<DashMachine> machines;
  std::vector<DashSeries> series;
};

// Writes the site into `dir` (made when missing): index.html (overview per
// machine, filters, open changes, machines side by side), a page per series
// and its data file, and the site's own script and style. Lists the files
// written in `written`. Errors name the file.
absl::Status WriteDashboard(const DashboardData& data, const std::string& dir,
                            std::vector<std::string>* written);

// `text` with & < > " ' escaped for HTML text and attribute values.
std::string HtmlEscape(const std::string& text);

}  // namespace cnnbench::history

#endif  // CNNBENCH_TOOLS_HISTORY_DASHBOARD_H_
