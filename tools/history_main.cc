// //tools:history (also //tools:results): the store of every run over time
// (docs/history.md).
//   ./bazelw run //tools:history -- import results/*.json
//   ./bazelw run //tools:history -- changes
//   ./bazelw run //tools:history -- annotate --run=12 --note="driver 550 -> 560"
//   ./bazelw run //tools:history -- prune --keep=100
//   ./bazelw run //tools:history -- dashboard        (writes results/dashboard/)
//   ./bazelw run //tools:history -- runs | schema
#include <signal.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/crash_handler.h"
#include "core/invocation.h"
#include "tools/history/schema.h"
#include "tools/history/store.h"

ABSL_FLAG(std::string, store, cnnbench::history::kDefaultStore,
          "the store: a SQLite file, or postgresql://user@host/db for a shared one");
ABSL_FLAG(int64_t, machine, 0, "changes, runs: only this machine (its id; 0: every machine)");
ABSL_FLAG(int64_t, run, 0, "annotate: the first run after the known change");
ABSL_FLAG(int64_t, series, 0, "annotate: only this series (0: every series of the run's machine)");
ABSL_FLAG(std::string, note, "", "annotate: what changed (\"driver 550 -> 560\")");
ABSL_FLAG(int, keep, 0, "prune: keep the repetitions of each series' last N runs");
ABSL_FLAG(std::string, output, "results/dashboard", "dashboard: the folder to write");
ABSL_FLAG(bool, all, false, "changes: list every change, not only regressions");
ABSL_FLAG(int, window, -1, "changes: the z-score's lookback in runs (-1: the measured default)");
ABSL_FLAG(double, z, -1, "changes: the |z| threshold (-1: the measured default)");
ABSL_FLAG(double, min_step, -1,
          "changes: the smallest step reported, a fraction (-1: the measured default)");

