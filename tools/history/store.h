// The results store (docs/history.md): every run kept, in SQLite (default
// results/cnnbench.db) or PostgreSQL (a team's shared store), with the same
// schema (schema.h) and the same queries. A machine is its platform and its
// identity keys, a series one case on one machine under one set of
// measurement settings (tools/report/context_keys.h's classes); the
// environment may change inside a series, and that is what the changes
// name as a cause.
#ifndef CNNBENCH_TOOLS_HISTORY_STORE_H_
#define CNNBENCH_TOOLS_HISTORY_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/history/dashboard.h"
#include "tools/history/db.h"
#include "tools/history/detect.h"
#include "tools/report/run_file.h"

namespace cnnbench::history {

// Where //bench:all and //tools:history keep the store unless told.
inline constexpr const char* kDefaultStore = "results/cnnbench.db";

// Returns true when the work is to stop (Ctrl-C): the import in progress is
// rolled back and the store left as it was before it.
using CancelCheck = std::function<bool()>;

struct ImportOutcome {
  int64_t run_id = 0;
  int64_t machine_id = 0;
  std::string platform;
  // The same content, or the same run (date, host, command line, commit),
  // was stored before: nothing was added, run_id is the stored one.
  bool already_stored = false;
  int run_number = 0;    // its place among its machine's runs, oldest first (1-based)
  int machine_runs = 0;  // the machine's runs in the store
  int cases = 0;         // cases stored
  bool interrupted = false;
  // What the import had to say: the reader's skipped entries, a run without
  // a date, a case written twice, a partial record replaced.
  std::vector<std::string> warnings;
};

// A change found in one series, with what lay between its two runs.
struct StoredChange {
  int64_t id = 0;
  int64_t series_id = 0;
  int64_t machine_id = 0;
  std::string platform;
  std::string case_name;
  std::string counter;
  bool higher_is_better = true;
  int64_t before_run = 0, after_run = 0;
  std::string before_date, after_date, before_commit, after_commit;
  double ratio = 1, low = 1, high = 1, z = 0;
  bool regression = false;
  bool annotated = false;  // an annotation on or after its first run explains it
  std::string method;
  // "onednn_version 2.6.3 -> 3.2; 3 commits (a1b2c3d..e4f5a6b)".
  std::string cause;
  std::vector<std::pair<std::string, std::string>> environment_diff;  // key, "a -> b"
};

struct ChangeQuery {
  int64_t machine_id = 0;  // 0: every machine
  // Only series this run measured, and only the changes this run confirms
  // (the end of a //bench:all run: a new level needs min_segment runs, so
  // a change this run confirms may have started a run or two before it)
  // that were not stored before; 0: every series, every change.
  int64_t run_id = 0;
  DetectParams params;
  // A git work tree to count the commits between two runs in ("": none,
  // the commits are named but not counted).
  std::string repo_dir;
  // With run_id: also the series where that run lies outside its band
  // (Departures), from the same reading of the history; with
  // departures_only, nothing else is looked for or stored.
  std::vector<StoredChange>* departures = nullptr;
  bool departures_only = false;
};

struct PruneOutcome {
  int64_t results_pruned = 0;      // runs' results whose repetitions were removed
  int64_t repetitions_removed = 0;
  int64_t series = 0;
};

struct RunListing {
  int64_t id = 0;
  std::string platform, date, commit, source, interrupted;
  int cases = 0;
};

class Store {
 public:
  // Opens `spec` (a SQLite path, or a postgresql:// URI), making the schema
  // in a new store; a SQLite file is made (with its folder) when `create`.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& spec, bool create);

  const std::string& where() const { return db_->where(); }
  Db& db() { return *db_; }

  // Adds one run, read by the report's reader, in one transaction: all of
  // it or none. `content` is the file's bytes (its hash is one of the two
  // identities), `source` where it came from (a path).
  absl::StatusOr<ImportOutcome> Import(const report::RunFile& file, absl::string_view content,
                                       absl::string_view source, const CancelCheck& cancelled = {});
  // Reads `path` with the report's reader (warnings for entries it skips)
  // and imports it.
  absl::StatusOr<ImportOutcome> ImportFile(const std::string& path,
                                           std::vector<std::string>* warnings,
                                           const CancelCheck& cancelled = {});

  // Runs the detection over the series the query names, replaces their
  // stored changes with what it finds, and returns those the query asks
  // for (every change of those series, or the ones a run started).
  absl::StatusOr<std::vector<StoredChange>> FindChanges(const ChangeQuery& query);

  // The series where run `run_id` itself lies outside its rolling band
  // (detect.h RollingBand): not yet a change (a level needs min_segment
  // runs), but what the run's end shows. before_run is the run before it,
  // ratio its best repetition over the band's centre.
  absl::StatusOr<std::vector<StoredChange>> Departures(int64_t run_id, const DetectParams& params);

  // Marks a known change at `run_id` (a driver update, a new BIOS): the
  // detection's window restarts there, for one series or (nullopt) every
  // series of the run's machine. Returns the annotation's id.
  absl::StatusOr<int64_t> Annotate(int64_t run_id, std::optional<int64_t> series_id,
                                   const std::string& note);

  // Keeps the repetitions of each series' last `keep` runs and only the
  // summaries (value, best, range, spread) of older ones.
  absl::StatusOr<PruneOutcome> Prune(int keep);

  // Everything the dashboard shows (detection run on the way, not stored).
  absl::StatusOr<DashboardData> Dashboard(const DetectParams& params);

  absl::StatusOr<std::vector<RunListing>> Runs(int64_t machine_id);

 private:
  explicit Store(std::unique_ptr<Db> db) : db_(std::move(db)) {}
  std::unique_ptr<Db> db_;
};

// A stable 64-bit hash (FNV-1a) of `bytes` as 16 hex digits.
std::string ContentHash(absl::string_view bytes);

// The display name of an environment key ("onednn_version" -> "oneDNN").
std::string EnvironmentKeyName(absl::string_view key);

// "a1b2c3d4e5f6..." -> "a1b2c3d" and the dirty flag of "…-dirty" / "…+dirty".
std::pair<std::string, bool> SplitCommit(absl::string_view commit);

}  // namespace cnnbench::history

#endif  // CNNBENCH_TOOLS_HISTORY_STORE_H_
