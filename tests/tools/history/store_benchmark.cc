// The store's cost as the history grows (docs/results/, issue 47): imports
// 100, 300 and 1,000 runs of 300 cases (through the report's reader and
// Store::Import, as //tools:history import does), and at each size times
// `changes` over every series, the dashboard's data and files, one more
// run stored the way //bench:all's end stores it (import, the changes it
// confirms, its departures), and measures the store's size. On SQLite and
// on a throwaway PostgreSQL server (tests/testing/pg_server).
//   ./bazelw run //tests/tools/history:store_benchmark -- [--sizes=100,300,1000] [--cases=300]
//       [--backends=sqlite,postgres]
// A measurement, not a test: run it on a quiet machine.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "tests/testing/pg_server.h"
#include "tools/history/store.h"
#include "tools/report/run_file.h"

ABSL_FLAG(std::vector<std::string>, sizes, std::vector<std::string>({"100", "300", "1000"}),
          "store sizes (runs) to measure at");
ABSL_FLAG(int, cases, 300, "cases per run");
ABSL_FLAG(int, repetitions, 3, "repetitions per case");
ABSL_FLAG(std::vector<std::string>, backends, std::vector<std::string>({"sqlite", "postgres"}),
          "sqlite, postgres");
ABSL_FLAG(std::string, dir, "/tmp/cnnbench_store_benchmark", "working folder (emptied)");

