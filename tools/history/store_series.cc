#include "tools/history/store_series.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace cnnbench::history::internal {

absl::StatusOr<std::vector<SeriesRow>> LoadSeries(Db& db, int64_t machine_id, int64_t run_id) {
  absl::StatusOr<std::vector<Row>> rows = db.Query(
      "SELECT s.id, s.machine_id, m.platform, c.name, c.family, c.model, c.precision, s.counter, "
      "s.settings, s.higher_is_better FROM series s JOIN cases c ON c.id = s.case_id JOIN "
      "machines m ON m.id = s.machine_id WHERE (? = 0 OR s.machine_id = ?) AND (? = 0 OR s.id IN "
      "(SELECT series_id FROM results WHERE run_id = ?)) ORDER BY m.platform, m.id, c.name, s.id",
      {Value::Int(machine_id), Value::Int(machine_id), Value::Int(run_id), Value::Int(run_id)});
  if (!rows.ok()) return rows.status();
  std::vector<SeriesRow> out;
  for (const Row& r : *rows) {
    SeriesRow s;
    s.id = IntAt(r, 0);
    s.machine_id = IntAt(r, 1);
    s.platform = TextAt(r, 2);
    s.case_name = TextAt(r, 3);
    s.family = TextAt(r, 4);
    s.model = TextAt(r, 5);
    s.precision = TextAt(r, 6);
    s.counter = TextAt(r, 7);
    s.settings = TextAt(r, 8);
    s.higher = IntAt(r, 9) != 0;
    out.push_back(std::move(s));
  }
  // In byte order, the same on both databases (PostgreSQL's ORDER BY
  // follows the server's locale).
  std::stable_sort(out.begin(), out.end(), [](const SeriesRow& a, const SeriesRow& b) {
    return std::tie(a.platform, a.machine_id, a.case_name, a.id) <
           std::tie(b.platform, b.machine_id, b.case_name, b.id);
  });
  return out;
}

// A run of a series from the columns run_id, unix_time, date, git_commit,
// dirty, status, message, value, best, min_value, max_value, repetitions,
// pruned, starting at `at`.
PointRow PointFromRow(const Row& r, size_t at) {
  PointRow p;
  p.run_id = IntAt(r, at);
  p.unix_time = IntAt(r, at + 1);
  p.date = TextAt(r, at + 2);
  p.commit = TextAt(r, at + 3);
  p.dirty = IntAt(r, at + 4) != 0;
  p.status = TextAt(r, at + 5);
  p.message = TextAt(r, at + 6);
  p.value = RealAt(r, at + 7);
  p.best = RealAt(r, at + 8);
  p.min = RealAt(r, at + 9);
  p.max = RealAt(r, at + 10);
  p.repetitions = static_cast<int>(IntAt(r, at + 11));
  p.pruned = IntAt(r, at + 12) != 0;
  return p;
}

// The series' runs in order (the last `last` of them when > 0), with the
// repetitions' values of its counter where they are kept.
absl::StatusOr<std::vector<PointRow>> LoadPoints(Db& db, int64_t series_id, int last) {
  absl::StatusOr<std::vector<Row>> rows = db.Query(
      "SELECT r.run_id, u.unix_time, u.date, u.git_commit, u.dirty, r.status, r.message, r.value, "
      "r.best, r.min_value, r.max_value, r.repetitions, r.pruned FROM results r JOIN runs u ON "
      "u.id = r.run_id WHERE r.series_id = ? ORDER BY u.unix_time DESC, u.id DESC LIMIT ?",
      {Value::Int(series_id), Value::Int(last > 0 ? last : std::numeric_limits<int64_t>::max())});
  if (!rows.ok()) return rows.status();
  std::reverse(rows->begin(), rows->end());  // oldest first
  std::vector<PointRow> points;
  const bool skip = last > 0;  // some runs may be left out
  std::map<int64_t, size_t> index;
  for (size_t i = 0; i < rows->size(); ++i) {
    PointRow p = PointFromRow((*rows)[i], 0);
    index[p.run_id] = points.size();
    points.push_back(std::move(p));
  }
  if (points.empty()) return points;
  // Only the repetitions of the runs kept (the index is on series, run).
  int64_t first_run = points.front().run_id;
  for (const PointRow& p : points) first_run = std::min(first_run, p.run_id);
  absl::StatusOr<std::vector<Row>> reps = db.Query(
      "SELECT run_id, value FROM repetitions WHERE series_id = ? AND run_id >= ? AND kind = "
      "'iteration' AND value IS NOT NULL ORDER BY run_id, repetition",
      {Value::Int(series_id), Value::Int(skip ? first_run : 0)});
  if (!reps.ok()) return reps.status();
  for (const Row& r : *reps) {
    auto it = index.find(IntAt(r, 0));
    if (it == index.end()) continue;
    const double v = RealAt(r, 1);
    if (std::isfinite(v) && v > 0) points[it->second].values.push_back(v);
  }
  // Pruned runs, and runs that wrote only a mean: their summary stands in.
  for (PointRow& p : points) {
    if (p.values.empty() && p.status == "ok" && std::isfinite(p.best) && p.best > 0)
      p.values.push_back(p.best);
  }
  return points;
}

