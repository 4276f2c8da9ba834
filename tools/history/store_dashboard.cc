// The dashboard's data and the runs listing, read from the store.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "tools/history/store.h"
#include "tools/history/store_series.h"

namespace cnnbench::history {

using Json = nlohmann::json;
using namespace internal;  // NOLINT: the readers' shared parts

absl::StatusOr<DashboardData> Store::Dashboard(const DetectParams& params) {
  Db& db = *db_;
  DashboardData data;
  data.store = db.where();
  data.generated = absl::FormatTime("%Y-%m-%d %H:%M UTC", absl::Now(), absl::UTCTimeZone());
  absl::StatusOr<std::vector<Row>> machines = db.Query(
      "SELECT m.id, m.platform, m.identity, count(r.id), max(r.date) FROM machines m LEFT JOIN "
      "runs r ON r.machine_id = m.id GROUP BY m.id, m.platform, m.identity ORDER BY m.platform, "
      "m.id");
  if (!machines.ok()) return machines.status();
  for (const Row& r : *machines) {
    DashMachine m;
    m.id = IntAt(r, 0);
    m.platform = TextAt(r, 1);
    Json identity = Json::parse(TextAt(r, 2), nullptr, false);
    if (identity.is_object())
      for (auto it = identity.begin(); it != identity.end(); ++it)
        m.identity.push_back({it.key(), it->is_string() ? it->get<std::string>() : it->dump()});
    m.runs = static_cast<int>(IntAt(r, 3));
    m.last_date = TextAt(r, 4);
    data.machines.push_back(std::move(m));
  }
  std::stable_sort(data.machines.begin(), data.machines.end(),
                   [](const DashMachine& a, const DashMachine& b) {
                     return std::tie(a.platform, a.id) < std::tie(b.platform, b.id);
                   });
  absl::StatusOr<std::vector<SeriesRow>> series = LoadSeries(db, 0, 0);
  if (!series.ok()) return series.status();
  absl::StatusOr<std::vector<AnnotationRow>> annotations = LoadAnnotations(db);
  if (!annotations.ok()) return annotations.status();
  CauseFinder causes(db, ".");
  int64_t change_number = 0;  // the site's changes numbered in order
  for (const SeriesRow& s : *series) {
    absl::StatusOr<std::vector<PointRow>> points = LoadPoints(db, s.id, 0);
    if (!points.ok()) return points.status();
    const std::vector<AnnotationRow> notes = AnnotationsOf(*annotations, s);
    DashSeries d;
    d.id = s.id;
    d.machine_id = s.machine_id;
    d.case_name = s.case_name;
    d.family = s.family;
    d.model = s.model;
    d.precision = s.precision;
    d.counter = s.counter;
    d.unit = s.counter == "images_per_second" ? "images/s"
             : s.counter == "flops"           ? "FLOP/s"
             : s.counter == "seconds"         ? "s"
             : (s.counter == "busbw" || s.counter == "algbw" || s.counter == "bytes_per_second")
                 ? "B/s"
                 : s.counter;
    d.higher_is_better = s.higher;
    Json settings = Json::parse(s.settings, nullptr, false);
    std::vector<std::string> parts;
    if (settings.is_object())
      for (auto it = settings.begin(); it != settings.end(); ++it)
        parts.push_back(
            absl::StrCat(it.key(), "=", it->is_string() ? it->get<std::string>() : it->dump()));
    d.settings = absl::StrJoin(parts, ", ");
    const std::vector<SeriesPoint> sp = ToSeriesPoints(*points, notes);
    absl::StatusOr<std::vector<StoredChange>> changes =
        ChangesOf(s, *points, notes, params, causes);
    if (!changes.ok()) return changes.status();
    // The band drawn restarts at each change found, as at an annotation: a
    // window reaching across a step would span both levels.
    std::vector<SeriesPoint> banded = sp;
    for (const StoredChange& c : *changes)
      for (size_t i = 0; i < banded.size(); ++i)
        if (banded[i].run_id == c.after_run) banded[i].restart = true;
    const std::vector<Band> band = RollingBand(banded, s.higher, params);
    // The baseline: the median of the first runs (up to 10) since the last restart.
    size_t start = 0;
    for (size_t i = 0; i < sp.size(); ++i)
      if (sp[i].restart) start = i;
    std::vector<double> first;
    for (size_t i = start; i < points->size() && first.size() < 10; ++i)
      if ((*points)[i].status == "ok" && std::isfinite((*points)[i].value))
        first.push_back((*points)[i].value);
    if (!first.empty()) {
      std::sort(first.begin(), first.end());
      const size_t n = first.size();
      d.baseline = n % 2 ? first[n / 2] : (first[n / 2 - 1] + first[n / 2]) / 2;
    } else {
      d.baseline = kNaN;
    }
    for (size_t i = 0; i < points->size(); ++i) {
      const PointRow& p = (*points)[i];
      DashPoint dp;
      dp.run_id = p.run_id;
      dp.date = p.date;
      dp.commit = ShortCommit(p.commit) + (p.dirty ? "+dirty" : "");
      const bool ok = p.status == "ok";
      dp.value = ok ? p.value : kNaN;
      dp.best = ok ? p.best : kNaN;
      dp.min = ok ? p.min : kNaN;
      dp.max = ok ? p.max : kNaN;
      dp.repetitions = p.repetitions;
      if (i < band.size()) {
        dp.band_center = band[i].center;
        dp.band_low = band[i].low;
        dp.band_high = band[i].high;
      } else {
        dp.band_center = dp.band_low = dp.band_high = kNaN;
      }
      dp.status = ok ? "ok"
                     : (p.status == "oom" ? "OOM" : absl::StrCat("error: ", p.message));
      d.points.push_back(std::move(dp));
    }
    for (const StoredChange& c : *changes) {
      DashChange dc;
      dc.id = ++change_number;
      dc.series_id = s.id;
      dc.before_run = c.before_run;
      dc.after_run = c.after_run;
      dc.before_date = c.before_date;
      dc.after_date = c.after_date;
      dc.before_commit = ShortCommit(c.before_commit);
      dc.after_commit = ShortCommit(c.after_commit);
      dc.ratio = c.ratio;
      dc.low = c.low;
      dc.high = c.high;
      dc.regression = c.regression;
      dc.open = true;
      dc.cause = c.cause;
      dc.environment_diff = c.environment_diff;
      dc.method = c.method;
      d.changes.push_back(std::move(dc));
    }
    for (const AnnotationRow& a : notes) d.annotations.push_back({a.run_id, a.date, a.note});
    data.series.push_back(std::move(d));
  }
  return data;
}

absl::StatusOr<std::vector<RunListing>> Store::Runs(int64_t machine_id) {
  absl::StatusOr<std::vector<Row>> rows = db_->Query(
      "SELECT r.id, m.platform, r.date, r.git_commit, r.dirty, r.source, r.interrupted, r.cases "
      "FROM runs r JOIN machines m ON m.id = r.machine_id WHERE (? = 0 OR r.machine_id = ?) "
      "ORDER BY r.unix_time, r.id",
      {Value::Int(machine_id), Value::Int(machine_id)});
  if (!rows.ok()) return rows.status();
  std::vector<RunListing> out;
  for (const Row& r : *rows) {
    RunListing l;
    l.id = IntAt(r, 0);
    l.platform = TextAt(r, 1);
    l.date = TextAt(r, 2);
    l.commit = TextAt(r, 3) + (IntAt(r, 4) ? "+dirty" : "");
    l.source = TextAt(r, 5);
    l.interrupted = TextAt(r, 6);
    l.cases = static_cast<int>(IntAt(r, 7));
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace cnnbench::history
