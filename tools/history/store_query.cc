// The store's readers: changes over the history, annotations, pruning and
// the dashboard's data.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "tools/history/store.h"

namespace cnnbench::history {
namespace {

using Json = nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct SeriesRow {
  int64_t id = 0, machine_id = 0;
  std::string platform, case_name, family, model, precision, counter, settings;
  bool higher = true;
};

struct PointRow {
  int64_t run_id = 0, unix_time = 0;
  std::string date, commit;
  bool dirty = false;
  std::string status, message;
  double value = kNaN, best = kNaN, min = kNaN, max = kNaN;
  int repetitions = 0;
  bool pruned = false;
  std::vector<double> values;
};

struct AnnotationRow {
  int64_t id = 0, machine_id = 0, series_id = 0, run_id = 0, unix_time = 0;
  std::string date, note;
};

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
  return out;
}

// The series' runs in order (the last `last` of them when > 0), with the
// repetitions' values of its counter where they are kept.
absl::StatusOr<std::vector<PointRow>> LoadPoints(Db& db, int64_t series_id, int last) {
  absl::StatusOr<std::vector<Row>> rows = db.Query(
      "SELECT r.run_id, u.unix_time, u.date, u.git_commit, u.dirty, r.status, r.message, r.value, "
      "r.best, r.min_value, r.max_value, r.repetitions, r.pruned FROM results r JOIN runs u ON "
      "u.id = r.run_id WHERE r.series_id = ? ORDER BY u.unix_time, u.id",
      {Value::Int(series_id)});
  if (!rows.ok()) return rows.status();
  std::vector<PointRow> points;
  const size_t skip = last > 0 && rows->size() > static_cast<size_t>(last)
                          ? rows->size() - static_cast<size_t>(last)
                          : 0;
  std::map<int64_t, size_t> index;
  for (size_t i = skip; i < rows->size(); ++i) {
    const Row& r = (*rows)[i];
    PointRow p;
    p.run_id = IntAt(r, 0);
    p.unix_time = IntAt(r, 1);
    p.date = TextAt(r, 2);
    p.commit = TextAt(r, 3);
    p.dirty = IntAt(r, 4) != 0;
    p.status = TextAt(r, 5);
    p.message = TextAt(r, 6);
    p.value = RealAt(r, 7);
    p.best = RealAt(r, 8);
    p.min = RealAt(r, 9);
    p.max = RealAt(r, 10);
    p.repetitions = static_cast<int>(IntAt(r, 11));
    p.pruned = IntAt(r, 12) != 0;
    index[p.run_id] = points.size();
    points.push_back(std::move(p));
  }
  if (points.empty()) return points;
  absl::StatusOr<std::vector<Row>> reps = db.Query(
      "SELECT run_id, value FROM repetitions WHERE series_id = ? AND kind = 'iteration' AND "
      "value IS NOT NULL AND run_id >= ? ORDER BY run_id, repetition",
      {Value::Int(series_id), Value::Int(0)});
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
class CauseFinder {
 public:
  CauseFinder(Db& db, std::string repo_dir) : db_(db), repo_dir_(std::move(repo_dir)) {}

  absl::Status Explain(const PointRow& before, const PointRow& after, StoredChange& change) {
    absl::StatusOr<const std::map<std::string, std::string>*> a = Environment(before.run_id);
    if (!a.ok()) return a.status();
    absl::StatusOr<const std::map<std::string, std::string>*> b = Environment(after.run_id);
    if (!b.ok()) return b.status();
    std::set<std::string> keys;
    for (const auto& [k, v] : **a) keys.insert(k);
    for (const auto& [k, v] : **b) keys.insert(k);
    std::vector<std::string> parts;
    for (const std::string& k : keys) {
      auto x = (*a)->find(k);
      auto y = (*b)->find(k);
      const std::string from = x != (*a)->end() ? x->second : "(not recorded)";
      const std::string to = y != (*b)->end() ? y->second : "(not recorded)";
      if (from == to) continue;
      change.environment_diff.push_back({k, absl::StrCat(from, " \u2192 ", to)});
      parts.push_back(absl::StrCat(EnvironmentKeyName(k), " ", from, " \u2192 ", to));
    }
    std::string code;
    if (before.commit.empty() || after.commit.empty()) {
      code = "commit not recorded";
    } else if (before.commit == after.commit) {
      code = "same commit";
    } else {
      const std::string key = absl::StrCat(before.commit, "..", after.commit);
      auto it = counted_.find(key);
      if (it == counted_.end())
        it = counted_.emplace(key, CountCommitsBetween(before.commit, after.commit)).first;
      const std::string range =
          absl::StrCat(ShortCommit(before.commit), "..", ShortCommit(after.commit));
      code = it->second ? absl::StrCat(*it->second, " commit", *it->second == 1 ? "" : "s", " (",
                                       range, ")")
                        : absl::StrCat("commit ", range);
    }
    if (before.dirty || after.dirty)
      absl::StrAppend(&code, ", uncommitted changes in ",
                      before.dirty && after.dirty ? "both runs"
                      : before.dirty              ? "the run before"
                                                  : "the run after");
    change.cause = parts.empty() ? absl::StrCat(code, ", no environment change")
                                 : absl::StrCat(absl::StrJoin(parts, ", "), " between these runs; ",
                                                code);
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<const std::map<std::string, std::string>*> Environment(int64_t run) {
    auto it = environments_.find(run);
    if (it != environments_.end()) return &it->second;
    absl::StatusOr<std::vector<Row>> rows = db_.Query(
        "SELECT key, value FROM run_context WHERE run_id = ? AND key_class = 'environment'",
        {Value::Int(run)});
    if (!rows.ok()) return rows.status();
    std::map<std::string, std::string> env;
    for (const Row& r : *rows) env[TextAt(r, 0)] = TextAt(r, 1);
    return &environments_.emplace(run, std::move(env)).first->second;
  }
  std::optional<int> CountCommitsBetween(const std::string& a, const std::string& b);

  Db& db_;
  std::string repo_dir_;
  std::map<int64_t, std::map<std::string, std::string>> environments_;
  std::map<std::string, std::optional<int>> counted_;
};

}  // namespace

// Defined in store.cc.
std::optional<int> CountCommitsInRepo(const std::string& dir, const std::string& a,
                                      const std::string& b);

namespace {
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

Json DiffJson(const std::vector<std::pair<std::string, std::string>>& diff) {
  Json j = Json::object();
  for (const auto& [k, v] : diff) j[k] = v;
  return j;
}

}  // namespace

absl::StatusOr<std::vector<StoredChange>> Store::FindChanges(const ChangeQuery& query) {
  Db& db = *db_;
  absl::StatusOr<std::vector<SeriesRow>> series = LoadSeries(db, query.machine_id, query.run_id);
  if (!series.ok()) return series.status();
  absl::StatusOr<std::vector<AnnotationRow>> annotations = LoadAnnotations(db);
  if (!annotations.ok()) return annotations.status();
  CauseFinder causes(db, query.repo_dir);
  // At a run's end only its own changes are asked for: the window and a
  // margin before it are enough.
  const int last = query.run_id != 0 ? query.params.window + 20 : 0;
  std::vector<StoredChange> found;
  std::map<int64_t, std::vector<StoredChange>> per_series;
  const int segment = std::max(1, query.params.min_segment);
  for (const SeriesRow& s : *series) {
    absl::StatusOr<std::vector<PointRow>> points = LoadPoints(db, s.id, last);
    if (!points.ok()) return points.status();
    absl::StatusOr<std::vector<StoredChange>> changes =
        ChangesOf(s, *points, AnnotationsOf(*annotations, s), query.params, causes);
    if (!changes.ok()) return changes.status();
    if (query.run_id != 0) {
      // The ones this run confirms: their new level's first runs hold it,
      // and they were not stored before.
      std::map<int64_t, size_t> index;
      for (size_t i = 0; i < points->size(); ++i) index[(*points)[i].run_id] = i;
      const size_t at = index.count(query.run_id) ? index[query.run_id] : points->size();
      std::vector<StoredChange> confirmed;
      for (StoredChange& c : *changes) {
        const size_t first = index[c.after_run];
        if (at >= points->size() || first > at || at - first >= static_cast<size_t>(segment))
          continue;
        absl::StatusOr<std::vector<Row>> stored = db.Query(
            "SELECT count(*) FROM changes WHERE series_id = ? AND after_run_id = ?",
            {Value::Int(c.series_id), Value::Int(c.after_run)});
        if (!stored.ok()) return stored.status();
        if (!stored->empty() && IntAt(stored->front(), 0) > 0) continue;
        confirmed.push_back(std::move(c));
      }
      *changes = std::move(confirmed);
    }
    per_series[s.id] = *std::move(changes);
  }
  // Kept: a whole-history pass replaces each series' changes; a run's pass
  // adds the ones it started.
  const std::string now = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
  absl::Status tx = db.Begin();
  if (!tx.ok()) return tx;
  absl::Status status = absl::OkStatus();
  for (auto& [series_id, changes] : per_series) {
    if (query.run_id == 0 && status.ok())
      status = db.Exec("DELETE FROM changes WHERE series_id = ?", {Value::Int(series_id)});
    for (StoredChange& c : changes) {
      if (status.ok()) {
        absl::StatusOr<std::vector<Row>> id = db.Query(
            "INSERT INTO changes (series_id, before_run_id, after_run_id, ratio, low, high, z, "
            "regression, method, cause, environment_diff, found_at) VALUES (?, ?, ?, ?, ?, ?, ?, "
            "?, ?, ?, ?, ?) ON CONFLICT (series_id, after_run_id) DO UPDATE SET before_run_id = "
            "excluded.before_run_id, ratio = excluded.ratio, low = excluded.low, high = "
            "excluded.high, z = excluded.z, regression = excluded.regression, method = "
            "excluded.method, cause = excluded.cause, environment_diff = "
            "excluded.environment_diff RETURNING id",
            {Value::Int(c.series_id), Value::Int(c.before_run), Value::Int(c.after_run),
             Value::Real(c.ratio), Value::Real(c.low), Value::Real(c.high), Value::Real(c.z),
             Value::Int(c.regression ? 1 : 0), Value::Text(c.method), Value::Text(c.cause),
             Value::Text(DiffJson(c.environment_diff).dump()), Value::Text(now)});
        if (!id.ok()) {
          status = id.status();
        } else if (!id->empty()) {
          c.id = IntAt(id->front(), 0);
        }
      }
      found.push_back(c);
    }
  }
  if (!status.ok()) {
    db.Rollback().IgnoreError();
    return status;
  }
  if (absl::Status s = db.Commit(); !s.ok()) return s;
  return found;
}

absl::StatusOr<std::vector<StoredChange>> Store::Departures(int64_t run_id,
                                                           const DetectParams& params) {
  Db& db = *db_;
  absl::StatusOr<std::vector<SeriesRow>> series = LoadSeries(db, 0, run_id);
  if (!series.ok()) return series.status();
  absl::StatusOr<std::vector<AnnotationRow>> annotations = LoadAnnotations(db);
  if (!annotations.ok()) return annotations.status();
  CauseFinder causes(db, ".");
  std::vector<StoredChange> out;
  for (const SeriesRow& s : *series) {
    absl::StatusOr<std::vector<PointRow>> points = LoadPoints(db, s.id, params.window + 20);
    if (!points.ok()) return points.status();
    size_t at = points->size();
    for (size_t i = 0; i < points->size(); ++i)
      if ((*points)[i].run_id == run_id) at = i;
    if (at == 0 || at >= points->size()) continue;
    const std::vector<SeriesPoint> sp = ToSeriesPoints(*points, AnnotationsOf(*annotations, s));
    const std::vector<Band> band = RollingBand(sp, s.higher, params);
    if (at >= band.size() || !std::isfinite(band[at].center) || band[at].center <= 0) continue;
    const double best = BestOf(sp[at], s.higher);
    if (!std::isfinite(best)) continue;
    const double ratio = best / band[at].center;
    if (best >= band[at].low && best <= band[at].high) continue;
    if (std::abs(ratio - 1) < params.min_step) continue;
    size_t before = at - 1;
    while (before > 0 && (*points)[before].status != "ok") --before;
    StoredChange c;
    c.series_id = s.id;
    c.machine_id = s.machine_id;
    c.platform = s.platform;
    c.case_name = s.case_name;
    c.counter = s.counter;
    c.higher_is_better = s.higher;
    c.before_run = (*points)[before].run_id;
    c.after_run = run_id;
    c.before_date = (*points)[before].date;
    c.after_date = (*points)[at].date;
    c.before_commit = (*points)[before].commit;
    c.after_commit = (*points)[at].commit;
    c.ratio = c.low = c.high = ratio;
    c.regression = s.higher ? ratio < 1 : ratio > 1;
    c.method = "this run's best repetition outside its rolling band";
    if (absl::Status e = causes.Explain((*points)[before], (*points)[at], c); !e.ok()) return e;
    out.push_back(std::move(c));
  }
  return out;
}

absl::StatusOr<int64_t> Store::Annotate(int64_t run_id, std::optional<int64_t> series_id,
                                        const std::string& note) {
  Db& db = *db_;
  if (note.empty()) return absl::InvalidArgumentError("annotate: the note is empty (--note=TEXT)");
  absl::StatusOr<std::vector<Row>> run =
      db.Query("SELECT machine_id FROM runs WHERE id = ?", {Value::Int(run_id)});
  if (!run.ok()) return run.status();
  if (run->empty())
    return absl::NotFoundError(
        absl::StrCat("annotate: no run ", run_id, " in ", db.where(), " (list them with 'runs')"));
  const int64_t machine = IntAt(run->front(), 0);
  if (series_id) {
    absl::StatusOr<std::vector<Row>> s =
        db.Query("SELECT machine_id FROM series WHERE id = ?", {Value::Int(*series_id)});
    if (!s.ok()) return s.status();
    if (s->empty())
      return absl::NotFoundError(absl::StrCat("annotate: no series ", *series_id, " in ",
                                              db.where()));
    if (IntAt(s->front(), 0) != machine)
      return absl::InvalidArgumentError(absl::StrCat("annotate: series ", *series_id,
                                                     " is not of run ", run_id, "'s machine"));
  }
  absl::StatusOr<std::vector<Row>> id = db.Query(
      "INSERT INTO annotations (machine_id, series_id, run_id, created_at, note) VALUES (?, ?, ?, "
      "?, ?) RETURNING id",
      {Value::Int(machine), series_id ? Value::Int(*series_id) : Value::Null(), Value::Int(run_id),
       Value::Text(absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone())),
       Value::Text(note)});
  if (!id.ok()) return id.status();
  // The changes it explains are no longer open.
  if (absl::Status s = db.Exec(
          "DELETE FROM changes WHERE after_run_id = ? AND series_id IN (SELECT id FROM series "
          "WHERE machine_id = ? AND (? = 0 OR id = ?))",
          {Value::Int(run_id), Value::Int(machine), Value::Int(series_id.value_or(0)),
           Value::Int(series_id.value_or(0))});
      !s.ok())
    return s;
  return id->empty() ? 0 : IntAt(id->front(), 0);
}

absl::StatusOr<PruneOutcome> Store::Prune(int keep) {
  Db& db = *db_;
  if (keep < 1) return absl::InvalidArgumentError("prune: --keep must be 1 or more");
  PruneOutcome out;
  absl::StatusOr<std::vector<Row>> old = db.Query(
      "SELECT series_id, run_id FROM (SELECT r.series_id, r.run_id, r.pruned, ROW_NUMBER() OVER "
      "(PARTITION BY r.series_id ORDER BY u.unix_time DESC, u.id DESC) AS n FROM results r JOIN "
      "runs u ON u.id = r.run_id) ranked WHERE n > ? AND pruned = 0",
      {Value::Int(keep)});
  if (!old.ok()) return old.status();
  if (absl::Status s = db.Begin(); !s.ok()) return s;
  std::set<int64_t> series;
  absl::Status status = absl::OkStatus();
  for (const Row& r : *old) {
    const std::vector<Value> key = {Value::Int(IntAt(r, 1)), Value::Int(IntAt(r, 0))};
    absl::StatusOr<std::vector<Row>> n =
        db.Query("SELECT count(*) FROM repetitions WHERE run_id = ? AND series_id = ?", key);
    if (!n.ok()) {
      status = n.status();
      break;
    }
    out.repetitions_removed += n->empty() ? 0 : IntAt(n->front(), 0);
    status = db.Exec("DELETE FROM repetitions WHERE run_id = ? AND series_id = ?", key);
    if (status.ok())
      status = db.Exec("UPDATE results SET pruned = 1 WHERE run_id = ? AND series_id = ?", key);
    if (!status.ok()) break;
    ++out.results_pruned;
    series.insert(IntAt(r, 0));
  }
  if (!status.ok()) {
    db.Rollback().IgnoreError();
    return status;
  }
  if (absl::Status s = db.Commit(); !s.ok()) return s;
  out.series = static_cast<int64_t>(series.size());
  // SQLite gives the space back to the file system only when asked.
  if (db.dialect() == Db::Dialect::kSqlite && out.results_pruned > 0)
    db.ExecScript("VACUUM").IgnoreError();
  return out;
}

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
  absl::StatusOr<std::vector<SeriesRow>> series = LoadSeries(db, 0, 0);
  if (!series.ok()) return series.status();
  absl::StatusOr<std::vector<AnnotationRow>> annotations = LoadAnnotations(db);
  if (!annotations.ok()) return annotations.status();
  CauseFinder causes(db, "");
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
    const std::vector<Band> band = RollingBand(sp, s.higher, params);
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
    absl::StatusOr<std::vector<StoredChange>> changes =
        ChangesOf(s, *points, notes, params, causes);
    if (!changes.ok()) return changes.status();
    for (const StoredChange& c : *changes) {
      DashChange dc;
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

}  // namespace cnnbench::history
