// The dashboard's data files (series/<id>.js, overview.js) and the figures
// its pages show, from DashboardData.
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "nlohmann/json.hpp"
#include "tools/history/dashboard_parts.h"

namespace cnnbench::history::dashboard {
namespace {

using nlohmann::json;

// NaN and infinities become null (nlohmann writes them so too; said here
// so the reader need not know).
json Number(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }

json PointJson(const DashPoint& p) {
  return json{{"run", p.run_id},
              {"date", p.date},
              {"commit", p.commit},
              {"value", Number(p.value)},
              {"best", Number(p.best)},
              {"min", Number(p.min)},
              {"max", Number(p.max)},
              {"repetitions", p.repetitions},
              {"band",
               {{"center", Number(p.band_center)},
                {"low", Number(p.band_low)},
                {"high", Number(p.band_high)}}},
              {"status", p.status}};
}

json ChangeJson(const DashChange& c) {
  json diff = json::array();
  for (const auto& [key, value] : c.environment_diff) diff.push_back(json::array({key, value}));
  return json{
      {"id", c.id},
      {"series", c.series_id},
      {"before", {{"run", c.before_run}, {"date", c.before_date}, {"commit", c.before_commit}}},
      {"after", {{"run", c.after_run}, {"date", c.after_date}, {"commit", c.after_commit}}},
      {"ratio", Number(c.ratio)},
      {"low", Number(c.low)},
      {"high", Number(c.high)},
      {"regression", c.regression},
      {"open", c.open},
      {"cause", c.cause},
      {"environment_diff", diff},
      {"method", c.method}};
}

}  // namespace

std::string ScriptAssignment(const std::string& name, const json& value) {
  // Replacement characters for invalid UTF-8 rather than an exception: the
  // strings come from imported files.
  const std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  // These characters only occur inside JSON strings, where \uXXXX means the same.
  const std::string safe = absl::StrReplaceAll(text, {{"<", "\\u003c"},
                                                      {">", "\\u003e"},
                                                      {"&", "\\u0026"},
                                                      {"\xE2\x80\xA8", "\\u2028"},
                                                      {"\xE2\x80\xA9", "\\u2029"}});
  return absl::StrCat("window.", name, " = ", safe, ";\n");
}

json SeriesJson(const DashSeries& s, const DashMachine* machine) {
  json points = json::array(), changes = json::array(), annotations = json::array();
  for (const DashPoint& p : s.points) points.push_back(PointJson(p));
  for (const DashChange& c : s.changes) changes.push_back(ChangeJson(c));
  for (const DashAnnotation& a : s.annotations) {
    annotations.push_back(json{{"run", a.run_id}, {"date", a.date}, {"text", a.text}});
  }
  return json{{"id", s.id},
              {"machine", {{"id", s.machine_id}, {"platform", machine ? machine->platform : ""}}},
              {"case", s.case_name},
              {"family", s.family},
              {"model", s.model},
              {"precision", s.precision},
              {"counter", s.counter},
              {"unit", s.unit},
              {"higher_is_better", s.higher_is_better},
              {"settings", s.settings},
              {"baseline", Number(s.baseline)},
              {"points", points},
              {"changes", changes},
              {"annotations", annotations}};
}

json OverviewJson(const DashboardData& data) {
  json machines = json::array(), series = json::array();
  for (const DashMachine& m : data.machines) {
    machines.push_back(
        json{{"id", m.id}, {"platform", m.platform}, {"runs", m.runs}, {"last_date", m.last_date}});
  }
  for (const DashSeries& s : data.series) {
    const Summary sum = Summarize(s);
    json spark = json::array();
    const size_t from = s.points.size() > kSparkRuns ? s.points.size() - kSparkRuns : 0;
    for (size_t i = from; i < s.points.size(); ++i) {
      spark.push_back(FailedRun(s.points[i]) ? json(nullptr) : json(s.points[i].value));
    }
    series.push_back(json{{"id", s.id},
                          {"machine", s.machine_id},
                          {"family", s.family},
                          {"model", s.model},
                          {"precision", s.precision},
                          {"case", s.case_name},
                          {"unit", s.unit},
                          {"latest", Number(sum.latest)},
                          {"latest_date", sum.latest_date},
                          {"last_status", sum.last_status},
                          {"baseline", Number(s.baseline)},
                          {"change", Number(sum.change)},
                          {"status", sum.status},
                          {"open_changes", sum.open_changes},
                          {"spark", spark}});
  }
  return json{{"store", data.store},
              {"generated", data.generated},
              {"machines", machines},
              {"series", series}};
}

Summary Summarize(const DashSeries& s) {
  Summary sum;
  sum.latest = NAN;
  sum.change = NAN;
  for (const DashChange& c : s.changes) sum.open_changes += c.open ? 1 : 0;
  if (s.points.empty()) {
    sum.status = sum.status_text = "no runs";
    return sum;
  }
  for (auto p = s.points.rbegin(); p != s.points.rend(); ++p) {
    if (FailedRun(*p)) continue;
    sum.latest = p->value;
    sum.latest_date = p->date;
    break;
  }
  sum.last_status = s.points.back().status;
  if (std::isfinite(sum.latest) && std::isfinite(s.baseline) && s.baseline > 0) {
    sum.change = sum.latest / s.baseline - 1;
  }
  if (FailedRun(s.points.back())) {
    sum.status = "failed";
    sum.status_text = absl::StrCat("last run failed: ", sum.last_status);
    return sum;
  }
  sum.status = sum.status_text = "ok";
  for (auto c = s.changes.rbegin(); c != s.changes.rend(); ++c) {
    if (!c->open) continue;
    sum.status = c->regression ? "regression" : "improvement";
    sum.status_text = absl::StrCat("open ", sum.status, " ", FormatPercent(c->ratio - 1));
    break;
  }
  return sum;
}

std::string FormatValue(double value) {
  if (!std::isfinite(value)) return "-";
  const double size = std::fabs(value);
  if (size >= 100) return absl::StrFormat("%.1f", value);
  if (size >= 1) return absl::StrFormat("%.2f", value);
  return absl::StrFormat("%.3g", value);
}

std::string FormatPercent(double fraction) {
  if (!std::isfinite(fraction)) return "-";
  return absl::StrFormat("%+.1f%%", fraction * 100);
}

std::string ShortDate(const std::string& date) {
  // YYYY-MM-DDTHH:MM...
  if (date.size() >= 16 && date[4] == '-' && date[10] == 'T' && date[13] == ':') {
    return absl::StrCat(date.substr(0, 10), " ", date.substr(11, 5));
  }
  return date;
}

bool FailedRun(const DashPoint& point) {
  return point.status != "ok" || !std::isfinite(point.value);
}

const DashMachine* FindMachine(const DashboardData& data, int64_t id) {
  for (const DashMachine& m : data.machines) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

int PointIndex(const DashSeries& series, int64_t run_id) {
  for (size_t i = 0; i < series.points.size(); ++i) {
    if (series.points[i].run_id == run_id) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace cnnbench::history::dashboard
