// The dashboard's pages as HTML: the overview (open changes, a table per
// machine), machines side by side, and a page per series. Everything shows
// without a script; dashboard.js adds the filters and the run readout.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/history/dashboard_parts.h"

namespace cnnbench::history::dashboard {
namespace {

std::string E(const std::string& text) { return HtmlEscape(text); }

// Only the site's own files: no network, no inline script or style (a
// string that escaped its escaping could not run either).
constexpr char kPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; base-uri 'none'; "
    "form-action 'none'";

std::string Head(const std::string& title, const std::string& root, const std::string& page) {
  return absl::StrCat("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
                      "<meta http-equiv=\"Content-Security-Policy\" content=\"", kPolicy, "\">\n",
                      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
                      "<title>", E(title), "</title>\n<link rel=\"stylesheet\" href=\"", root,
                      "dashboard.css\">\n", "</head>\n<body data-page=\"", page, "\">\n");
}

std::string Foot(const std::vector<std::string>& scripts) {
  std::string out;
  for (const std::string& s : scripts) absl::StrAppend(&out, "<script src=\"", s, "\"></script>\n");
  return absl::StrCat(out, "</body>\n</html>\n");
}

std::string Nav(const std::string& root) {
  return absl::StrCat("<nav><a href=\"", root, "index.html\">Overview</a><a href=\"", root,
                      "index.html#changes\">Open changes</a><a href=\"", root,
                      "machines.html\">Machines side by side</a></nav>\n");
}

std::string Header(const DashboardData& data, const std::string& heading) {
  return absl::StrCat("<header>\n<h1>", E(heading), "</h1>\n", Nav(""), "<p class=\"meta\">From ",
                      E(data.store), ", written ", E(data.generated), "</p>\n</header>\n");
}

std::string Filters() {
  return "<div id=\"filters\" class=\"filters\"></div>\n"
         "<noscript><p class=\"note\">The filters need JavaScript; every series is "
         "shown.</p></noscript>\n";
}

std::string SeriesLink(const DashSeries& s, const std::string& root, const std::string& anchor,
                       const std::string& text) {
  return absl::StrCat("<a href=\"", root, "series/", s.id, ".html", anchor, "\">", E(text), "</a>");
}

std::string StatusClass(const std::string& status) {
  return status == "no runs" ? "status-none" : absl::StrCat("status-", status);
}

std::string MachineName(const DashboardData& data, int64_t id) {
  const DashMachine* m = FindMachine(data, id);
  return m ? m->platform : absl::StrCat("machine ", id);
}

// The machines in the data's order, then any a series names without a row.
std::vector<int64_t> MachineIds(const DashboardData& data) {
  std::vector<int64_t> ids;
  for (const DashMachine& m : data.machines) ids.push_back(m.id);
  for (const DashSeries& s : data.series) {
    if (std::find(ids.begin(), ids.end(), s.machine_id) == ids.end()) ids.push_back(s.machine_id);
  }
  return ids;
}

// Training first, then by model, precision and case.
bool OverviewOrder(const DashSeries* a, const DashSeries* b) {
  return std::make_tuple(a->family != "train", a->family, a->model, a->precision, a->case_name,
                         a->id) < std::make_tuple(b->family != "train", b->family, b->model,
                                                  b->precision, b->case_name, b->id);
}

std::string ChangeFigure(const DashChange& c) {
  return absl::StrCat("<span class=\"ratio\">", FormatPercent(c.ratio - 1),
                      "</span> <span class=\"interval\">(99%: ", FormatPercent(c.low - 1), " to ",
                      FormatPercent(c.high - 1), ")</span>");
}

std::string RunRef(int64_t run, const std::string& date, const std::string& commit) {
  if (commit.empty()) return absl::StrCat("run ", run, " (", E(ShortDate(date)), ")");
  return absl::StrCat("run ", run, " (", E(ShortDate(date)), ", <code>", E(commit), "</code>)");
}

std::string EnvironmentDiff(const DashChange& c) {
  if (c.environment_diff.empty()) return "<span class=\"note\">no environment change</span>";
  std::string out = "<ul class=\"env\">";
  for (const auto& [key, value] : c.environment_diff) {
    absl::StrAppend(&out, "<li><code>", E(key), "</code>: ", E(value), "</li>");
  }
  return absl::StrCat(out, "</ul>");
}

std::string OpenChanges(const DashboardData& data) {
  std::vector<std::pair<const DashSeries*, const DashChange*>> open;
  for (const DashSeries& s : data.series) {
    for (const DashChange& c : s.changes) {
      if (c.open) open.emplace_back(&s, &c);
    }
  }
  std::sort(open.begin(), open.end(), [](const auto& a, const auto& b) {
    return std::make_tuple(!a.second->regression, b.second->after_date, a.second->id) <
           std::make_tuple(!b.second->regression, a.second->after_date, b.second->id);
  });
  std::string out =
      absl::StrCat("<section id=\"changes\">\n<h2>Open changes (", open.size(), ")</h2>\n");
  if (open.empty())
    return absl::StrCat(out, "<p class=\"note\">No open changes.</p>\n</section>\n");
  absl::StrAppend(&out,
                  "<table class=\"changes\">\n<thead><tr><th>Machine</th><th>Series</th>"
                  "<th>Change</th><th>Between</th><th>Cause</th><th>Environment</th></tr>"
                  "</thead>\n<tbody>\n");
  for (const auto& [s, c] : open) {
    const std::string kind = c->regression ? "regression" : "improvement";
    absl::StrAppend(&out, "<tr class=\"", kind, "\" data-series=\"", s->id, "\"><td>",
                    E(MachineName(data, s->machine_id)), "</td><td class=\"case\">",
                    SeriesLink(*s, "", absl::StrCat("#change-", c->id), s->case_name), "</td><td>",
                    ChangeFigure(*c), " <span class=\"badge status-", kind, "\">", kind,
                    "</span></td><td>", RunRef(c->before_run, c->before_date, c->before_commit),
                    " to ", RunRef(c->after_run, c->after_date, c->after_commit), "</td><td>",
                    E(c->cause), "</td><td>", EnvironmentDiff(*c), "</td></tr>\n");
  }
  return absl::StrCat(out, "</tbody>\n</table>\n</section>\n");
}

std::string OverviewRow(const DashSeries& s) {
  const Summary sum = Summarize(s);
  return absl::StrCat(
      "<tr class=\"series-row ", StatusClass(sum.status), "\" data-series=\"", s.id, "\"><td>",
      E(s.family), "</td><td>", E(s.model.empty() ? "-" : s.model), "</td><td>", E(s.precision),
      "</td><td class=\"case\">", SeriesLink(s, "", "", s.case_name),
      "</td><td class=\"n\" title=\"", E(sum.latest_date), "\">", FormatValue(sum.latest),
      "</td><td class=\"n\">", FormatValue(s.baseline), "</td><td class=\"n\">",
      FormatPercent(sum.change), "</td><td>", SparklineSvg(s),
      "</td><td class=\"status\"><span class=\"badge ", StatusClass(sum.status), "\" title=\"",
      E(sum.status_text), "\">", E(sum.status_text), "</span></td></tr>\n");
}

std::string MachineFacts(const DashboardData& data, int64_t id) {
  const DashMachine* m = FindMachine(data, id);
  if (m == nullptr) return "";
  std::string out = absl::StrCat("<p class=\"meta\">", m->runs, " runs, the last ",
                                 E(ShortDate(m->last_date)), "</p>\n");
  if (m->identity.empty()) return out;
  absl::StrAppend(&out, "<details><summary>Machine identity</summary><table class=\"identity\">");
  for (const auto& [key, value] : m->identity) {
    absl::StrAppend(&out, "<tr><th>", E(key), "</th><td>", E(value), "</td></tr>");
  }
  return absl::StrCat(out, "</table></details>\n");
}

std::string MachineSection(const DashboardData& data, int64_t id) {
  std::vector<const DashSeries*> rows;
  for (const DashSeries& s : data.series) {
    if (s.machine_id == id) rows.push_back(&s);
  }
  std::sort(rows.begin(), rows.end(), OverviewOrder);
  std::string out =
      absl::StrCat("<section class=\"machine\" id=\"machine-", id, "\" data-machine=\"", id,
                   "\">\n<h2>", E(MachineName(data, id)), "</h2>\n", MachineFacts(data, id));
  absl::StrAppend(&out,
                  "<table class=\"overview\">\n<thead><tr><th>Family</th><th>Model</th>"
                  "<th>Precision</th><th>Case</th><th>Latest</th><th>Baseline</th>"
                  "<th>Change</th><th>Last ",
                  kSparkRuns, " runs</th><th>Status</th></tr></thead>\n<tbody>\n");
  for (const DashSeries* s : rows) absl::StrAppend(&out, OverviewRow(*s));
  return absl::StrCat(out, "</tbody>\n</table>\n</section>\n");
}

// The rest of a training case's name after "train/<model>/<precision>/":
// what tells two machines' runs of a model apart (batch, GPUs, data).
std::string CaseRest(const DashSeries& s) {
  const std::string prefix = absl::StrCat(s.family, "/", s.model, "/", s.precision, "/");
  return absl::StartsWith(s.case_name, prefix) ? s.case_name.substr(prefix.size()) : s.case_name;
}

// The newest series wins a cell that two series of one machine share.
bool Newer(const DashSeries& a, const DashSeries& b) {
  const std::string da = a.points.empty() ? "" : a.points.back().date;
  const std::string db = b.points.empty() ? "" : b.points.back().date;
  return std::tie(da, a.id) > std::tie(db, b.id);
}

// A cell: the series shown and how many the machine has for the model.
struct SideCell {
  const DashSeries* series = nullptr;
  int count = 0;
};
// Model -> machine -> cell.
using SideCells = std::map<std::string, std::map<int64_t, SideCell>>;

std::string SideCellHtml(const SideCell& cell, int64_t machine) {
  if (cell.series == nullptr) {
    return absl::StrCat("<td class=\"n empty\" data-machine=\"", machine, "\">-</td>");
  }
  const DashSeries& s = *cell.series;
  const Summary sum = Summarize(s);
  std::string out = absl::StrCat("<td class=\"n\" data-machine=\"", machine, "\">",
                                 SeriesLink(s, "", "", FormatValue(sum.latest)));
  if (sum.status != "ok") {
    absl::StrAppend(&out, " <span class=\"badge ", StatusClass(sum.status), "\" title=\"",
                    E(sum.status_text), "\">", sum.status, "</span>");
  }
  absl::StrAppend(&out, "<br><span class=\"case-rest\">", E(CaseRest(s)), "</span>");
  if (cell.count > 1) {
    absl::StrAppend(&out, " <span class=\"case-rest\">(newest of ", cell.count, ")</span>");
  }
  return absl::StrCat(out, "</td>");
}

std::string SideTable(const DashboardData& data, const std::string& precision,
                      const SideCells& cells, const std::vector<int64_t>& machines,
                      const std::string& unit) {
  std::string out =
      absl::StrCat("<section class=\"side\">\n<h2>Training, ", E(precision), " (", E(unit),
                   ")</h2>\n<table class=\"side-by-side\">\n<thead><tr>", "<th>Model</th>");
  for (int64_t m : machines) {
    absl::StrAppend(&out, "<th data-machine=\"", m, "\">", E(MachineName(data, m)), "</th>");
  }
  absl::StrAppend(&out, "</tr></thead>\n<tbody>\n");
  for (const auto& [model, by_machine] : cells) {
    std::string ids;
    for (const auto& [m, cell] : by_machine)
      absl::StrAppend(&ids, ids.empty() ? "" : " ", cell.series->id);
    absl::StrAppend(&out, "<tr data-series=\"", ids, "\"><th scope=\"row\">", E(model), "</th>");
    for (int64_t m : machines) {
      auto found = by_machine.find(m);
      absl::StrAppend(&out,
                      SideCellHtml(found == by_machine.end() ? SideCell() : found->second, m));
    }
    absl::StrAppend(&out, "</tr>\n");
  }
  return absl::StrCat(out, "</tbody>\n</table>\n</section>\n");
}

std::string SeriesFacts(const DashboardData& data, const DashSeries& s) {
  const Summary sum = Summarize(s);
  int failed = 0;
  for (const DashPoint& p : s.points) failed += FailedRun(p);
  return absl::StrCat(
      "<dl class=\"facts\">\n<dt>Machine</dt><dd><a href=\"../index.html#machine-", s.machine_id,
      "\">", E(MachineName(data, s.machine_id)), "</a></dd>\n<dt>Figure</dt><dd>", E(s.counter),
      " (", E(s.unit), "), ", s.higher_is_better ? "higher" : "lower", " is better</dd>\n",
      "<dt>Settings</dt><dd>", E(s.settings), "</dd>\n<dt>Baseline</dt><dd>",
      FormatValue(s.baseline),
      " (the median of the first 10 runs since the last annotation)</dd>\n<dt>Latest</dt><dd>",
      FormatValue(sum.latest), " (", FormatPercent(sum.change), " against the baseline) ",
      "<span class=\"badge ", StatusClass(sum.status), "\">", E(sum.status_text),
      "</span></dd>\n<dt>Runs</dt><dd>", s.points.size(), " (", failed, " failed)</dd>\n</dl>\n");
}

std::string Legend() {
  return "<figcaption class=\"legend\"><span class=\"key key-value\"></span>value per run "
         "<span class=\"key key-spread\"></span>repetitions' range "
         "<span class=\"key key-band\"></span>rolling band "
         "<span class=\"key key-baseline\"></span>baseline "
         "<span class=\"key key-change\"></span>change "
         "<span class=\"key key-annotation\"></span>annotation "
         "<span class=\"key-failed\">&#215;</span> failed run</figcaption>\n";
}

std::string SeriesChanges(const DashSeries& s) {
  std::string out =
      absl::StrCat("<section id=\"changes\">\n<h2>Changes (", s.changes.size(), ")</h2>\n");
  if (s.changes.empty()) absl::StrAppend(&out, "<p class=\"note\">No changes found.</p>\n");
  for (const DashChange& c : s.changes) {
    const std::string kind = c.regression ? "regression" : "improvement";
    absl::StrAppend(
        &out, "<article class=\"change-detail ", kind, "\" id=\"change-", c.id, "\">\n<h3>",
        ChangeFigure(c), " <span class=\"badge status-", kind, "\">", kind,
        "</span> <span class=\"badge\">", c.open ? "open" : "annotated",
        "</span></h3>\n<p>Between ", RunRef(c.before_run, c.before_date, c.before_commit), " and ",
        RunRef(c.after_run, c.after_date, c.after_commit), "</p>\n", "<p class=\"cause\">",
        E(c.cause), "</p>\n<div>Environment: ", EnvironmentDiff(c),
        "</div>\n<p class=\"note\">Found by ", E(c.method), "</p>\n</article>\n");
  }
  return absl::StrCat(out, "</section>\n");
}

std::string SeriesAnnotations(const DashSeries& s) {
  std::string out = "<section id=\"annotations\">\n<h2>Annotations</h2>\n";
  if (s.annotations.empty()) return absl::StrCat(out, "<p class=\"note\">None.</p>\n</section>\n");
  absl::StrAppend(&out, "<ul class=\"annotations\">\n");
  for (size_t a = 0; a < s.annotations.size(); ++a) {
    const DashAnnotation& n = s.annotations[a];
    absl::StrAppend(&out, "<li id=\"annotation-", a + 1, "\"><b>A", a + 1, "</b> run ", n.run_id,
                    " (", E(ShortDate(n.date)), "): ", E(n.text), "</li>\n");
  }
  return absl::StrCat(out, "</ul>\n</section>\n");
}

// What the runs table's last column marks at point i.
std::string RunMarks(const DashSeries& s, int i) {
  std::string marks;
  for (const DashChange& c : s.changes) {
    if (PointIndex(s, c.after_run) == i) {
      absl::StrAppend(&marks, "<a href=\"#change-", c.id, "\">change ", FormatPercent(c.ratio - 1),
                      "</a> ");
    }
  }
  for (size_t a = 0; a < s.annotations.size(); ++a) {
    if (PointIndex(s, s.annotations[a].run_id) == i) {
      absl::StrAppend(&marks, "<a href=\"#annotation-", a + 1, "\">A", a + 1, "</a> ");
    }
  }
  return marks;
}

std::string RunRow(const DashSeries& s, int i) {
  const DashPoint& p = s.points[i];
  const bool failed = FailedRun(p);
  const double spread = std::isfinite(p.value) && p.value != 0 ? (p.max - p.min) / p.value : NAN;
  return absl::StrCat(
      "<tr data-index=\"", i, "\"", failed ? " class=\"failed\"" : "", "><td class=\"n\">", i + 1,
      "</td><td class=\"n\">", p.run_id, "</td><td>", E(ShortDate(p.date)), "</td><td><code>",
      E(p.commit), "</code></td><td class=\"n\">", failed ? "-" : FormatValue(p.value),
      "</td><td class=\"n\">", failed ? "-" : FormatValue(p.best), "</td><td class=\"n\">",
      failed
          ? "-"
          : absl::StrCat(FormatValue(p.min), " to ", FormatValue(p.max),
                         std::isfinite(spread) ? absl::StrFormat(" (%.1f%%)", spread * 100) : ""),
      "</td><td class=\"n\">", p.repetitions, "</td><td class=\"n\">",
      std::isfinite(p.band_low)
          ? absl::StrCat(FormatValue(p.band_low), " to ", FormatValue(p.band_high))
          : "-",
      "</td><td class=\"status\">", E(p.status), "</td><td>", RunMarks(s, i), "</td></tr>\n");
}

std::string SeriesRuns(const DashSeries& s) {
  std::string out =
      "<section id=\"runs\">\n<h2>Runs</h2>\n<table class=\"runs\">\n<thead><tr><th>#</th>"
      "<th>Run</th><th>Date</th><th>Commit</th><th>Value</th><th>Best</th>"
      "<th>Repetitions' range</th><th>Reps</th><th>Band</th><th>Status</th><th>Marks</th></tr>"
      "</thead>\n<tbody>\n";
  for (size_t i = 0; i < s.points.size(); ++i) absl::StrAppend(&out, RunRow(s, i));
  return absl::StrCat(out, "</tbody>\n</table>\n</section>\n");
}

}  // namespace

std::string OverviewPage(const DashboardData& data) {
  std::string out =
      absl::StrCat(Head("cnnbench results history", "", "overview"),
                   Header(data, "cnnbench results history"), Filters(), OpenChanges(data));
  for (int64_t id : MachineIds(data)) absl::StrAppend(&out, MachineSection(data, id));
  return absl::StrCat(out, Foot({"overview.js", "dashboard.js"}));
}

std::string MachinesPage(const DashboardData& data) {
  std::map<std::string, SideCells> by_precision;
  std::map<std::string, std::string> units;
  std::set<int64_t> with_rows;
  for (const DashSeries& s : data.series) {
    if (s.family != "train" || s.model.empty()) continue;
    SideCell& cell = by_precision[s.precision][s.model][s.machine_id];
    if (cell.series == nullptr || Newer(s, *cell.series)) cell.series = &s;
    ++cell.count;
    units.emplace(s.precision, s.unit);
    with_rows.insert(s.machine_id);
  }
  std::vector<int64_t> machines;
  for (int64_t id : MachineIds(data)) {
    if (with_rows.count(id)) machines.push_back(id);
  }
  std::string out = absl::StrCat(Head("cnnbench: machines side by side", "", "machines"),
                                 Header(data, "Machines side by side"), Filters(),
                                 "<p class=\"note\">Each cell is the latest value of the "
                                 "machine's training series; a link to its page.</p>\n");
  if (by_precision.empty()) absl::StrAppend(&out, "<p class=\"note\">No training series.</p>\n");
  // fp32 first: the figure most published tables give.
  std::vector<std::string> precisions;
  for (const auto& [precision, cells] : by_precision) precisions.push_back(precision);
  std::stable_partition(precisions.begin(), precisions.end(),
                        [](const std::string& p) { return p == "fp32"; });
  for (const std::string& precision : precisions) {
    absl::StrAppend(
        &out, SideTable(data, precision, by_precision[precision], machines, units[precision]));
  }
  return absl::StrCat(out, Foot({"overview.js", "dashboard.js"}));
}

std::string SeriesPage(const DashboardData& data, const DashSeries& s) {
  return absl::StrCat(
      Head(absl::StrCat(s.case_name, " on ", MachineName(data, s.machine_id)), "../", "series"),
      "<header>\n<h1 class=\"case\">", E(s.case_name), "</h1>\n", Nav("../"), "</header>\n",
      SeriesFacts(data, s), "<figure class=\"series-chart\">\n", SeriesChartSvg(s), "\n", Legend(),
      "</figure>\n<div id=\"readout\" class=\"readout\" aria-live=\"polite\">Point at a "
      "run in the chart or the table for its details.</div>\n",
      SeriesChanges(s), SeriesAnnotations(s), SeriesRuns(s),
      Foot({absl::StrCat(s.id, ".js"), "../dashboard.js"}));
}

}  // namespace cnnbench::history::dashboard
