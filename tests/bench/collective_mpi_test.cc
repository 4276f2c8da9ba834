// The collective cases over MPI with a fault injected. Run plainly (as
// `bazel test` runs it), the launcher starts this binary again under
// `mpirun -np 2`; under mpirun every rank runs each collective's case over
// its MPI communicator, rank 1 spoiling one element of its out-of-place
// result: every rank's case must fail (not only rank 1's), the wrong
// elements summed over the group, the spoiled rank naming its element.
#include <unistd.h>

#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bench/cases/collective/collective_cases.h"
#include "bench/harness/harness.h"
#include "benchmark/benchmark.h"
#include "gtest/gtest.h"
#include "kernels/collectives/mpi.h"
#include "tests/bench/logging_communicator.h"
#include "tests/bench/recorder.h"
#include "tests/testing/mpi_job.h"

namespace cnnbench::bench {
namespace {

using testing_comm::Log;
using testing_comm::LoggingCommunicator;
using testing_comm::Spoil;

TEST(CollectiveMpiRankTest, AFaultOnOneRankFailsTheCaseOnEveryRank) {
  if (!MpiEnvironment::Launched()) GTEST_SKIP() << "runs on each rank under mpirun";
  for (Collective collective : kCollectives) {
    Log log;
    log.calls.assign(2, 0);
    log.threads.assign(2, {});
    CollectiveCase spec;
    spec.collective = collective;
    spec.bytes = 1024;
    spec.root = 1;  // a reduce's result is the root's only
    spec.warmup = 1;
    spec.iterations = 2;
    TimedCase c = CollectiveTimedCase("collective_mpi_test/case", spec);
    c.prepare = [&log, spec]() -> absl::StatusOr<std::unique_ptr<Workload>> {
      auto mpi = CreateMpiCommunicator(CommunicatorOptions{.timeout = absl::Seconds(20)});
      if (!mpi.ok()) return mpi.status();
      std::vector<std::unique_ptr<Communicator>> comms;
      comms.push_back(std::make_unique<LoggingCommunicator>(*std::move(mpi), log,
                                                            /*spoiled_rank=*/1, Spoil::kOutOfPlace,
                                                            /*delta=*/1.0f));
      return PrepareCollectiveWorkload(std::move(comms), spec);
    };
    const std::vector<BenchRun> runs = RunOneCase(std::move(c), TimingSettings{.repetitions = 1});
    const std::string what(CollectiveName(collective));
    ASSERT_EQ(runs.size(), 1u) << what;
    const BenchRun& r = runs[0];
    EXPECT_TRUE(r.error_occurred) << what << ": every rank must fail";
    EXPECT_TRUE(absl::StrContains(r.error_message,
                                  "wrong elements: 1 out of place, 0 in place, "
                                  "over the group"))
        << what << ": " << r.error_message;
    auto self = MpiEnvironment::Get();
    ASSERT_TRUE(self.ok());
    const bool spoiled = (*self)->rank() == 1;
    EXPECT_EQ(absl::StartsWith(r.error_message, "out-of-place result wrong at rank 1 element 3"),
              spoiled)
        << what << ": " << r.error_message;
    if (!spoiled) {
      EXPECT_TRUE(absl::StrContains(r.error_message, "this rank's are right")) << r.error_message;
    }
  }
  benchmark::ClearRegisteredBenchmarks();
}

TEST(CollectiveMpiLaunchTest, TwoRanksEachFailTheSpoiledCases) {
  if (MpiEnvironment::Launched()) GTEST_SKIP() << "the launcher runs outside mpirun";
  const std::string mpirun = cnnbench::testing::FindMpirun();
  if (mpirun.empty()) GTEST_SKIP() << "mpirun is not on PATH: install OpenMPI (openmpi-bin)";
  char self[PATH_MAX] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  ASSERT_GT(length, 0);
  const cnnbench::testing::MpiJob job =
      cnnbench::testing::RunMpiJob(mpirun, 2,
                                   absl::StrCat(std::string(self, static_cast<size_t>(length)),
                                                " --gtest_filter=CollectiveMpiRankTest.*"));
  EXPECT_EQ(job.exit_code, 0) << job.output;
  size_t passed = 0;
  for (size_t at = job.output.find("[  PASSED  ]"); at != std::string::npos;
       at = job.output.find("[  PASSED  ]", at + 1))
    ++passed;
  EXPECT_EQ(passed, 2u) << job.output;
  EXPECT_FALSE(absl::StrContains(job.output, "[  FAILED  ]")) << job.output;
  EXPECT_FALSE(absl::StrContains(job.output, "[  SKIPPED ]")) << job.output;
}

}  // namespace
}  // namespace cnnbench::bench

// Run plainly, only the launcher; under mpirun, what its filter asks for.
int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (!cnnbench::MpiEnvironment::Launched() && testing::GTEST_FLAG(filter) == "*")
    testing::GTEST_FLAG(filter) = "CollectiveMpiLaunchTest.*";
  return RUN_ALL_TESTS();
}
