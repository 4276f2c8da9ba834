// The results file: the target holds every finished case as a whole file
// from the moment it finishes (rewritten through a temporary, never deleted
// first), says it is unfinished until the run's own end writes it, is
// rewritten at once by the first signal's watcher, and a final write that
// fails saves the run elsewhere and says where.
#include "bench/output/result_output.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
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

// The files in `dir` whose names hold `part`.
std::set<std::string> FilesWith(const std::string& dir, const std::string& part) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (absl::StrContains(entry.path().filename().string(), part))
      names.insert(entry.path().filename().string());
  return names;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(ResultFileTest, TheTargetHoldsEachFinishedCaseAsAWholeFileUntilTheRunsEnd) {
  const std::string dir = TempPath("as_each_finishes");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/run.json";
  std::ofstream(path) << "an earlier file";
  auto file = ResultFile::Open(path, "json");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(ReadText(path), "an earlier file") << "opening touches nothing";
  EXPECT_TRUE(FilesWith(dir, ".cnnbench-").empty()) << "no temporary waits beside the target";
  benchmark::BenchmarkReporter* reporter = (*file)->reporter();
  reporter->ReportContext(benchmark::BenchmarkReporter::Context());
  ASSERT_TRUE((*file)->Checkpoint().ok());
  EXPECT_EQ(ReadText(path), "an earlier file") << "no case finished: the target stays";
  reporter->ReportRuns({RunOf("case/a")});
  nlohmann::json first = Read(path);
  ASSERT_FALSE(first.is_discarded()) << "the target is not whole JSON";
  EXPECT_EQ(first.at("benchmarks").size(), 1u);
  EXPECT_TRUE(absl::StrContains(first.at("context").value("interrupted", ""), "1 case(s)"))
      << first.at("context").dump();
  EXPECT_EQ((*file)->cases_in_target(), 1);
  // A case's aggregates come in a call of their own: still one case.
  benchmark::BenchmarkReporter::Run mean = RunOf("case/a");
  mean.run_type = benchmark::BenchmarkReporter::Run::RT_Aggregate;
  mean.aggregate_name = "mean";
  reporter->ReportRuns({mean});
  EXPECT_EQ((*file)->cases_in_target(), 1);
  reporter->ReportRuns({RunOf("case/b")});
  nlohmann::json second = Read(path);
  ASSERT_FALSE(second.is_discarded());
  EXPECT_EQ(second.at("benchmarks").size(), 3u);
  EXPECT_EQ((*file)->cases_in_target(), 2);
  reporter->Finalize();
  ASSERT_TRUE((*file)->Commit().ok());
  nlohmann::json written = Read(path);
  ASSERT_FALSE(written.is_discarded());
  EXPECT_EQ(written.at("benchmarks").size(), 3u);
  EXPECT_FALSE(written.at("context").contains("interrupted")) << "the run's end says it ended";
  // Nothing after Commit rewrites it (a late signal's watcher).
  ASSERT_TRUE((*file)->Checkpoint().ok());
  EXPECT_FALSE(Read(path).at("context").contains("interrupted"));
  EXPECT_TRUE(FilesWith(dir, ".cnnbench-").empty());
}

TEST(ResultFileTest, ThePartialNoteSaysWhatStoppedTheRun) {
  const std::string path = TempPath("partial_note.json");
  std::filesystem::remove(path);
  auto file = ResultFile::Open(path, "json");
  ASSERT_TRUE(file.ok()) << file.status();
  std::string why = "still running";
  (*file)->SetPartialNote([&why](int cases) { return absl::StrCat(why, ": ", cases); });
  benchmark::BenchmarkReporter* reporter = (*file)->reporter();
  reporter->ReportContext(benchmark::BenchmarkReporter::Context());
  reporter->ReportRuns({RunOf("case/a")});
  EXPECT_EQ(Read(path).at("context").value("interrupted", ""), "still running: 1");
  why = "SIGTERM";
  ASSERT_TRUE((*file)->Checkpoint().ok());
  EXPECT_EQ(Read(path).at("context").value("interrupted", ""), "SIGTERM: 1");
}