namespace cnnbench::history {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

const char* kModels[] = {"resnet50", "resnet101", "resnet152", "vgg16", "vgg19", "inception3",
                         "inception4", "googlenet", "alexnet", "overfeat", "trivial", "lenet",
                         "resnet50_v1.5", "mobilenet", "vgg11"};

// Run `n` as //bench:all writes it: `cases` train cases, each with its
// repetitions, about a 1% spread; a 10% drop in a tenth of the series
// from the middle of the history on, and oneDNN updated there.
std::string RunJson(int n, int cases, int repetitions, int total, std::mt19937& rng) {
  const bool late = n >= total / 2;
  Json context = {{"date", absl::FormatTime("%Y-%m-%dT%H:%M:%S+00:00",
                                            absl::FromUnixSeconds(1700000000 + n * 3600),
                                            absl::UTCTimeZone())},
                  {"host_name", "bench-host"},
                  {"executable", "bazel-bin/bench/all"},
                  {"command_line", "bazel-bin/bench/all --preset=full"},
                  {"git_commit", absl::StrFormat("%040x", 0x1000 + n)},
                  {"platform", "store-benchmark"},
                  {"cpu_model", "AMD EPYC"},
                  {"host_cpus", "2"},
                  {"memory_bytes", "25769803776"},
                  {"onednn_version", late ? "3.3.0" : "3.2.0"},
                  {"os", "Debian GNU/Linux 12 (bookworm)"},
                  {"kernel", "6.1.0"},
                  {"steps", "100"},
                  {"warmup_steps", "10"},
                  {"num_cpus", 2},
                  {"library_build_type", "release"}};
  std::normal_distribution<double> noise(1.0, 0.01);
  Json benchmarks = Json::array();
  for (int c = 0; c < cases; ++c) {
    const std::string name =
        absl::StrCat("train/", kModels[c % 15], "/fp32/synthetic/batch:", 1 + c / 15,
                     "/gpus:0/iterations:1/manual_time");
    const double level = (100.0 + c) * (late && c % 10 == 0 ? 0.9 : 1.0) * noise(rng);
    for (int r = 0; r < repetitions; ++r) {
      const double ips = level * noise(rng);
      benchmarks.push_back({{"name", name},
                            {"run_name", name},
                            {"run_type", "iteration"},
                            {"repetitions", repetitions},
                            {"repetition_index", r},
                            {"threads", 1},
                            {"iterations", 100},
                            {"real_time", 100 * 32 / ips},
                            {"cpu_time", 1.0},
                            {"time_unit", "s"},
                            {"images_per_second", ips},
                            {"step_ms", 32000 / ips},
                            {"step_ms_p50", 32000 / ips},
                            {"step_ms_p99", 33000 / ips},
                            {"loss", 6.9},
                            {"peak_memory_bytes", 1e9}});
    }
  }
  return Json({{"context", context}, {"benchmarks", benchmarks}}).dump();
}

int64_t FileBytes(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

int64_t StoreBytes(Store& store, const std::string& spec) {
  if (!IsPostgresUri(spec)) return FileBytes(spec) + FileBytes(spec + "-wal");
  absl::StatusOr<std::vector<Row>> rows =
      store.db().Query("SELECT pg_database_size(current_database())");
  return rows.ok() && !rows->empty() ? IntAt(rows->front(), 0) : 0;
}

int Measure(const std::string& backend, const std::string& spec, const std::string& dir) {
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(spec, true);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", std::string(store.status().message()).c_str());
    return 1;
  }
  std::vector<int> sizes;
  for (const std::string& s : absl::GetFlag(FLAGS_sizes)) sizes.push_back(std::stoi(s));
  const int total = sizes.back() + 1;
  const int cases = absl::GetFlag(FLAGS_cases);
  const int reps = absl::GetFlag(FLAGS_repetitions);
  std::mt19937 rng(42);
  std::printf("\n%s (%d cases x %d repetitions per run)\n\n", backend.c_str(), cases, reps);
  std::printf("| runs | import (s, these runs) | import per run (ms) | changes (s) | changes found | "
              "dashboard data (s) | dashboard files (s) | files | one more run stored at a run's "
              "end (s: import + its changes) | store size (MB) | per run (KB) |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  int done = 0;
  for (size_t at = 0; at < sizes.size(); ++at) {
    const int size = sizes[at];
    const Clock::time_point t0 = Clock::now();
    double parse = 0;
    for (; done < size; ++done) {
      const std::string text = RunJson(done, cases, reps, total, rng);
      const Clock::time_point p = Clock::now();
      std::vector<std::string> warnings;
      absl::StatusOr<report::RunFile> file =
          report::ParseRunFile(absl::StrCat("run", done, ".json"), text, &warnings);
      parse += Since(p);
      if (!file.ok()) return 1;
      absl::StatusOr<ImportOutcome> got = (*store)->Import(*file, text, "benchmark");
      if (!got.ok()) {
        std::fprintf(stderr, "%s\n", std::string(got.status().message()).c_str());
        return 1;
      }
    }
    const double import_s = Since(t0);
    const int added = size - (at == 0 ? 0 : sizes[at - 1]);
    Clock::time_point t = Clock::now();
    absl::StatusOr<std::vector<StoredChange>> changes = (*store)->FindChanges({});
    const double changes_s = Since(t);
    if (!changes.ok()) return 1;
    t = Clock::now();
    absl::StatusOr<DashboardData> data = (*store)->Dashboard(DetectParams());
    const double data_s = Since(t);
    if (!data.ok()) return 1;
    t = Clock::now();
    std::vector<std::string> written;
    if (!WriteDashboard(*data, absl::StrCat(dir, "/dashboard_", backend, "_", size), &written).ok())
      return 1;
    const double files_s = Since(t);
    // One more run, stored the way a //bench:all run's end does it (then
    // removed again, so the next size starts from the same history).
    const std::string text = RunJson(done, cases, reps, total, rng);
    t = Clock::now();
    std::vector<std::string> warnings;
    absl::StatusOr<report::RunFile> file = report::ParseRunFile("end.json", text, &warnings);
    absl::StatusOr<ImportOutcome> got = (*store)->Import(*file, text, "end.json");
    if (!got.ok()) return 1;
    const double end_import_s = Since(t);
    ChangeQuery q;
    q.machine_id = got->machine_id;
    q.run_id = got->run_id;
    std::vector<StoredChange> departures;
    q.departures = &departures;
    absl::StatusOr<std::vector<StoredChange>> confirmed = (*store)->FindChanges(q);
    const double end_s = Since(t);
    if (!confirmed.ok()) return 1;
    (*store)->db().Exec("DELETE FROM changes WHERE after_run_id = ?", {Value::Int(got->run_id)}).IgnoreError();
    (*store)->db().Exec("DELETE FROM repetitions WHERE run_id = ?", {Value::Int(got->run_id)}).IgnoreError();
    (*store)->db().Exec("DELETE FROM results WHERE run_id = ?", {Value::Int(got->run_id)}).IgnoreError();
    (*store)->db().Exec("DELETE FROM run_context WHERE run_id = ?", {Value::Int(got->run_id)}).IgnoreError();
    (*store)->db().Exec("DELETE FROM runs WHERE id = ?", {Value::Int(got->run_id)}).IgnoreError();
    if (spec.find("://") == std::string::npos)
      (*store)->db().ExecScript("PRAGMA wal_checkpoint(TRUNCATE)").IgnoreError();
    const int64_t bytes = StoreBytes(**store, spec);
    std::printf("| %d | %.1f | %.0f (parse %.0f) | %.2f | %zu | %.2f | %.2f | %zu | %.2f (%.2f + %.2f) | %.1f | %.0f |\n",
                size, import_s, 1000 * import_s / added, 1000 * parse / added, changes_s,
                changes->size(), data_s, files_s, written.size(), end_s, end_import_s,
                end_s - end_import_s, bytes / 1e6, bytes / 1e3 / size);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace cnnbench::history

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string dir = absl::GetFlag(FLAGS_dir);
  std::system(absl::StrCat("rm -rf '", dir, "' && mkdir -p '", dir, "'").c_str());
  int rc = 0;
  for (const std::string& backend : absl::GetFlag(FLAGS_backends)) {
    if (backend == "sqlite") {
      rc |= cnnbench::history::Measure(backend, dir + "/store.db", dir);
    } else if (backend == "postgres") {
      absl::StatusOr<std::unique_ptr<cnnbench::testing::PgServer>> server =
          cnnbench::testing::PgServer::Start();
      if (!server.ok()) {
        std::fprintf(stderr, "no PostgreSQL server: %s\n",
                     std::string(server.status().message()).c_str());
        return 1;
      }
      rc |= cnnbench::history::Measure(backend, (*server)->uri(), dir);
    }
  }
  return rc;
}
