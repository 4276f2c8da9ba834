// The results store on SQLite and on a real PostgreSQL server, the same
// tests on both (docs/history.md): import (idempotent, every counter kept,
// one transaction), machines and series by the report's key classes,
// changes with their cause, annotations, pruning, the dashboard's data,
// and bad input (hostile strings, a newer schema, a foreign file, a full
// disk, Ctrl-C, two writers at once).
#include <sys/stat.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/pg_server.h"
#include "tests/tools/history/run_json.h"
#include "tests/testing/temp_files.h"
#include "tools/history/schema.h"
#include "tools/history/store.h"
#include "tools/report/run_file.h"

namespace cnnbench::history {
namespace {

using Json = nlohmann::json;

using test_runs::RunJson;
using test_runs::RunSpec;
using test_runs::kResnet;
using test_runs::kVgg;

report::RunFile Parse(const std::string& text, const std::string& path = "run.json") {
  std::vector<std::string> warnings;
  absl::StatusOr<report::RunFile> f = report::ParseRunFile(path, text, &warnings);
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *f : report::RunFile{};
}

std::string Date(int day, int hour) {
  return absl::StrFormat("2026-%02d-%02dT%02d:00:00+00:00", 1 + day / 28, 1 + day % 28, hour);
}

std::string Commit(int n) { return absl::StrFormat("%040x", 0xabc000 + n); }

// Noisy repetitions around `level` (1% per repetition, 1% run to run).
std::vector<double> Noisy(std::mt19937& rng, double level, int n = 5) {
  std::normal_distribution<double> run(1.0, 0.01), rep(1.0, 0.01);
  const double l = level * run(rng);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(l * rep(rng));
  return v;
}

enum class Backend { kSqlite, kPostgres };

// One PostgreSQL server for the whole program, a database per test.
testing::PgServer* Server(std::string* why) {
  static std::unique_ptr<testing::PgServer> server;
  static std::string reason;
  static bool tried = false;
  if (!tried) {
    tried = true;
    absl::StatusOr<std::unique_ptr<testing::PgServer>> s = testing::PgServer::Start();
    if (s.ok()) server = *std::move(s);
    else reason = std::string(s.status().message());
  }
  *why = reason;
  return server.get();
}

class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    static int counter = 0;
    ++counter;
    if (GetParam() == Backend::kSqlite) {
      dir_ = test_files::FreshTempDir(absl::StrCat("store_test_", counter));
      spec_ = dir_ + "/results/cnnbench.db";
    } else {
      std::string why;
      testing::PgServer* server = Server(&why);
      if (server == nullptr) GTEST_SKIP() << "no PostgreSQL server: " << why;
      absl::StatusOr<std::unique_ptr<Db>> admin = OpenPostgres(server->uri());
      ASSERT_TRUE(admin.ok()) << admin.status();
      const std::string db = absl::StrCat("store_", counter);
      ASSERT_TRUE((*admin)->ExecScript(absl::StrCat("CREATE DATABASE ", db)).ok());
      spec_ = absl::StrReplaceAll(server->uri(), {{"/cnnbench_test?", absl::StrCat("/", db, "?")}});
      ASSERT_NE(spec_, server->uri());
    }
    absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(spec_, true);
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = *std::move(s);
  }

  ImportOutcome Import(const RunSpec& r, Store* store = nullptr) {
    const std::string text = RunJson(r);
    absl::StatusOr<ImportOutcome> got =
        (store ? store : store_.get())->Import(Parse(text), text, "test");
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : ImportOutcome{};
  }

  int64_t Count(const std::string& sql) {
    absl::StatusOr<std::vector<Row>> rows = store_->db().Query(sql);
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.ok() && !rows->empty() ? IntAt(rows->front(), 0) : -1;
  }

  // A history of `runs` runs of two cases, resnet50 dropping by `drop` at
  // run `at` (0-based), with oneDNN changing there when `onednn_changes`.
  std::vector<ImportOutcome> History(int runs, int at, double drop, bool onednn_changes,
                                     unsigned seed = 7) {
    std::mt19937 rng(seed);
    std::vector<ImportOutcome> out;
    for (int i = 0; i < runs; ++i) {
      RunSpec r;
      r.date = Date(i, 10);
      r.commit = Commit(i);
      r.onednn = onednn_changes && i >= at ? "3.3.0" : "3.2.0";
      r.cases = {{kResnet, Noisy(rng, i >= at ? 100 * (1 - drop) : 100)},
                 {kVgg, Noisy(rng, 50)}};
      out.push_back(Import(r));
    }
    return out;
  }

