// The suite as an MPI job of two processes on this machine, as a user
// starts it (`mpirun -np 2 bench/all ...`): one replica per process, rank 0
// alone writes the output; ranks that disagree fail the preflight; a rank
// that dies or stops ends the job with an error, never a hang.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bench/suite/names.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/mpi_job.h"
#include "tests/testing/suite_paths.h"

namespace cnnbench::bench {
namespace {

using cnnbench::testing::BenchBinary;
using cnnbench::testing::TempPath;

using cnnbench::testing::FindMpirun;
using cnnbench::testing::MpiJob;
using cnnbench::testing::RunMpiJob;
using cnnbench::testing::RunMpmdJob;

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

#define SKIP_WITHOUT_MPIRUN(mpirun)        \
  const std::string mpirun = FindMpirun(); \
  if (mpirun.empty()) GTEST_SKIP() << "mpirun is not on PATH: install OpenMPI (openmpi-bin)"

TEST(MpiSuiteTest, TwoProcessesRunOneReplicaEachAndRankZeroWritesTheOutput) {
  SKIP_WITHOUT_MPIRUN(mpirun);
  const std::string json_path = TempPath("mpi_run.json");
  const std::string store = TempPath("mpi_run.db");
  std::remove(json_path.c_str());
  std::remove(store.c_str());
  const MpiJob job = RunMpiJob(
      mpirun, 2,
      absl::StrCat(BenchBinary(), " --preset=tiny --families=train,allreduce,grads,gemm ",
                   "--collective_ranks=3 --benchmark_repetitions=1 --benchmark_out=", json_path,
                   " --benchmark_out_format=json --store=", store));
  ASSERT_EQ(job.exit_code, 0) << job.output;
  // Rank 0 alone keeps the run in the store.
  EXPECT_EQ(Occurrences(job.output, "stored as run "), 1u) << job.output;
  EXPECT_TRUE(absl::StrContains(job.output, "stored as run 1 of this machine")) << job.output;
  // One header and one progress line per case: rank 0's.
  EXPECT_EQ(Occurrences(job.output, "cnnbench (opt build)") +
                Occurrences(job.output, "cnnbench (fastbuild build)") +
                Occurrences(job.output, "cnnbench (dbg build)"),
            1u)
      << job.output;
  EXPECT_EQ(Occurrences(job.output, "[1/"), 1u) << job.output;
  EXPECT_TRUE(absl::StrContains(job.output,
                                "only the train, allreduce, allgather, reducescatter, broadcast, "
                                "reduce, alltoall, gather, scatter and grads families"))
      << job.output;
  std::ifstream in(json_path);
  ASSERT_TRUE(in.good()) << job.output;
  const nlohmann::json run = nlohmann::json::parse(in);
  EXPECT_EQ(run.at("context").at("ranks"), "2");
  EXPECT_EQ(run.at("context").at("hosts"), "1");
  EXPECT_TRUE(run.at("context").contains("mpi_version"));
  // Whole text: no NUL byte carried over from MPI's length.
  const std::string mpi_version = run.at("context").value("mpi_version", "");
  EXPECT_FALSE(mpi_version.empty());
  EXPECT_EQ(mpi_version.find('\0'), std::string::npos) << mpi_version;
  EXPECT_TRUE(absl::StrContains(job.output, "--collective_ranks is ignored under mpirun"))
      << job.output;
  // The platform names the host, whatever CPUs mpirun bound each rank to.
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  EXPECT_EQ(run.at("context").value("host_cpus", ""), absl::StrCat(online));
  const std::string platform = run.at("context").value("platform", "");
  EXPECT_TRUE(absl::EndsWith(platform, absl::StrCat("-", online, "c"))) << platform;
  // One host, both ranks on it.
  EXPECT_TRUE(absl::StrContains(run.at("context").value("host_facts", ""), " (ranks 0, 1; "))
      << run.at("context").dump(2);
  std::set<std::string> families;
  for (const auto& b : run.at("benchmarks")) {
    auto name = ParseCaseName(b.at("name").get<std::string>());
    ASSERT_TRUE(name.ok()) << name.status();
    EXPECT_FALSE(b.value("error_occurred", false)) << b.dump();
    families.insert(name->family);
    if (name->family == "train") {
      EXPECT_EQ(name->ToString(), "train/trivial/fp32/synthetic/batch:2/gpus:0/replicas:2");
      EXPECT_EQ(b.at("ranks").get<double>(), 2);
      EXPECT_GT(b.at("images_per_second").get<double>(), 0);
      // Both ranks' arrivals kept; one host, so one host's mean.
      if (b.value("run_type", "") == "iteration") {
        EXPECT_EQ(b.at("rank_arrival_ms").size(), 2u) << b.dump();
        EXPECT_GT(b.value("host0_arrival_ms", 0.0), 0) << b.dump();
        EXPECT_FALSE(b.contains("host1_arrival_ms")) << b.dump();
      }
    } else if (name->family == "allreduce" || name->family == "grads") {
      EXPECT_EQ(name->impl, "mpi") << name->ToString();
      EXPECT_EQ(name->ranks, 2);
      EXPECT_GT(b.at("busbw").get<double>(), 0);
    }
  }
  EXPECT_EQ(families, (std::set<std::string>{"train", "allreduce", "grads"}));
}

// A two-case all-reduce sweep under mpirun (the second case's span of 4 MiB
// calls would run for seconds), sent `signal` once case 2 has started: to
// mpirun, or with `rank` >= 0 to that rank alone. Its results file, parsed
// (discarded when absent or not JSON), and what is left in its folder.
struct SignalledSweep {
  cnnbench::testing::MpiJob job;
  nlohmann::json run;
  std::vector<std::string> files;
};

SignalledSweep RunSignalledSweep(const std::string& mpirun, const std::string& name, int signal,
                                 int rank = -1) {
  const std::string dir = TempPath(name);
  std::filesystem::remove_all(dir);
  std::filesystem::remove(dir + ".db");
  std::filesystem::create_directories(dir);
  const std::string json_path = dir + "/run.json";
  SignalledSweep sweep;
  sweep.job = cnnbench::testing::RunMpiJobSignalled(
      mpirun, 2,
      absl::StrCat(BenchBinary(),
                   " --preset=tiny --families=allreduce --collective_dtypes=fp32 "
                   "--collective_ops=sum --collective_bytes=64,4M --collective_factor=65536 "
                   "--collective_iters=4000 --collective_warmup=1 --benchmark_repetitions=1 "
                   "--benchmark_out=",
                   json_path, " --benchmark_out_format=json --store=", dir, ".db"),
      "[2/", signal, /*timeout_seconds=*/90, rank);
  std::ifstream in(json_path);
  sweep.run = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    sweep.files.push_back(entry.path().filename().string());
  return sweep;
}

// SIGTERM to mpirun while the second of two cases runs (mpirun passes it on
// to every rank and kills them a second later): the first case is in the
// output, marked interrupted, and no temporary file is left; the second
// case's ranks agree to stop between calls.
TEST(MpiSuiteTest, ASignalToMpirunKeepsTheFinishedCases) {
  SKIP_WITHOUT_MPIRUN(mpirun);
  const SignalledSweep sweep = RunSignalledSweep(mpirun, "mpi_signal", SIGTERM);
  const nlohmann::json& run = sweep.run;
  EXPECT_NE(sweep.job.exit_code, 0) << sweep.job.output;
  EXPECT_FALSE(absl::StrContains(sweep.job.output, "mpi_job: never saw")) << sweep.job.output;
  ASSERT_FALSE(run.is_discarded()) << "no results file, or not JSON\n" << sweep.job.output;
  EXPECT_TRUE(run.at("context").contains("interrupted")) << run.at("context").dump();
  std::set<std::string> names;
  for (const auto& b : run.at("benchmarks")) {
    names.insert(b.at("name").get<std::string>());
    EXPECT_FALSE(b.value("error_occurred", false)) << b.dump();
  }
  ASSERT_EQ(names.size(), 1u) << run.dump(2);
  EXPECT_TRUE(absl::StartsWith(*names.begin(), "allreduce/mpi/fp32/sum/bytes:64/ranks:2"))
      << *names.begin();
  EXPECT_EQ(sweep.files, std::vector<std::string>{"run.json"}) << "left behind";
}

// A signal to one rank other than 0 (a node's own kill, a batch system
// signalling one task): the ranks agree to stop at the same point, rank 0
// writes the finished cases, and the file and stderr say what stopped the
// run and where it arrived.
TEST(MpiSuiteTest, ASignalToOneOtherRankStopsEveryRankAndIsWritten) {
  SKIP_WITHOUT_MPIRUN(mpirun);
  const SignalledSweep sweep = RunSignalledSweep(mpirun, "mpi_rank_signal", SIGINT, /*rank=*/1);
  EXPECT_NE(sweep.job.exit_code, 0) << sweep.job.output;
  EXPECT_FALSE(absl::StrContains(sweep.job.output, "mpi_job: never saw")) << sweep.job.output;
  EXPECT_TRUE(absl::StrContains(sweep.job.output, "interrupted by SIGINT (to rank 1)"))
      << sweep.job.output;
  ASSERT_FALSE(sweep.run.is_discarded()) << "no results file, or not JSON\n" << sweep.job.output;
  EXPECT_TRUE(absl::StartsWith(sweep.run.at("context").value("interrupted", ""),
                               "SIGINT (to rank 1) after 2 of 2"))
      << sweep.run.at("context").dump();
  EXPECT_EQ(sweep.run.at("benchmarks").size(), 1u) << sweep.run.dump(2);
  EXPECT_EQ(sweep.files, std::vector<std::string>{"run.json"}) << "left behind";
  // Kept in the store before rank 0 ended the job, marked.
  EXPECT_EQ(Occurrences(sweep.job.output, "stored as run 1 of this machine"), 1u)
      << sweep.job.output;
  EXPECT_TRUE(absl::StrContains(sweep.job.output, ", marked interrupted")) << sweep.job.output;
}

// SIGTERM to mpirun's whole process group, as `timeout ... mpirun` and a
// scheduler's time limit send it (mpirun then ends the ranks at once): the
// finished case is in the file, whole, and the file says the run did not
// end (the signal, or that it was cut short), with no temporary left.
TEST(MpiSuiteTest, ASignalToMpirunsGroupKeepsTheFinishedCases) {
  SKIP_WITHOUT_MPIRUN(mpirun);
  const SignalledSweep sweep =
      RunSignalledSweep(mpirun, "mpi_group_signal", SIGTERM, cnnbench::testing::kMpirunGroup);
  EXPECT_NE(sweep.job.exit_code, 0) << sweep.job.output;
  EXPECT_FALSE(absl::StrContains(sweep.job.output, "mpi_job: never saw")) << sweep.job.output;
  ASSERT_FALSE(sweep.run.is_discarded()) << "no results file, or not JSON\n" << sweep.job.output;
  EXPECT_TRUE(sweep.run.at("context").contains("interrupted")) << sweep.run.at("context").dump();
  ASSERT_GE(sweep.run.at("benchmarks").size(), 1u) << sweep.run.dump(2);
  for (const auto& b : sweep.run.at("benchmarks")) EXPECT_FALSE(b.value("error_occurred", false));
  for (const std::string& file : sweep.files)
    EXPECT_FALSE(absl::StrContains(file, ".cnnbench-")) << "left behind: " << file;
}

// Rank 0 killed outright (a launcher's SIGKILL, the OOM killer) while the
// second case runs: the first is in the file already, marked unfinished.
TEST(MpiSuiteTest, AKillOfRankZeroLeavesTheFinishedCasesInTheFile) {
  SKIP_WITHOUT_MPIRUN(mpirun);
  const SignalledSweep sweep = RunSignalledSweep(mpirun, "mpi_rank_kill", SIGKILL, /*rank=*/0);
  EXPECT_NE(sweep.job.exit_code, 0) << sweep.job.output;
  ASSERT_FALSE(sweep.run.is_discarded()) << "no results file, or not JSON\n" << sweep.job.output;
  EXPECT_TRUE(
      absl::StartsWith(sweep.run.at("context").value("interrupted", ""), "not finished: 1 of 2"))
      << sweep.run.at("context").dump();
  EXPECT_EQ(sweep.run.at("benchmarks").size(), 1u) << sweep.run.dump(2);
}

TEST(MpiSuiteTest, RanksWithDifferentFlagsFailThePreflightOnEveryRank) {
  SKIP_WITHOUT_MPIRUN(mpirun);
  const std::string bench = BenchBinary();
  const MpiJob job =
      RunMpmdJob(mpirun, absl::StrCat("-np 1 ", bench,
                                      " --preset=tiny --families=allreduce --steps=2 : ", "-np 1 ",
                                      bench, " --preset=tiny --families=allreduce --steps=3"));
  EXPECT_NE(job.exit_code, 0) << job.output;
  // Both ranks say it, naming the rank and the field.
  EXPECT_EQ(Occurrences(job.output, "rank 1 differs from rank 0 in flags"), 2u) << job.output;
  EXPECT_TRUE(absl::StrContains(job.output, "--steps=3")) << job.output;
}

TEST(MpiSuiteTest, ARankThatDiesEndsTheJob) {
  SKIP_WITHOUT_MPIRUN(mpirun);
  const std::string bench = BenchBinary();
  const std::string args = " --preset=tiny --families=train --steps=100000";
  // Rank 1 is killed a few seconds in, in the middle of its training steps.
  const MpiJob job = RunMpmdJob(
      mpirun, absl::StrCat("-np 1 ", bench, args, " : -np 1 ", "timeout -s KILL 10 ", bench, args),
      /*timeout_seconds=*/120);
  EXPECT_NE(job.exit_code, 0) << job.output;
  EXPECT_NE(job.exit_code, 124) << "the job hung until the test's limit\n" << job.output;
}

TEST(MpiSuiteTest, ARankThatStopsArrivingTimesOutNamingIt) {
  SKIP_WITHOUT_MPIRUN(mpirun);
  const std::string bench = BenchBinary();
  const std::string args = " --preset=tiny --families=train --steps=100000 --collective_timeout=3";
  // Rank 1 is stopped (not killed) mid-run, well after MPI started even on
  // a loaded machine: rank 0 waits for it in a collective until the
  // timeout, then ends the job naming rank 1. When the stop lands inside a
  // transfer (every rank arrived and agreed), MPI cannot tell who is late,
  // and the error says that stage instead (kernels/collectives/mpi.h).
  const MpiJob job = RunMpmdJob(
      mpirun, absl::StrCat("-np 1 ", bench, args, " : -np 1 ", "timeout -s STOP 15 ", bench, args),
      /*timeout_seconds=*/120);
  EXPECT_NE(job.exit_code, 0) << job.output;
  EXPECT_NE(job.exit_code, 124) << "the job hung until the test's limit\n" << job.output;
  EXPECT_TRUE(absl::StrContains(job.output, "timed out")) << job.output;
  const bool in_transfer =
      absl::StrContains(job.output, "every rank arrived and agreed, but the transfer did not");
  EXPECT_TRUE(in_transfer || absl::StrContains(job.output, "rank 1")) << job.output;
}

}  // namespace
}  // namespace cnnbench::bench