namespace cnnbench::history {
namespace {

constexpr int kUsage = 1;
constexpr int kFailed = 2;

std::atomic<int> g_signal{0};
void OnSignal(int signal) { g_signal.store(signal); }

void CatchInterrupts() {
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &action, nullptr);
}

int Fail(int code, const absl::Status& status) {
  std::fprintf(stderr, "history: %s\n", std::string(status.message()).c_str());
  return code;
}

DetectParams Params() {
  DetectParams p;
  if (absl::GetFlag(FLAGS_window) > 0) p.window = absl::GetFlag(FLAGS_window);
  if (absl::GetFlag(FLAGS_z) > 0) p.z_threshold = absl::GetFlag(FLAGS_z);
  if (absl::GetFlag(FLAGS_min_step) >= 0) p.min_step = absl::GetFlag(FLAGS_min_step);
  return p;
}

std::string Percent(double ratio) { return absl::StrFormat("%+.1f%%", (ratio - 1) * 100); }

int Import(Store& store, const std::vector<std::string>& files) {
  if (files.empty()) {
    std::fprintf(stderr, "history: import: no file given (import FILE.json ...)\n");
    return kUsage;
  }
  CatchInterrupts();
  int added = 0, already = 0, failed = 0;
  for (const std::string& path : files) {
    std::vector<std::string> warnings;
    absl::StatusOr<ImportOutcome> got =
        store.ImportFile(path, &warnings, [] { return g_signal.load() != 0; });
    for (const std::string& w : warnings) std::fprintf(stderr, "history: warning: %s\n", w.c_str());
    if (!got.ok() && absl::IsCancelled(got.status())) {
      std::fprintf(stderr,
                   "history: interrupted while importing %s: it was not stored (the store is as it "
                   "was before it); %d file(s) imported before it are kept\n",
                   path.c_str(), added);
      return 128 + g_signal.load();
    }
    if (!got.ok()) {
      ++failed;
      std::fprintf(stderr, "history: %s: not imported: %s\n", path.c_str(),
                   std::string(got.status().message()).c_str());
      // A full disk or a store that went away fails every file after it.
      if (absl::IsResourceExhausted(got.status()) || absl::IsUnavailable(got.status())) break;
      continue;
    }
    if (got->already_stored) {
      ++already;
      std::printf("%s: already stored as run %lld (%s)\n", path.c_str(),
                  static_cast<long long>(got->run_id), got->platform.c_str());
    } else {
      ++added;
      std::printf("%s: run %lld, run %d of %d of %s, %d case(s)%s\n", path.c_str(),
                  static_cast<long long>(got->run_id), got->run_number, got->machine_runs,
                  got->platform.c_str(), got->cases, got->interrupted ? " (interrupted run)" : "");
    }
  }
  std::printf("%d imported, %d already stored, %d failed; store: %s\n", added, already, failed,
              store.where().c_str());
  return failed > 0 ? kFailed : 0;
}

void PrintChange(const StoredChange& c) {
  std::printf("%s on %s: %s %s (99%%: %s .. %s) between run %lld (%s, %s) and run %lld (%s, %s): "
              "%s\n    [%s]\n",
              c.case_name.c_str(), c.platform.c_str(), c.regression ? "regression" : "improvement",
              Percent(c.ratio).c_str(), Percent(c.low).c_str(), Percent(c.high).c_str(),
              static_cast<long long>(c.before_run), c.before_date.c_str(),
              c.before_commit.empty() ? "commit ?" : c.before_commit.substr(0, 7).c_str(),
              static_cast<long long>(c.after_run), c.after_date.c_str(),
              c.after_commit.empty() ? "commit ?" : c.after_commit.substr(0, 7).c_str(),
              c.cause.c_str(), c.method.c_str());
}

int Changes(Store& store) {
  ChangeQuery q;
  q.machine_id = absl::GetFlag(FLAGS_machine);
  q.params = Params();
  q.repo_dir = ".";
  absl::StatusOr<std::vector<StoredChange>> changes = store.FindChanges(q);
  if (!changes.ok()) return Fail(kFailed, changes.status());
  int shown = 0, regressions = 0;
  for (const StoredChange& c : *changes) {
    if (c.regression) ++regressions;
    if (!c.regression && !absl::GetFlag(FLAGS_all)) continue;
    PrintChange(c);
    ++shown;
  }
  std::printf("%zu change(s) in %s: %d regression(s), %zu improvement(s)%s\n", changes->size(),
              store.where().c_str(), regressions, changes->size() - regressions,
              absl::GetFlag(FLAGS_all) || changes->size() == static_cast<size_t>(regressions)
                  ? ""
                  : " (--all lists them)");
  return 0;
}

int Annotate(Store& store) {
  if (absl::GetFlag(FLAGS_run) <= 0) {
    std::fprintf(stderr, "history: annotate: give --run=ID (the first run after the change) and "
                         "--note=TEXT\n");
    return kUsage;
  }
  const int64_t series = absl::GetFlag(FLAGS_series);
  absl::StatusOr<int64_t> id =
      store.Annotate(absl::GetFlag(FLAGS_run),
                     series > 0 ? std::optional<int64_t>(series) : std::nullopt,
                     absl::GetFlag(FLAGS_note));
  if (!id.ok()) return Fail(kUsage, id.status());
  std::printf("annotation %lld at run %lld: %s\n", static_cast<long long>(*id),
              static_cast<long long>(absl::GetFlag(FLAGS_run)), absl::GetFlag(FLAGS_note).c_str());
  return 0;
}

int Prune(Store& store) {
  absl::StatusOr<PruneOutcome> out = store.Prune(absl::GetFlag(FLAGS_keep));
  if (!out.ok()) return Fail(kUsage, out.status());
  std::printf("pruned %lld run result(s) in %lld series: %lld repetition row(s) removed, their "
              "summaries kept; each series keeps its last %d runs' repetitions\n",
              static_cast<long long>(out->results_pruned), static_cast<long long>(out->series),
              static_cast<long long>(out->repetitions_removed), absl::GetFlag(FLAGS_keep));
  return 0;
}

int Dashboard(Store& store) {
  absl::StatusOr<DashboardData> data = store.Dashboard(Params());
  if (!data.ok()) return Fail(kFailed, data.status());
  std::vector<std::string> written;
  const std::string dir = absl::GetFlag(FLAGS_output);
  if (absl::Status s = WriteDashboard(*data, dir, &written); !s.ok()) return Fail(kFailed, s);
  std::printf("dashboard: %s/index.html (%zu file(s); %zu machine(s), %zu series)\n", dir.c_str(),
              written.size(), data->machines.size(), data->series.size());
  return 0;
}

int Runs(Store& store) {
  absl::StatusOr<std::vector<RunListing>> runs = store.Runs(absl::GetFlag(FLAGS_machine));
  if (!runs.ok()) return Fail(kFailed, runs.status());
  for (const RunListing& r : *runs)
    std::printf("%6lld  %-25s  %-20s  %-12s  %4d case(s)%s  %s\n", static_cast<long long>(r.id),
                r.date.c_str(), r.platform.c_str(), r.commit.substr(0, 12).c_str(), r.cases,
                r.interrupted.empty() ? "" : " (interrupted)", r.source.c_str());
  std::printf("%zu run(s) in %s\n", runs->size(), store.where().c_str());
  return 0;
}

int Main(int argc, char** argv) {
  InstallCrashHandler(argv[0]);
  ChangeToInvocationDirectory();
  absl::SetProgramUsageMessage(
      "history <import FILE...|changes|annotate|prune|dashboard|runs|schema> [--store=PATH or "
      "postgresql://...] (docs/history.md)");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() < 2) {
    std::fprintf(stderr, "history: give a command: import, changes, annotate, prune, dashboard, "
                         "runs or schema (--help)\n");
    return kUsage;
  }
  const std::string command = args[1];
  std::vector<std::string> rest(args.begin() + 2, args.end());
  static const char* kCommands[] = {"import", "changes", "annotate", "prune",
                                    "dashboard", "runs", "schema"};
  bool known = false;
  for (const char* c : kCommands) known = known || command == c;
  if (!known) {
    std::fprintf(stderr, "history: unknown command '%s' (import, changes, annotate, prune, "
                         "dashboard, runs, schema)\n", command.c_str());
    return kUsage;
  }
  if (command != "import" && !rest.empty()) {
    std::fprintf(stderr, "history: %s takes no file ('%s')\n", command.c_str(), rest[0].c_str());
    return kUsage;
  }
  const std::string spec = absl::GetFlag(FLAGS_store);
  if (spec == "none") {
    std::fprintf(stderr, "history: --store=none: no store to read\n");
    return kUsage;
  }
  // Only an import makes a new store; the readers say there is none.
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(spec, command == "import");
  if (!store.ok()) {
    if (absl::IsNotFound(store.status()))
      return Fail(kUsage, absl::NotFoundError(absl::StrCat(
                              store.status().message(),
                              " (a //bench:all run makes it; or import files into it)")));
    return Fail(kFailed, store.status());
  }
  if (command == "import") return Import(**store, rest);
  if (command == "changes") return Changes(**store);
  if (command == "annotate") return Annotate(**store);
  if (command == "prune") return Prune(**store);
  if (command == "dashboard") return Dashboard(**store);
  if (command == "runs") return Runs(**store);
  std::printf("%s;\n", SchemaSql((*store)->db()).c_str());
  return 0;
}

}  // namespace
}  // namespace cnnbench::history

int main(int argc, char** argv) { return cnnbench::history::Main(argc, argv); }