  std::string dir_, spec_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreTest, ImportsARunWithEveryCounterAndTheReportsFigures) {
  RunSpec r;
  r.cases = {{kResnet, {100, 102, 98}}, {kVgg, {50, 51}}};
  r.failed_case = "train/inception3/fp32/synthetic/batch:32/gpus:0";
  const std::string text = RunJson(r);
  const report::RunFile file = Parse(text);
  absl::StatusOr<ImportOutcome> got = store_->Import(file, text, "run.json");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_FALSE(got->already_stored);
  EXPECT_EQ(got->run_number, 1);
  EXPECT_EQ(got->cases, 3);
  EXPECT_EQ(Count("SELECT count(*) FROM runs"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM results"), 3);
  EXPECT_EQ(Count("SELECT count(*) FROM repetitions WHERE kind = 'iteration'"), 5);
  // The series' figure is the report's: total work over total time.
  absl::StatusOr<std::vector<Row>> rows = store_->db().Query(
      "SELECT r.value, r.best, r.min_value, r.max_value, r.repetitions, r.status FROM results r "
      "JOIN series s ON s.id = r.series_id JOIN cases c ON c.id = s.case_id WHERE c.name = ?",
      {Value::Text(kResnet)});
  ASSERT_TRUE(rows.ok() && rows->size() == 1);
  const std::optional<double> mean = report::CaseMean(file.cases[0], "images_per_second");
  ASSERT_TRUE(mean);
  EXPECT_DOUBLE_EQ(RealAt(rows->front(), 0), *mean);
  EXPECT_EQ(RealAt(rows->front(), 1), 102);
  EXPECT_EQ(RealAt(rows->front(), 2), 98);
  EXPECT_EQ(RealAt(rows->front(), 3), 102);
  EXPECT_EQ(IntAt(rows->front(), 4), 3);
  EXPECT_EQ(TextAt(rows->front(), 5), "ok");
  // Every counter the repetition wrote, those the report reads and the others.
  rows = store_->db().Query(
      "SELECT p.counters, p.other FROM repetitions p JOIN series s ON s.id = p.series_id JOIN "
      "cases c ON c.id = s.case_id WHERE c.name = ? AND p.repetition = 1",
      {Value::Text(kResnet)});
  ASSERT_TRUE(rows.ok() && rows->size() == 1);
  const Json counters = Json::parse(TextAt(rows->front(), 0));
  const Json other = Json::parse(TextAt(rows->front(), 1));
  EXPECT_EQ(counters["images_per_second"], 102);
  EXPECT_TRUE(counters.contains("step_ms"));
  EXPECT_EQ(other["custom_counter_nobody_reads"], 42.5);
  EXPECT_EQ(other["cpu_time"], 1.5);
  // The failure is kept with its message.
  rows = store_->db().Query(
      "SELECT r.status, r.message FROM results r JOIN series s ON s.id = r.series_id JOIN cases c "
      "ON c.id = s.case_id WHERE c.family = 'train' AND c.model = 'inception3'");
  ASSERT_TRUE(rows.ok() && rows->size() == 1);
  EXPECT_EQ(TextAt(rows->front(), 0), "oom");
  EXPECT_TRUE(absl::StartsWith(TextAt(rows->front(), 1), "OOM: 9 GiB"));
  // The whole context, each key with its class.
  EXPECT_EQ(Count("SELECT count(*) FROM run_context WHERE key = 'onednn_version' AND key_class = "
                  "'environment'"),
            1);
  EXPECT_EQ(Count("SELECT count(*) FROM run_context WHERE key = 'cpu_model' AND key_class = "
                  "'machine identity'"),
            1);
}

TEST_P(StoreTest, ImportIsIdempotentBySameContentAndBySameRun) {
  RunSpec r;
  r.date = Date(0, 10);
  r.cases = {{kResnet, {100, 101}}};
  const ImportOutcome first = Import(r);
  const ImportOutcome again = Import(r);
  EXPECT_TRUE(again.already_stored);
  EXPECT_EQ(again.run_id, first.run_id);
  // The same run written twice (a checkpoint, then the end): one run.
  const std::string text = RunJson(r) + "\n\n";
  absl::StatusOr<ImportOutcome> rewritten = store_->Import(Parse(text), text, "copy.json");
  ASSERT_TRUE(rewritten.ok());
  EXPECT_TRUE(rewritten->already_stored);
  EXPECT_EQ(Count("SELECT count(*) FROM runs"), 1);
  // Another run (a later date) is a second run of the machine.
  r.date = Date(3, 10);
  const ImportOutcome second = Import(r);
  EXPECT_FALSE(second.already_stored);
  EXPECT_EQ(second.run_number, 2);
  EXPECT_EQ(second.machine_runs, 2);
  EXPECT_EQ(second.machine_id, first.machine_id);
}

TEST_P(StoreTest, MachinesAndSeriesFollowTheKeyClasses) {
  RunSpec r;
  r.cases = {{kResnet, {100}}};
  const ImportOutcome a = Import(r);
  // The environment changes inside a series.
  r.date = Date(1, 10);
  r.onednn = "3.3.0";
  const ImportOutcome b = Import(r);
  EXPECT_EQ(b.machine_id, a.machine_id);
  EXPECT_EQ(Count("SELECT count(*) FROM series"), 1);
  // A measurement setting makes another series on the same machine.
  r.date = Date(2, 10);
  r.steps = "5";
  const ImportOutcome c = Import(r);
  EXPECT_EQ(c.machine_id, a.machine_id);
  EXPECT_EQ(Count("SELECT count(*) FROM series"), 2);
  // Another CPU is another machine, as is another platform name.
  r.date = Date(3, 10);
  r.cpu_model = "Intel Xeon";
  const ImportOutcome d = Import(r);
  EXPECT_NE(d.machine_id, a.machine_id);
  r.date = Date(4, 10);
  r.cpu_model = "AMD EPYC";
  r.platform = "cpu-test-2";
  const ImportOutcome e = Import(r);
  EXPECT_NE(e.machine_id, a.machine_id);
  EXPECT_EQ(Count("SELECT count(*) FROM machines"), 3);
}

TEST_P(StoreTest, AStepIsFoundAtItsRunWithTheEnvironmentBetween) {
  const std::vector<ImportOutcome> runs = History(30, 20, 0.10, /*onednn_changes=*/true);
  ChangeQuery q;
  absl::StatusOr<std::vector<StoredChange>> changes = store_->FindChanges(q);
  ASSERT_TRUE(changes.ok()) << changes.status();
  ASSERT_EQ(changes->size(), 1u);
  const StoredChange& c = changes->front();
  EXPECT_EQ(c.case_name, kResnet);
  EXPECT_EQ(c.before_run, runs[19].run_id);
  EXPECT_EQ(c.after_run, runs[20].run_id);
  EXPECT_TRUE(c.regression);
  EXPECT_NEAR(c.ratio, 0.9, 0.03);
  EXPECT_LE(c.low, c.ratio);
  EXPECT_GE(c.high, c.ratio);
  EXPECT_NE(c.cause.find("oneDNN 3.2.0 \u2192 3.3.0 between these runs"), std::string::npos)
      << c.cause;
  EXPECT_NE(c.cause.find("commit "), std::string::npos) << c.cause;
  ASSERT_EQ(c.environment_diff.size(), 1u);
  EXPECT_EQ(c.environment_diff[0].first, "onednn_version");
  EXPECT_EQ(Count("SELECT count(*) FROM changes"), 1);
  // Asked again, the same change, stored once.
  changes = store_->FindChanges(q);
  ASSERT_TRUE(changes.ok());
  EXPECT_EQ(changes->size(), 1u);
  EXPECT_EQ(Count("SELECT count(*) FROM changes"), 1);
}

TEST_P(StoreTest, ACodeChangeSaysNoEnvironmentChange) {
  History(30, 20, 0.10, /*onednn_changes=*/false);
  absl::StatusOr<std::vector<StoredChange>> changes = store_->FindChanges({});
  ASSERT_TRUE(changes.ok());
  ASSERT_EQ(changes->size(), 1u);
  EXPECT_TRUE(absl::StrContains(changes->front().cause, "no environment change"))
      << changes->front().cause;
  EXPECT_TRUE(changes->front().environment_diff.empty());
}

TEST_P(StoreTest, NoiseAloneIsNoChange) {
  History(40, 40, 0, false, /*seed=*/11);
  absl::StatusOr<std::vector<StoredChange>> changes = store_->FindChanges({});
  ASSERT_TRUE(changes.ok());
  EXPECT_TRUE(changes->empty()) << changes->front().cause;
}

TEST_P(StoreTest, ARunsEndShowsItsDepartureThenTheChangeItConfirms) {
  std::vector<ImportOutcome> runs = History(21, 20, 0.10, true);
  // The first run of the new level: off its band, not yet a change.
  absl::StatusOr<std::vector<StoredChange>> off =
      store_->Departures(runs.back().run_id, DetectParams());
  ASSERT_TRUE(off.ok()) << off.status();
  ASSERT_EQ(off->size(), 1u);
  EXPECT_EQ(off->front().case_name, kResnet);
  EXPECT_TRUE(off->front().regression);
  EXPECT_NEAR(off->front().ratio, 0.9, 0.04);
  EXPECT_TRUE(absl::StrContains(off->front().cause, "oneDNN")) << off->front().cause;
  ChangeQuery q;
  q.machine_id = runs.back().machine_id;
  q.run_id = runs.back().run_id;
  absl::StatusOr<std::vector<StoredChange>> changes = store_->FindChanges(q);
  ASSERT_TRUE(changes.ok());
  EXPECT_TRUE(changes->empty());
  // Two more runs at the new level: the third confirms the change, once.
  std::mt19937 rng(99);
  for (int i = 21; i < 23; ++i) {
    RunSpec r;
    r.date = Date(i, 10);
    r.commit = Commit(i);
    r.onednn = "3.3.0";
    r.cases = {{kResnet, Noisy(rng, 90)}, {kVgg, Noisy(rng, 50)}};
    runs.push_back(Import(r));
  }
  q.run_id = runs.back().run_id;
  changes = store_->FindChanges(q);
  ASSERT_TRUE(changes.ok());
  ASSERT_EQ(changes->size(), 1u);
  EXPECT_EQ(changes->front().after_run, runs[20].run_id);
  EXPECT_EQ(changes->front().before_run, runs[19].run_id);
  changes = store_->FindChanges(q);
  ASSERT_TRUE(changes.ok());
  EXPECT_TRUE(changes->empty());  // already said
  // A run in the middle of the old level departs from nothing.
  off = store_->Departures(runs[10].run_id, DetectParams());
  ASSERT_TRUE(off.ok());
  EXPECT_TRUE(off->empty());
}

TEST_P(StoreTest, AChangeIsSaidWithTheFirstRunItIsFoundAtEvenLate) {
  // The run's end was not asked at runs 21 and 22: the run at 25 says it.
  std::vector<ImportOutcome> runs = History(26, 20, 0.10, true);
  ChangeQuery q;
  q.machine_id = runs.back().machine_id;
  q.run_id = runs.back().run_id;
  absl::StatusOr<std::vector<StoredChange>> changes = store_->FindChanges(q);
  ASSERT_TRUE(changes.ok()) << changes.status();
  ASSERT_EQ(changes->size(), 1u);
  EXPECT_EQ(changes->front().after_run, runs[20].run_id);
  changes = store_->FindChanges(q);
  ASSERT_TRUE(changes.ok());
  EXPECT_TRUE(changes->empty());  // said once
}

TEST_P(StoreTest, ACompleteFileReplacesThePartialRecordOfItsRun) {
  RunSpec r;
  r.date = Date(1, 10);
  r.interrupted = "not finished: 1 of 2 case(s) had finished when this was written";
  r.cases = {{kResnet, {100, 101}}};
  const ImportOutcome partial = Import(r);
  ASSERT_TRUE(store_->Annotate(partial.run_id, std::nullopt, "new BIOS").ok());
  r.interrupted.clear();
  r.cases = {{kResnet, {100, 101}}, {kVgg, {50, 51}}};
  const ImportOutcome whole = Import(r);
  EXPECT_FALSE(whole.already_stored);
  EXPECT_NE(whole.run_id, partial.run_id);
  ASSERT_FALSE(whole.warnings.empty());
  EXPECT_TRUE(absl::StrContains(whole.warnings.back(), absl::StrCat("completes run ",
                                                                    partial.run_id)))
      << whole.warnings.back();
  EXPECT_EQ(Count("SELECT count(*) FROM runs"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM results"), 2);
  EXPECT_EQ(Count(absl::StrCat("SELECT count(*) FROM annotations WHERE run_id = ", whole.run_id)),
            1);
  // The partial file imported again afterwards is the same run, stored.
  r.interrupted = "not finished: 1 of 2 case(s) had finished when this was written";
  r.cases = {{kResnet, {100, 101}}};
  const ImportOutcome again = Import(r);
  EXPECT_TRUE(again.already_stored);
  EXPECT_EQ(again.run_id, whole.run_id);
}

TEST_P(StoreTest, ASeriesKeepsItsCounterAndFailuresKeepTheirKind) {
  RunSpec r;
  r.date = Date(1, 10);
  r.cases = {{kResnet, {100}}};
  Import(r);
  // Out of memory, then unsupported here: oom and skipped, with their messages.
  r.date = Date(2, 10);
  r.cases.clear();
  r.failed_case = kResnet;
  Import(r);
  EXPECT_EQ(Count("SELECT count(*) FROM series"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM series WHERE counter = 'images_per_second'"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM results WHERE status = 'oom'"), 1);
  r.date = Date(3, 10);
  r.failed_message = "unsupported: bf16 needs avx512_bf16";
  Import(r);
  EXPECT_EQ(Count("SELECT count(*) FROM results WHERE status = 'skipped' AND message = "
                  "'unsupported: bf16 needs avx512_bf16'"),
            1);
  EXPECT_EQ(Count("SELECT count(*) FROM series"), 1);
}

TEST_P(StoreTest, AnAnnotationExplainsTheChange) {
  const std::vector<ImportOutcome> runs = History(30, 20, 0.10, true);
  absl::StatusOr<int64_t> note = store_->Annotate(runs[20].run_id, std::nullopt, "oneDNN 3.3 update");
  ASSERT_TRUE(note.ok()) << note.status();
  absl::StatusOr<std::vector<StoredChange>> changes = store_->FindChanges({});
  ASSERT_TRUE(changes.ok());
  EXPECT_TRUE(changes->empty());
  // An unknown run or series, an empty note: clear errors.
  EXPECT_TRUE(absl::IsNotFound(store_->Annotate(999999, std::nullopt, "x").status()));
  EXPECT_TRUE(absl::IsNotFound(store_->Annotate(runs[0].run_id, 999999, "x").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(store_->Annotate(runs[0].run_id, std::nullopt, "").status()));
}

TEST_P(StoreTest, PruneKeepsTheLastRunsRepetitionsAndEverySummary) {
  History(30, 20, 0.10, true);
  const int64_t before = Count("SELECT count(*) FROM repetitions");
  EXPECT_EQ(before, 30 * 2 * 5);
  absl::StatusOr<PruneOutcome> pruned = store_->Prune(5);
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  EXPECT_EQ(pruned->results_pruned, 25 * 2);
  EXPECT_EQ(pruned->repetitions_removed, 25 * 2 * 5);
  EXPECT_EQ(pruned->series, 2);
  EXPECT_EQ(Count("SELECT count(*) FROM repetitions"), 5 * 2 * 5);
  EXPECT_EQ(Count("SELECT count(*) FROM results"), 30 * 2);
  EXPECT_EQ(Count("SELECT count(*) FROM results WHERE pruned = 1 AND best IS NOT NULL"), 50);
  // Pruning again removes nothing; the change is still found from the summaries.
  pruned = store_->Prune(5);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(pruned->results_pruned, 0);
  absl::StatusOr<std::vector<StoredChange>> changes = store_->FindChanges({});
  ASSERT_TRUE(changes.ok());
  EXPECT_EQ(changes->size(), 1u);
  EXPECT_TRUE(absl::IsInvalidArgument(store_->Prune(0).status()));
}

TEST_P(StoreTest, TheDashboardDataHasEveryRunAndTheChange) {
  std::mt19937 rng(3);
  for (int i = 0; i < 25; ++i) {
    RunSpec r;
    r.date = Date(i, 9);
    r.commit = Commit(i);
    r.cases = {{kResnet, Noisy(rng, i >= 15 ? 88 : 100)}};
    if (i == 7) r.cases.clear(), r.failed_case = kResnet;
    Import(r);
  }
  absl::StatusOr<DashboardData> data = store_->Dashboard(DetectParams());
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->machines.size(), 1u);
  EXPECT_EQ(data->machines[0].runs, 25);
  ASSERT_EQ(data->series.size(), 1u);
  const DashSeries& s = data->series[0];
  EXPECT_EQ(s.points.size(), 25u);
  EXPECT_EQ(s.model, "resnet50");
  EXPECT_EQ(s.unit, "images/s");
  EXPECT_TRUE(std::isnan(s.points[7].value));
  EXPECT_EQ(s.points[7].status, "OOM");
  EXPECT_NEAR(s.baseline, 100, 3);
  ASSERT_EQ(s.changes.size(), 1u);
  EXPECT_EQ(s.changes[0].after_run, s.points[15].run_id);
  EXPECT_GT(s.changes[0].id, 0);
}

TEST_P(StoreTest, HostileStringsAreStoredAsText) {
  const std::string hostile = "x'); DROP TABLE runs; -- <script>alert(1)</script> \"q\"";
  RunSpec r;
  r.platform = hostile;
  r.host = hostile;
  r.onednn = hostile;
  r.cases = {{kResnet, {100}}};
  Import(r);
  EXPECT_EQ(Count("SELECT count(*) FROM runs"), 1);
  absl::StatusOr<std::vector<Row>> rows = store_->db().Query("SELECT platform FROM machines");
  ASSERT_TRUE(rows.ok() && rows->size() == 1);
  EXPECT_EQ(TextAt(rows->front(), 0), hostile);
  rows = store_->db().Query("SELECT value FROM run_context WHERE key = 'onednn_version'");
  ASSERT_TRUE(rows.ok() && rows->size() == 1);
  EXPECT_EQ(TextAt(rows->front(), 0), hostile);
}

TEST_P(StoreTest, ANewerSchemaIsRefusedAndLeftAsItIs) {
  ASSERT_TRUE(store_->db().Exec("UPDATE meta SET value = '99' WHERE key = 'schema_version'").ok());
  store_.reset();
  absl::StatusOr<std::unique_ptr<Store>> again = Store::Open(spec_, true);
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(again.status())) << again.status();
  EXPECT_TRUE(absl::StrContains(again.status().message(), "schema version 99"));
  EXPECT_TRUE(absl::StrContains(again.status().message(), "reads up to 1"));
}

TEST_P(StoreTest, CtrlCDuringAnImportLeavesTheStoreAsItWas) {
  RunSpec r;
  r.cases = {{kResnet, {100}}};
  Import(r);
  r.date = Date(2, 10);
  r.cases = {{kResnet, {100}}, {kVgg, {50}}};
  const std::string text = RunJson(r);
  int checks = 0;
  absl::StatusOr<ImportOutcome> got =
      store_->Import(Parse(text), text, "b.json", [&checks] { return ++checks >= 2; });
  EXPECT_TRUE(absl::IsCancelled(got.status())) << got.status();
  EXPECT_EQ(Count("SELECT count(*) FROM runs"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM results"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM cases"), 1);
  // And the store still takes the run afterwards.
  got = store_->Import(Parse(text), text, "b.json");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(Count("SELECT count(*) FROM runs"), 2);
}

TEST_P(StoreTest, TwoWritersAtOnceBothLand) {
  absl::StatusOr<std::unique_ptr<Store>> other = Store::Open(spec_, true);
  ASSERT_TRUE(other.ok()) << other.status();
  std::atomic<int> failures{0};
  auto writer = [&failures](Store* store, int first) {
    for (int i = first; i < first + 10; ++i) {
      RunSpec r;
      r.date = Date(i, 10);
      r.cases = {{kResnet, {100.0 + i}}, {kVgg, {50}}};
      const std::string text = RunJson(r);
      std::vector<std::string> w;
      absl::StatusOr<report::RunFile> f = report::ParseRunFile("x.json", text, &w);
      if (!f.ok() || !store->Import(*f, text, "x.json").ok()) ++failures;
    }
  };
  std::thread a(writer, store_.get(), 0), b(writer, other->get(), 10);
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM runs"), 20);
  EXPECT_EQ(Count("SELECT count(*) FROM series"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM cases"), 2);
}

TEST_P(StoreTest, TwoWritersOfOneRunOnANewStore) {
  // A store nobody has made yet, two writers at once, the same run.
  std::string spec;
  if (GetParam() == Backend::kSqlite) {
    spec = dir_ + "/fresh.db";
  } else {
    std::string why;
    testing::PgServer* server = Server(&why);
    absl::StatusOr<std::unique_ptr<Db>> admin = OpenPostgres(server->uri());
    ASSERT_TRUE(admin.ok());
    ASSERT_TRUE((*admin)->ExecScript("CREATE DATABASE fresh_race").ok());
    spec = absl::StrReplaceAll(server->uri(), {{"/cnnbench_test?", "/fresh_race?"}});
  }
  RunSpec r;
  r.cases = {{kResnet, {100, 101}}, {kVgg, {50}}};
  const std::string text = RunJson(r);
  std::atomic<int> failures{0}, stored{0};
  auto writer = [&] {
    absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(spec, true);
    if (!s.ok()) {
      ADD_FAILURE() << s.status();
      ++failures;
      return;
    }
    std::vector<std::string> w;
    absl::StatusOr<report::RunFile> f = report::ParseRunFile("x.json", text, &w);
    absl::StatusOr<ImportOutcome> got = (*s)->Import(*f, text, "x.json");
    if (!got.ok()) {
      ADD_FAILURE() << got.status();
      ++failures;
    } else if (!got->already_stored) {
      ++stored;
    }
  };
  std::thread a(writer), b(writer);
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(stored.load(), 1);
  absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(spec, false);
  ASSERT_TRUE(s.ok());
  absl::StatusOr<std::vector<Row>> runs = (*s)->db().Query("SELECT count(*) FROM runs");
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(IntAt(runs->front(), 0), 1);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
                         });

// The same history gives the same answers on both.
TEST(StoreBackends, SqliteAndPostgresAnswerAlike) {
  std::string why;
  testing::PgServer* server = Server(&why);
  if (server == nullptr) GTEST_SKIP() << "no PostgreSQL server: " << why;
  absl::StatusOr<std::unique_ptr<Db>> admin = OpenPostgres(server->uri());
  ASSERT_TRUE(admin.ok());
  ASSERT_TRUE((*admin)->ExecScript("CREATE DATABASE alike").ok());
  const std::string pg =
      absl::StrReplaceAll(server->uri(), {{"/cnnbench_test?", "/alike?"}});
  const std::string lite = test_files::FreshTempDir("alike") + "/alike.db";
  std::vector<std::vector<StoredChange>> answers;
  std::vector<std::vector<double>> values;
  for (const std::string& spec : {lite, pg}) {
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(spec, true);
    ASSERT_TRUE(store.ok()) << store.status();
    std::mt19937 rng(5);
    for (int i = 0; i < 30; ++i) {
      RunSpec r;
      r.date = Date(i, 10);
      r.commit = Commit(i);
      r.onednn = i >= 12 ? "3.3.0" : "3.2.0";
      r.cases = {{kResnet, Noisy(rng, i >= 12 ? 93 : 100)}, {kVgg, Noisy(rng, i >= 22 ? 55 : 50)}};
      const std::string text = RunJson(r);
      ASSERT_TRUE((*store)->Import(Parse(text), text, "x").ok());
    }
    absl::StatusOr<std::vector<StoredChange>> c = (*store)->FindChanges({});
    ASSERT_TRUE(c.ok()) << c.status();
    answers.push_back(*c);
    absl::StatusOr<DashboardData> d = (*store)->Dashboard(DetectParams());
    ASSERT_TRUE(d.ok());
    std::vector<double> v;
    for (const DashSeries& s : d->series)
      for (const DashPoint& p : s.points) v.push_back(p.value);
    values.push_back(v);
  }
  ASSERT_EQ(answers[0].size(), answers[1].size());
  EXPECT_EQ(answers[0].size(), 2u);
  for (size_t i = 0; i < answers[0].size(); ++i) {
    EXPECT_EQ(answers[0][i].case_name, answers[1][i].case_name);
    EXPECT_EQ(answers[0][i].ratio, answers[1][i].ratio);
    EXPECT_EQ(answers[0][i].low, answers[1][i].low);
    EXPECT_EQ(answers[0][i].cause, answers[1][i].cause);
  }
  EXPECT_EQ(values[0], values[1]);  // bit for bit
}

// SQLite's own faults: files that are not a store, and a full disk.
std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SqliteStore, AFileThatIsNotADatabaseIsLeftAsItIs) {
  const std::string dir = test_files::FreshTempDir("foreign");
  const std::string path = dir + "/notes.db";
  { std::ofstream(path) << "these are my notes, not a database\n"; }
  absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path, true);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.status().message(), path)) << s.status();
  EXPECT_TRUE(absl::StrContains(s.status().message(), "not a cnnbench store")) << s.status();
  EXPECT_EQ(ReadAll(path), "these are my notes, not a database\n");
}

