// The results file's snapshots: a complete file of the cases finished so
// far, rewritten as each finishes, that the first signal under an MPI
// launcher renames onto the target (bench/harness/interrupt.h), and that the run's
// own file replaces.
#include "bench/output/result_output.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bench/harness/interrupt.h"
#include "benchmark/benchmark.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace cnnbench::bench {
namespace {

std::string TempPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", name);
}

benchmark::BenchmarkReporter::Run RunOf(const std::string& name) {
  benchmark::BenchmarkReporter::Run run;
  run.run_name.function_name = name;
  run.run_type = benchmark::BenchmarkReporter::Run::RT_Iteration;
  run.iterations = 1;
  run.real_accumulated_time = 0.5;
  run.cpu_accumulated_time = 0.5;
  run.repetitions = 1;
  return run;
}

// The file at `path` as JSON (discarded when it is not JSON or absent).
nlohmann::json Read(const std::string& path) {
  std::ifstream in(path);
  if (!in.good()) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

TEST(ResultFileTest, SnapshotsHoldTheFinishedCasesAsAWholeFileUntilTheRunsOwn) {
  const std::string path = TempPath("snapshots.json");
  std::filesystem::remove(path);
  auto file = ResultFile::Open(path, "json");
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE((*file)->KeepSnapshots().ok());
  const std::string snapshot = (*file)->snapshot_path();
  ASSERT_FALSE(snapshot.empty());
  EXPECT_FALSE(std::filesystem::exists(snapshot)) << "nothing finished, no snapshot";
  benchmark::BenchmarkReporter* reporter = (*file)->reporter();
  reporter->ReportContext(benchmark::BenchmarkReporter::Context());
  reporter->ReportRuns({RunOf("case/a")});
  nlohmann::json first = Read(snapshot);
  ASSERT_FALSE(first.is_discarded()) << "the snapshot is not whole JSON";
  EXPECT_EQ(first.at("benchmarks").size(), 1u);
  EXPECT_TRUE(absl::StrContains(first.at("context").value("interrupted", ""), "after 1 case"))
      << first.at("context").dump();
  reporter->ReportRuns({RunOf("case/b")});
  nlohmann::json second = Read(snapshot);
  ASSERT_FALSE(second.is_discarded());
  EXPECT_EQ(second.at("benchmarks").size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(path)) << "the target waits for the run's end";
  reporter->Finalize();
  ASSERT_TRUE((*file)->Commit().ok());
  EXPECT_FALSE(std::filesystem::exists(snapshot));
  EXPECT_FALSE(std::filesystem::exists(snapshot + ".next"));
  nlohmann::json written = Read(path);
  ASSERT_FALSE(written.is_discarded());
  EXPECT_EQ(written.at("benchmarks").size(), 2u);
  EXPECT_FALSE(written.at("context").contains("interrupted"));
}

TEST(ResultFileTest, TheFirstSignalPutsTheSnapshotInPlace) {
  const std::string path = TempPath("published.json");
  std::ofstream(path) << "an earlier file";
  auto file = ResultFile::Open(path, "json");
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE((*file)->KeepSnapshots().ok());
  benchmark::BenchmarkReporter* reporter = (*file)->reporter();
  reporter->ReportContext(benchmark::BenchmarkReporter::Context());
  reporter->ReportRuns({RunOf("case/a")});
  PublishOnFirstSignal((*file)->snapshot_path().c_str(), (*file)->Target().c_str());
  InstallInterruptHandlers();
  std::raise(SIGTERM);  // recorded, not fatal: the first signal
  EXPECT_EQ(InterruptSignal(), SIGTERM);
  // Killed now (as mpirun's follow-up would), the target holds the case.
  nlohmann::json published = Read(path);
  ASSERT_FALSE(published.is_discarded()) << "the target is not the snapshot";
  EXPECT_EQ(published.at("benchmarks").size(), 1u);
  EXPECT_TRUE(published.at("context").contains("interrupted"));
  (*file)->Abandon();
  EXPECT_FALSE(std::filesystem::exists((*file)->snapshot_path()));
}

}  // namespace
}  // namespace cnnbench::bench