absl::StatusOr<std::map<int64_t, std::vector<PointRow>>> LoadRecentPoints(Db& db, int64_t run_id,
                                                                          int runs) {
  std::map<int64_t, std::vector<PointRow>> out;
  absl::StatusOr<std::vector<Row>> run =
      db.Query("SELECT machine_id, unix_time FROM runs WHERE id = ?", {Value::Int(run_id)});
  if (!run.ok()) return run.status();
  if (run->empty()) return out;
  const int64_t machine = IntAt(run->front(), 0);
  const int64_t until = IntAt(run->front(), 1);
  absl::StatusOr<std::vector<Row>> oldest = db.Query(
      "SELECT unix_time FROM runs WHERE machine_id = ? AND unix_time <= ? ORDER BY unix_time "
      "DESC, id DESC LIMIT 1 OFFSET ?",
      {Value::Int(machine), Value::Int(until), Value::Int(std::max(0, runs - 1))});
  if (!oldest.ok()) return oldest.status();
  const int64_t since = oldest->empty() ? std::numeric_limits<int64_t>::min() : IntAt(oldest->front(), 0);
  const std::vector<Value> params = {Value::Int(machine), Value::Int(since), Value::Int(run_id)};
  absl::StatusOr<std::vector<Row>> rows = db.Query(
      "SELECT r.series_id, r.run_id, u.unix_time, u.date, u.git_commit, u.dirty, r.status, "
      "r.message, r.value, r.best, r.min_value, r.max_value, r.repetitions, r.pruned FROM results "
      "r JOIN runs u ON u.id = r.run_id WHERE u.machine_id = ? AND u.unix_time >= ? AND "
      "r.series_id IN (SELECT series_id FROM results WHERE run_id = ?) ORDER BY r.series_id, "
      "u.unix_time, u.id",
      params);
  if (!rows.ok()) return rows.status();
  std::map<std::pair<int64_t, int64_t>, PointRow*> index;  // (series, run) -> point
  for (const Row& r : *rows) out[IntAt(r, 0)].push_back(PointFromRow(r, 1));
  for (auto& [series, points] : out)
    for (PointRow& p : points) index[{series, p.run_id}] = &p;
  // Driven by the runs (the repetitions' key starts with the run): by the
  // series, SQLite would read every repetition each series ever had.
  absl::StatusOr<std::vector<Row>> reps = db.Query(
      "SELECT p.series_id, p.run_id, p.value FROM repetitions p WHERE p.run_id IN (SELECT id "
      "FROM runs WHERE machine_id = ? AND unix_time >= ?) AND p.series_id IN (SELECT series_id "
      "FROM results WHERE run_id = ?) AND p.kind = 'iteration' AND p.value IS NOT NULL ORDER BY "
      "p.run_id, p.repetition",
      params);
  if (!reps.ok()) return reps.status();
  for (const Row& r : *reps) {
    auto it = index.find({IntAt(r, 0), IntAt(r, 1)});
    const double v = RealAt(r, 2);
    if (it != index.end() && std::isfinite(v) && v > 0) it->second->values.push_back(v);
  }
  for (auto& [series, points] : out)
    for (PointRow& p : points)
      if (p.values.empty() && p.status == "ok" && std::isfinite(p.best) && p.best > 0)
        p.values.push_back(p.best);
  return out;
}

