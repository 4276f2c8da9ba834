// The store's readers' shared parts (internal to tools/history): a series,
// its runs and annotations as read from the store, and the cause of a
// change (the environment and code between two runs).
#ifndef CNNBENCH_TOOLS_HISTORY_STORE_SERIES_H_
#define CNNBENCH_TOOLS_HISTORY_STORE_SERIES_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/history/db.h"
#include "tools/history/detect.h"
#include "tools/history/store.h"

namespace cnnbench::history::internal {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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

absl::StatusOr<std::vector<SeriesRow>> LoadSeries(Db& db, int64_t machine_id, int64_t run_id);
PointRow PointFromRow(const Row& r, size_t at);
absl::StatusOr<std::vector<PointRow>> LoadPoints(Db& db, int64_t series_id, int last);
// For the series run `run_id` measured: their runs among the machine's
// last `runs` runs up to it, in two queries (a run's end).
absl::StatusOr<std::map<int64_t, std::vector<PointRow>>> LoadRecentPoints(Db& db, int64_t run_id,
                                                                          int runs);
absl::StatusOr<std::vector<AnnotationRow>> LoadAnnotations(Db& db);
std::vector<AnnotationRow> AnnotationsOf(const std::vector<AnnotationRow>& all,
                                         const SeriesRow& s);
std::vector<SeriesPoint> ToSeriesPoints(const std::vector<PointRow>& points,
                                        const std::vector<AnnotationRow>& annotations);
std::string ShortCommit(const std::string& commit);

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

absl::StatusOr<std::vector<StoredChange>> ChangesOf(const SeriesRow& s,
                                                    const std::vector<PointRow>& points,
                                                    const std::vector<AnnotationRow>& annotations,
                                                    const DetectParams& params,
                                                    CauseFinder& causes);

// A change of `s` between two of its runs, its figures still to be filled.
StoredChange ChangeBetween(const SeriesRow& s, const PointRow& before, const PointRow& after);

// Commits from a to b in the work tree `dir` (store.cc), nullopt when git cannot say.
std::optional<int> CountCommitsInRepo(const std::string& dir, const std::string& a,
                                      const std::string& b);

}  // namespace cnnbench::history::internal

#endif  // CNNBENCH_TOOLS_HISTORY_STORE_SERIES_H_