TEST(SqliteStore, ADamagedStoreIsAnErrorNamingItNotACrash) {
  const std::string path = test_files::FreshTempDir("damaged") + "/damaged.db";
  {
    absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path, true);
    ASSERT_TRUE(s.ok());
    RunSpec r;
    for (int i = 0; i < 50; ++i)
      r.cases.push_back(
          {absl::StrCat("train/resnet50/fp32/synthetic/batch:", i + 1, "/gpus:0"), {1, 2, 3}});
    const std::string text = RunJson(r);
    ASSERT_TRUE((*s)->Import(Parse(text), text, "a").ok());
    ASSERT_TRUE((*s)->db().ExecScript("PRAGMA wal_checkpoint(TRUNCATE)").ok());
  }
  // Every page after the first two overwritten: the tables' pages are garbage.
  std::string bytes = ReadAll(path);
  ASSERT_GT(bytes.size(), 3 * 4096u);
  for (size_t i = 2 * 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 % 251);
  { std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes; }
  absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path, false);
  absl::Status status = s.status();
  if (s.ok()) {  // the schema's pages may have survived: the first read of a table fails
    RunSpec r;
    r.date = "2026-12-02T10:00:00+00:00";
    r.cases = {{kResnet, {100}}};
    const std::string text = RunJson(r);
    status = (*s)->Import(Parse(text), text, "b").status();
    if (status.ok()) status = (*s)->FindChanges({}).status();
  }
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), path)) << status;
}

