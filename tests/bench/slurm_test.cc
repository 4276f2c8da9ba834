// The suite launched by a real Slurm (tests/testing/slurm_cluster.h: one
// node, this machine, started and stopped here; root only, skipped
// elsewhere or without the packages, with the reason): `srun --mpi=pmix -n
// 2` (Debian's Open MPI has the PMIx client only) and `salloc -n 2 mpirun`
// each run the collectives and a 2-rank training case, with the job's
// SLURM_* facts in the context; a job stopped by its time limit (SIGTERM,
// then SIGKILL after KillWait) keeps its finished cases in the file and
// the store. About 90 s, most of it waiting for the time limit.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/mpi_job.h"
#include "tests/testing/shell.h"
#include "tests/testing/slurm_cluster.h"
#include "tests/testing/suite_paths.h"

namespace cnnbench::bench {
namespace {

using cnnbench::testing::BenchBinary;
using cnnbench::testing::RunfilePath;
using cnnbench::testing::SlurmCluster;
using cnnbench::testing::TempPath;

struct Job {
  int exit_code = -1;
  std::string output;
  nlohmann::json run;  // discarded when absent or not JSON
  std::string stored;  // `history runs` on the run's store
};

class SlurmTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto started = SlurmCluster::Start(/*kill_wait_seconds=*/5);
    if (started.ok()) {
      cluster_ = started->release();
    } else {
      why_ = new std::string(started.status().message());
    }
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void SetUp() override {
    if (cluster_ == nullptr) GTEST_SKIP() << "no Slurm here: " << *why_;
  }

  // `launcher` (srun or salloc ... mpirun) running the suite with `args`,
  // its results in a fresh folder.
  Job Run(const std::string& name, const std::string& launcher, const std::string& args,
          int timeout_seconds) {
    const std::string dir = TempPath(name);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string json = dir + "/run.json", store = dir + "/store.db";
    Job job;
    const std::string command =
        absl::StrCat("timeout -k 5 ", timeout_seconds, " ", cnnbench::testing::JobEnvironment(dir),
                     cluster_->Env(), " ", launcher, " ", BenchBinary(), " ", args,
                     " --benchmark_out=", json, " --benchmark_out_format=json --store=", store);
    job.output = absl::StrCat("$ ", command, "\n",
                              cnnbench::testing::CaptureOutput(command, &job.exit_code));
    std::ifstream in(json);
    job.run = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    job.stored = cnnbench::testing::CaptureOutput(
        absl::StrCat(RunfilePath("tools/history"), " runs --store=", store));
    return job;
  }

  // A finished 2-rank run with the collectives and training, and the job's
  // facts in its context.
  void ExpectRanOverSlurm(const Job& job) {
    ASSERT_EQ(job.exit_code, 0) << job.output << cluster_->Logs();
    ASSERT_FALSE(job.run.is_discarded()) << job.output;
    const nlohmann::json& context = job.run.at("context");
    EXPECT_EQ(context.at("ranks"), "2");
    EXPECT_FALSE(context.value("slurm_job_id", "").empty()) << context.dump(2);
    EXPECT_EQ(context.value("slurm_job_nodelist", ""), cluster_->node()) << context.dump(2);
    EXPECT_EQ(context.value("slurm_ntasks", ""), "2") << context.dump(2);
    int train = 0, collectives = 0;
    for (const auto& b : job.run.at("benchmarks")) {
      EXPECT_FALSE(b.value("error_occurred", false)) << b.dump();
      const std::string name = b.at("name");
      if (absl::StartsWith(name, "train/trivial/fp32/synthetic/batch:2/gpus:0/replicas:2")) ++train;
      if (absl::StrContains(name, "/mpi/") && absl::StrContains(name, "/ranks:2")) ++collectives;
    }
    EXPECT_GT(train, 0) << job.run.dump(2);
    EXPECT_GT(collectives, 0) << job.run.dump(2);
    EXPECT_TRUE(absl::StrContains(job.stored, "1 run(s) in")) << job.stored;
  }

  static SlurmCluster* cluster_;
  static std::string* why_;
};

SlurmCluster* SlurmTest::cluster_ = nullptr;
std::string* SlurmTest::why_ = nullptr;

constexpr char kSuite[] =
    "--preset=tiny --families=allreduce,allgather,alltoall,grads,train --benchmark_repetitions=1";

TEST_F(SlurmTest, SrunWithPmixRunsTheSuiteAsTwoTasks) {
  ExpectRanOverSlurm(Run("srun", "srun --mpi=pmix -n 2", kSuite, 180));
}

TEST_F(SlurmTest, MpirunInsideSallocRunsTheSuite) {
  ExpectRanOverSlurm(
      Run("salloc", "salloc -n 2 mpirun --allow-run-as-root --oversubscribe", kSuite, 180));
}

// A sweep far longer than its one-minute limit: Slurm sends both tasks
// SIGTERM (then SIGKILL after KillWait, 5 s here); the ranks stop at the
// same call, rank 0 writes the finished cases, whole, and keeps the run.
TEST_F(SlurmTest, ATimeLimitKeepsTheFinishedCases) {
  const Job job = Run("time_limit", "srun --mpi=pmix -n 2 --time=1",
                      "--preset=tiny --families=allreduce --collective_bytes=64,256K "
                      "--collective_factor=4 --collective_dtypes=fp32,fp64,int32,int64 "
                      "--collective_ops=all --collective_iters=100000 --collective_warmup=1 "
                      "--benchmark_repetitions=1",
                      240);
  EXPECT_NE(job.exit_code, 0) << job.output;
  EXPECT_NE(job.exit_code, 124) << "the job outlived its time limit\n" << job.output;
  EXPECT_TRUE(absl::StrContains(job.output, "DUE TO TIME LIMIT")) << job.output;
  ASSERT_FALSE(job.run.is_discarded()) << "no results file, or not JSON\n" << job.output;
  EXPECT_TRUE(absl::StartsWith(job.run.at("context").value("interrupted", ""), "SIGTERM"))
      << job.run.at("context").dump(2);
  ASSERT_GE(job.run.at("benchmarks").size(), 1u) << job.output;
  for (const auto& b : job.run.at("benchmarks")) {
    EXPECT_FALSE(b.value("error_occurred", false)) << b.dump();
    EXPECT_GT(b.value("busbw", 0.0), 0) << b.dump();
  }
  EXPECT_TRUE(absl::StrContains(job.stored, "1 run(s) in")) << job.stored << job.output;
  EXPECT_TRUE(absl::StrContains(job.stored, "(interrupted)")) << job.stored;
}

}  // namespace
}  // namespace cnnbench::bench