absl::StatusOr<std::vector<AnnotationRow>> LoadAnnotations(Db& db) {
  absl::StatusOr<std::vector<Row>> rows = db.Query(
      "SELECT a.id, a.machine_id, a.series_id, a.run_id, u.unix_time, u.date, a.note FROM "
      "annotations a JOIN runs u ON u.id = a.run_id ORDER BY u.unix_time, a.id");
  if (!rows.ok()) return rows.status();
  std::vector<AnnotationRow> out;
  for (const Row& r : *rows) {
    AnnotationRow a;
    a.id = IntAt(r, 0);
    a.machine_id = IntAt(r, 1);
    a.series_id = IntAt(r, 2);
    a.run_id = IntAt(r, 3);
    a.unix_time = IntAt(r, 4);
    a.date = TextAt(r, 5);
    a.note = TextAt(r, 6);
    out.push_back(std::move(a));
  }
  return out;
}

// The annotations that apply to `s`.
std::vector<AnnotationRow> AnnotationsOf(const std::vector<AnnotationRow>& all,
                                         const SeriesRow& s) {
  std::vector<AnnotationRow> out;
  for (const AnnotationRow& a : all)
    if (a.machine_id == s.machine_id && (a.series_id == 0 || a.series_id == s.id))
      out.push_back(a);
  return out;
}

std::vector<SeriesPoint> ToSeriesPoints(const std::vector<PointRow>& points,
                                        const std::vector<AnnotationRow>& annotations) {
  std::vector<SeriesPoint> out;
  out.reserve(points.size());
  size_t next = 0;  // the first annotation not yet placed
  for (const PointRow& p : points) {
    SeriesPoint sp;
    sp.run_id = p.run_id;
    if (p.status == "ok") sp.values = p.values;
    // An annotation restarts the window at the first run at or after it.
    while (next < annotations.size() &&
           (annotations[next].unix_time < p.unix_time ||
            (annotations[next].unix_time == p.unix_time && annotations[next].run_id <= p.run_id))) {
      sp.restart = true;
      ++next;
    }
    out.push_back(std::move(sp));
  }
  return out;
}

std::string ShortCommit(const std::string& commit) { return commit.substr(0, 7); }

// Explains a change: the environment between its two runs, and the code.
StoredChange ChangeBetween(const SeriesRow& s, const PointRow& before, const PointRow& after) {
  StoredChange c;
  c.series_id = s.id;
  c.machine_id = s.machine_id;
  c.platform = s.platform;
  c.case_name = s.case_name;
  c.counter = s.counter;
  c.higher_is_better = s.higher;
  c.before_run = before.run_id;
  c.after_run = after.run_id;
  c.before_date = before.date;
  c.after_date = after.date;
  c.before_commit = before.commit + (before.dirty ? "+dirty" : "");
  c.after_commit = after.commit + (after.dirty ? "+dirty" : "");
  return c;
}

std::optional<int> CauseFinder::CountCommitsBetween(const std::string& a, const std::string& b) {
  return CountCommitsInRepo(repo_dir_, a, b);
}

// Detection over one series, as StoredChanges.
absl::StatusOr<std::vector<StoredChange>> ChangesOf(const SeriesRow& s,
                                                    const std::vector<PointRow>& points,
                                                    const std::vector<AnnotationRow>& annotations,
                                                    const DetectParams& params,
                                                    CauseFinder& causes) {
  std::vector<StoredChange> out;
  const std::vector<SeriesPoint> sp = ToSeriesPoints(points, annotations);
  for (const DetectedChange& d : DetectChanges(sp, s.higher, params)) {
    if (d.before < 0 || d.after < 0 || static_cast<size_t>(d.after) >= points.size() ||
        d.before >= d.after)
      continue;
    const PointRow& before = points[d.before];
    const PointRow& after = points[d.after];
    StoredChange c = ChangeBetween(s, before, after);
    c.ratio = d.ratio;
    c.low = d.low;
    c.high = d.high;
    c.z = d.z;
    c.regression = s.higher ? d.ratio < 1 : d.ratio > 1;
    c.method = d.method;
    if (absl::Status e = causes.Explain(before, after, c); !e.ok()) return e;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace cnnbench::history::internal