TEST(SqliteStore, SomeoneElsesDatabaseIsLeftAsItIs) {
  const std::string path = test_files::FreshTempDir("theirs") + "/theirs.db";
  {
    absl::StatusOr<std::unique_ptr<Db>> db = OpenSqlite(path, true);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->ExecScript("CREATE TABLE invoices (id INTEGER, total REAL)").ok());
  }
  absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path, true);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(s.status())) << s.status();
  EXPECT_TRUE(absl::StrContains(s.status().message(), "not a cnnbench store"));
  absl::StatusOr<std::unique_ptr<Db>> db = OpenSqlite(path, false);
  ASSERT_TRUE(db.ok());
  absl::StatusOr<std::vector<Row>> rows =
      (*db)->Query("SELECT count(*) FROM sqlite_master WHERE type = 'table'");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(IntAt(rows->front(), 0), 1);
  // Not switched to WAL either (the file keeps its journal mode).
  rows = (*db)->Query("PRAGMA journal_mode");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(TextAt(rows->front(), 0), "delete");
}

TEST(SqliteStore, AFullDiskFailsTheImportWholeAndSaysSo) {
  const std::string path = test_files::FreshTempDir("full") + "/full.db";
  absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path, true);
  ASSERT_TRUE(s.ok());
  RunSpec r;
  r.cases = {{kResnet, {100}}};
  std::string text = RunJson(r);
  ASSERT_TRUE((*s)->Import(Parse(text), text, "a").ok());
  // The file may not grow past its size now: the disk is full.
  absl::StatusOr<std::vector<Row>> pages = (*s)->db().Query("PRAGMA page_count");
  ASSERT_TRUE(pages.ok());
  ASSERT_TRUE((*s)->db()
                  .ExecScript(absl::StrCat("PRAGMA max_page_count = ", IntAt(pages->front(), 0)))
                  .ok());
  r.date = Date(5, 10);
  for (int i = 0; i < 200; ++i)
    r.cases.push_back({absl::StrCat("train/resnet50/fp32/synthetic/batch:", i + 1, "/gpus:0"),
                       {1, 2, 3, 4, 5}});
  text = RunJson(r);
  absl::StatusOr<ImportOutcome> got = (*s)->Import(Parse(text), text, "b");
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(got.status())) << got.status();
  EXPECT_TRUE(absl::StrContains(got.status().message(), "full")) << got.status();
  absl::StatusOr<std::vector<Row>> runs = (*s)->db().Query("SELECT count(*) FROM runs");
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(IntAt(runs->front(), 0), 1);
}

TEST(SqliteStore, ANewStoreIsInWalMode) {
  const std::string path = test_files::FreshTempDir("wal") + "/sub/dir/s.db";
  absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path, true);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::vector<Row>> mode = (*s)->db().Query("PRAGMA journal_mode");
  ASSERT_TRUE(mode.ok());
  EXPECT_EQ(TextAt(mode->front(), 0), "wal");
  // Opening without create does not make a missing store.
  EXPECT_TRUE(absl::IsNotFound(Store::Open(path + ".missing", false).status()));
}

}  // namespace
}  // namespace cnnbench::history