// The first stop signal wakes the watcher, whose work (here: the file's
// checkpoint) runs on its own thread, not in the handler.
TEST(ResultFileTest, TheFirstSignalRewritesTheTargetAtOnce) {
  const std::string path = TempPath("first_signal.json");
  std::filesystem::remove(path);
  auto file = ResultFile::Open(path, "json");
  ASSERT_TRUE(file.ok()) << file.status();
  (*file)->SetPartialNote([](int cases) {
    return absl::StrCat(InterruptSignal() != 0 ? SignalName(InterruptSignal()) : "running",
                        " after ", cases);
  });
  benchmark::BenchmarkReporter* reporter = (*file)->reporter();
  reporter->ReportContext(benchmark::BenchmarkReporter::Context());
  reporter->ReportRuns({RunOf("case/a")});
  EXPECT_EQ(Read(path).at("context").value("interrupted", ""), "running after 1");
  InstallInterruptHandlers();
  {
    FirstSignalWatcher watcher([&file] { (*file)->Checkpoint().IgnoreError(); });
    std::raise(SIGHUP);  // recorded, not fatal: the first signal
    EXPECT_EQ(InterruptSignal(), SIGHUP);
  }  // joins the watcher: its work has run
  EXPECT_EQ(Read(path).at("context").value("interrupted", ""), "SIGHUP after 1");
  EXPECT_EQ(StopSignal(), SIGHUP);
  EXPECT_EQ(StopDescription(), "SIGHUP");
}

// Every rewrite fails once the folder is gone: the first failure is said,
// the run goes on, and the final write saves the whole run elsewhere and
// names it.
TEST(ResultFileTest, AFinalWriteThatFailsSavesTheRunElsewhereAndSaysWhere) {
  const std::string dir = TempPath("vanishing");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string rescue_dir = TempPath("rescue");
  std::filesystem::remove_all(rescue_dir);
  std::filesystem::create_directories(rescue_dir);
  ASSERT_EQ(::setenv("TMPDIR", rescue_dir.c_str(), 1), 0);
  auto file = ResultFile::Open(dir + "/run.json", "json");
  ASSERT_TRUE(file.ok()) << file.status();
  benchmark::BenchmarkReporter* reporter = (*file)->reporter();
  reporter->ReportContext(benchmark::BenchmarkReporter::Context());
  reporter->ReportRuns({RunOf("case/a")});
  EXPECT_EQ((*file)->cases_in_target(), 1);
  std::filesystem::remove_all(dir);
  reporter->ReportRuns({RunOf("case/b")});  // cannot update: said, not fatal
  EXPECT_FALSE((*file)->Checkpoint().ok());
  EXPECT_EQ((*file)->cases_in_target(), 1);
  reporter->Finalize();
  const absl::Status written = (*file)->Commit();
  ASSERT_FALSE(written.ok());
  const std::string rescued = (*file)->rescue_path();
  ASSERT_FALSE(rescued.empty()) << written;
  EXPECT_TRUE(absl::StartsWith(rescued, rescue_dir + "/run.json.cnnbench-rescued-")) << rescued;
  EXPECT_TRUE(absl::StrContains(written.message(), rescued)) << written;
  EXPECT_TRUE(absl::StrContains(written.message(), "holds the first 1 case(s)")) << written;
  nlohmann::json saved = Read(rescued);
  ASSERT_FALSE(saved.is_discarded());
  EXPECT_EQ(saved.at("benchmarks").size(), 2u);
  EXPECT_FALSE(saved.at("context").contains("interrupted"));
  ::unsetenv("TMPDIR");
}

TEST(ResultFileTest, AFolderOrAMissingFolderIsRefusedAtOpen) {
  EXPECT_FALSE(ResultFile::Open(TempPath(""), "json").ok());
  const absl::StatusOr<std::unique_ptr<ResultFile>> missing =
      ResultFile::Open(TempPath("no/such/folder/run.json"), "json");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "No such file")) << missing.status();
}

}  // namespace
}  // namespace cnnbench::bench
