// The store's readers: changes over the history, a run's departures,
// annotations and pruning.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "tools/history/store.h"
#include "tools/history/store_series.h"

namespace cnnbench::history {
namespace {

using Json = nlohmann::json;
using namespace internal;  // NOLINT: the readers' shared parts

Json DiffJson(const std::vector<std::pair<std::string, std::string>>& diff) {
  Json j = Json::object();
  for (const auto& [k, v] : diff) j[k] = v;
  return j;
}

// Run `run_id` of series `s` outside its rolling band by at least
// min_step: what the run's end shows before a change is confirmed.
absl::StatusOr<std::optional<StoredChange>> DepartureAt(const SeriesRow& s,
                                                        const std::vector<PointRow>& points,
                                                        const std::vector<AnnotationRow>& notes,
                                                        int64_t run_id, const DetectParams& params,
                                                        CauseFinder& causes) {
  size_t at = points.size();
  for (size_t i = 0; i < points.size(); ++i)
    if (points[i].run_id == run_id) at = i;
  if (at == 0 || at >= points.size()) return std::nullopt;
  const std::vector<SeriesPoint> sp = ToSeriesPoints(points, notes);
  const std::vector<Band> band = RollingBand(sp, s.higher, params);
  if (at >= band.size() || !std::isfinite(band[at].center) || band[at].center <= 0)
    return std::nullopt;
  const double best = BestOf(sp[at], s.higher);
  if (!std::isfinite(best)) return std::nullopt;
  const double ratio = best / band[at].center;
  if (best >= band[at].low && best <= band[at].high) return std::nullopt;
  if (std::abs(ratio - 1) < params.min_step) return std::nullopt;
  size_t before = at - 1;
  while (before > 0 && points[before].status != "ok") --before;
  StoredChange c = ChangeBetween(s, points[before], points[at]);
  c.ratio = c.low = c.high = ratio;
  c.regression = s.higher ? ratio < 1 : ratio > 1;
  c.method = "this run's best repetition outside its rolling band";
  if (absl::Status e = causes.Explain(points[before], points[at], c); !e.ok()) return e;
  return c;
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
  std::map<int64_t, std::vector<PointRow>> recent;
  if (query.run_id != 0) {
    absl::StatusOr<std::map<int64_t, std::vector<PointRow>>> got =
        LoadRecentPoints(db, query.run_id, last);
    if (!got.ok()) return got.status();
    recent = *std::move(got);
  }
  std::vector<StoredChange> found;
  std::map<int64_t, std::vector<StoredChange>> per_series;
  for (const SeriesRow& s : *series) {
    absl::StatusOr<std::vector<PointRow>> points =
        query.run_id != 0 ? absl::StatusOr<std::vector<PointRow>>(std::move(recent[s.id]))
                          : LoadPoints(db, s.id, 0);
    if (!points.ok()) return points.status();
    const std::vector<AnnotationRow> notes = AnnotationsOf(*annotations, s);
    if (query.run_id != 0 && query.departures != nullptr) {
      absl::StatusOr<std::optional<StoredChange>> off =
          DepartureAt(s, *points, notes, query.run_id, query.params, causes);
      if (!off.ok()) return off.status();
      if (*off) query.departures->push_back(**off);
    }
    if (query.departures_only) continue;
    absl::StatusOr<std::vector<StoredChange>> changes =
        ChangesOf(s, *points, notes, query.params, causes);
    if (!changes.ok()) return changes.status();
    if (query.run_id != 0) {
      // The ones found with this run: not stored before (a new level needs
      // min_segment runs and the test's confidence, so a change is often
      // found some runs after its first), each said once.
      std::vector<StoredChange> confirmed;
      for (StoredChange& c : *changes) {
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
  if (per_series.empty()) return found;
  // Kept: a whole-history pass replaces each series' changes; a run's pass
  // adds the ones it confirms.
  const std::string now = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
  Transaction tx(db);
  if (absl::Status begun = tx.Begin(); !begun.ok()) return begun;
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
  if (!status.ok()) return status;  // rolled back
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return found;
}

absl::StatusOr<std::vector<StoredChange>> Store::Departures(int64_t run_id,
                                                           const DetectParams& params) {
  ChangeQuery q;
  q.run_id = run_id;
  q.params = params;
  q.repo_dir = ".";
  q.departures_only = true;
  std::vector<StoredChange> out;
  q.departures = &out;
  absl::StatusOr<std::vector<StoredChange>> none = FindChanges(q);
  if (!none.ok()) return none.status();
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
  Transaction tx(db);
  if (absl::Status begun = tx.Begin(); !begun.ok()) return begun;
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
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return id->empty() ? 0 : IntAt(id->front(), 0);
}

absl::StatusOr<PruneOutcome> Store::Prune(int keep) {
  Db& db = *db_;
  if (keep < 1) return absl::InvalidArgumentError("prune: --keep must be 1 or more");
  PruneOutcome out;
  // Each series' results beyond its last `keep` runs not yet pruned, ranked
  // by run time; the statements below work on the set at once.
  const std::string old =
      "SELECT run_id, series_id FROM (SELECT r.series_id, r.run_id, r.pruned, ROW_NUMBER() OVER "
      "(PARTITION BY r.series_id ORDER BY u.unix_time DESC, u.id DESC) AS n FROM results r JOIN "
      "runs u ON u.id = r.run_id) ranked WHERE n > ? AND pruned = 0";
  Transaction tx(db);
  if (absl::Status begun = tx.Begin(); !begun.ok()) return begun;
  absl::StatusOr<std::vector<Row>> counts = db.Query(
      absl::StrCat("SELECT count(*), count(DISTINCT series_id) FROM (", old, ") old"),
      {Value::Int(keep)});
  if (!counts.ok()) return counts.status();
  out.results_pruned = counts->empty() ? 0 : IntAt(counts->front(), 0);
  out.series = counts->empty() ? 0 : IntAt(counts->front(), 1);
  if (out.results_pruned == 0) return out;
  absl::StatusOr<std::vector<Row>> reps = db.Query(
      absl::StrCat("SELECT count(*) FROM repetitions WHERE (run_id, series_id) IN (", old, ")"),
      {Value::Int(keep)});
  if (!reps.ok()) return reps.status();
  out.repetitions_removed = reps->empty() ? 0 : IntAt(reps->front(), 0);
  // The repetitions first, then the mark (the mark is what `old` reads).
  for (const char* head : {"DELETE FROM repetitions", "UPDATE results SET pruned = 1"}) {
    if (absl::Status s = db.Exec(
            absl::StrCat(head, " WHERE (run_id, series_id) IN (", old, ")"), {Value::Int(keep)});
        !s.ok())
      return s;
  }
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  // SQLite gives the space back to the file system only when asked.
  if (db.dialect() == Db::Dialect::kSqlite) db.ExecScript("VACUUM").IgnoreError();
  return out;
}

}  // namespace cnnbench::history
