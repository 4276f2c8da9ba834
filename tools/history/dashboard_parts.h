// The dashboard's parts (dashboard.h writes them): its data files as JSON
// safe inside a <script>, its charts as SVG, its pages as HTML, and its own
// script and style. Every string from the store goes through HtmlEscape or
// the JSON encoder here; no part builds markup from an unescaped string.
#ifndef CNNBENCH_TOOLS_HISTORY_DASHBOARD_PARTS_H_
#define CNNBENCH_TOOLS_HISTORY_DASHBOARD_PARTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tools/history/dashboard.h"

namespace cnnbench::history::dashboard {

// Runs the overview's sparkline and summary look back over.
inline constexpr int kSparkRuns = 30;

// --- Data files (dashboard_data.cc) ---

// `json` as `window.<name> = ...;`, with < > & U+2028 U+2029 written as
// \uXXXX so no string in it can end the script or the line.
std::string ScriptAssignment(const std::string& name, const nlohmann::json& json);
// One series in full (series/<id>.js): its points (NaN as null, with the
// status), changes and annotations.
nlohmann::json SeriesJson(const DashSeries& series, const DashMachine* machine);
// One summary row per series and the machines (overview.js): bounded per
// series (the last kSparkRuns values only).
nlohmann::json OverviewJson(const DashboardData& data);

// --- The figures a page shows (dashboard_data.cc) ---

struct Summary {
  double latest = 0;        // the last finite value (NaN: none)
  std::string latest_date;  // its run's date
  std::string last_status;  // the last run's status ("ok", "OOM", ...; "" no runs)
  double change = 0;        // latest / baseline - 1 (NaN: no baseline or value)
  std::string status;       // "ok", "failed", "regression", "improvement", "no runs"
  std::string status_text;  // what the status cell says
  int open_changes = 0;
};
Summary Summarize(const DashSeries& series);

// A figure: "1234.5", "12.35", "0.123"; "-" for NaN.
std::string FormatValue(double value);
// A relative change: "+3.2%", "-10.0%"; "-" for NaN.
std::string FormatPercent(double fraction);
// "2026-12-04T10:00:00+00:00" as "2026-12-04 10:00" (other text as it is).
std::string ShortDate(const std::string& date);
// The series' points' index of `run_id`, or -1.
int PointIndex(const DashSeries& series, int64_t run_id);
// A run that did not measure: a status other than "ok", or no value.
bool FailedRun(const DashPoint& point);
// The machine with `id`, or nullptr.
const DashMachine* FindMachine(const DashboardData& data, int64_t id);

// --- Charts (dashboard_svg.cc) ---

// The last kSparkRuns runs as a small inline SVG: the values (gaps at
// failed runs, marked in red), the baseline dashed.
std::string SparklineSvg(const DashSeries& series);
// A series' runs in order: the values with the repetitions' spread, the
// rolling band, the baseline, changes and annotations marked, failed runs
// as crosses on the axis. Marks carry class names the page's check counts
// (point, spread, band, change, annotation, failed) and data-index.
std::string SeriesChartSvg(const DashSeries& series);

// --- Pages (dashboard_pages.cc) ---

std::string OverviewPage(const DashboardData& data);
std::string MachinesPage(const DashboardData& data);
std::string SeriesPage(const DashboardData& data, const DashSeries& series);

// --- The site's own script and style (dashboard_assets.cc) ---

extern const char kScript[];
extern const char kStyle[];

}  // namespace cnnbench::history::dashboard

#endif  // CNNBENCH_TOOLS_HISTORY_DASHBOARD_PARTS_H_
