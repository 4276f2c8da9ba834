// The mpi group. Run plainly (as `bazel test` runs it), only the
// MpiLaunchTest cases run: they start this binary again under `mpirun -np 2`
// and `-np 1` and check the job's exit status and output; under mpirun, the
// MpiRankTest cases run on every rank: every collective in every dtype against the values computed
// here, calls the ranks disagree on, and a rank that skips a call.
#include "kernels/collectives/mpi.h"

#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/device.h"
#include "gtest/gtest.h"
#include "kernels/collectives/communicator.h"
#include "tests/kernels/collectives/collective_checks.h"
#include "tests/testing/mpi_job.h"

namespace cnnbench {
namespace {

using collective_test::AllGatherAndCheck;
using collective_test::AllReduceAndCheck;
using collective_test::AllToAllAndCheck;
using collective_test::ScatterAndCheck;
using collective_test::GatherAndCheck;
using collective_test::AnyCall;
using collective_test::BroadcastAndCheck;
using collective_test::FirstFailureOverReductions;
using collective_test::kAllDTypes;
using collective_test::kDTypes;
using collective_test::kOps;
using collective_test::ReduceAndCheck;
using collective_test::ReduceScatterAndCheck;
using collective_test::RunAny;

// 37 and 1001 do not divide between 2 ranks.
constexpr size_t kCounts[] = {0, 1, 37, 1001};
// Long enough never to fire in a healthy run; short enough that a rank left
// waiting by a failed check on another ends the job as a failure.
constexpr absl::Duration kTestTimeout = absl::Seconds(20);

#define SKIP_UNLESS_UNDER_MPIRUN()                  \
  if (!MpiEnvironment::Launched())                  \
  GTEST_SKIP() << "runs on each rank under mpirun " \
                  "(MpiLaunchTest starts it)"

// ---- Under mpirun: every rank runs these, in this order. ----

std::unique_ptr<Communicator> NewCommunicator(absl::Duration timeout = kTestTimeout) {
  auto comm = CreateMpiCommunicator(CommunicatorOptions{.timeout = timeout});
  EXPECT_TRUE(comm.ok()) << comm.status();
  return comm.ok() ? std::move(comm).value() : nullptr;
}

TEST(MpiRankTest, EnvironmentMatchesTheLauncher) {
  SKIP_UNLESS_UNDER_MPIRUN();
  auto env = MpiEnvironment::Get();
  ASSERT_TRUE(env.ok()) << env.status();
  const MpiEnvironment& e = **env;
  if (const char* size = std::getenv("OMPI_COMM_WORLD_SIZE")) {
    EXPECT_EQ(e.size(), std::atoi(size));
  }
  if (const char* rank = std::getenv("OMPI_COMM_WORLD_RANK")) {
    EXPECT_EQ(e.rank(), std::atoi(rank));
  }
  if (const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK")) {
    EXPECT_EQ(e.local_rank(), std::atoi(local));
  }
  EXPECT_EQ(e.local_size(), e.size());  // one host
  ASSERT_EQ(e.host_names().size(), static_cast<size_t>(e.size()));
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  for (const std::string& name : e.host_names()) EXPECT_EQ(name, host);
  EXPECT_TRUE(absl::StrContains(e.library_version(), "Open MPI")) << e.library_version();
  auto again = MpiEnvironment::Get();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *env);
  // The launcher test looks for this line from every rank.
  std::printf("mpi rank %d of %d on %s: %s\n", e.rank(), e.size(), e.host_name().c_str(),
              e.library_version().c_str());
  std::fflush(stdout);
}

TEST(MpiRankTest, AllReduceAndReduceScatterEveryDTypeAndOpInAndOutOfPlace) {
  SKIP_UNLESS_UNDER_MPIRUN();
  auto comm = NewCommunicator();
  ASSERT_NE(comm, nullptr);
  EXPECT_EQ(comm->name(), "mpi");
  const Stream stream = Stream::Cpu();
  // Every rank makes every call, whatever failed before (stopping would
  // leave the others waiting); the first failure is reported.
  for (auto check : {AllReduceAndCheck, ReduceScatterAndCheck})
    EXPECT_EQ(
        FirstFailureOverReductions(kCounts,
                                   [&](DType dtype, ReduceOp op, size_t count, bool in_place) {
                                     return check(*comm, stream, dtype, op, count, in_place);
                                   }),
        "");
}

TEST(MpiRankTest, IntegerSumsWrapAroundAndAveragesTruncate) {
  SKIP_UNLESS_UNDER_MPIRUN();
  auto comm = NewCommunicator();
  ASSERT_NE(comm, nullptr);
  int32_t values[2] = {comm->rank() == 0 ? INT32_MAX : 1, comm->rank() == 0 ? 3 : 0};
  ASSERT_TRUE(comm->AllReduce(values, values, 1, DType::kI32, ReduceOp::kSum, Stream::Cpu()).ok());
  if (comm->size() == 2) {
    EXPECT_EQ(values[0], INT32_MIN);
  }
  ASSERT_TRUE(
      comm->AllReduce(values + 1, values + 1, 1, DType::kI32, ReduceOp::kAvg, Stream::Cpu()).ok());
  EXPECT_EQ(values[1], 3 / comm->size());
}

TEST(MpiRankTest, BroadcastFromEveryRootInEveryDTypeInAndOutOfPlace) {
  SKIP_UNLESS_UNDER_MPIRUN();
  auto comm = NewCommunicator();
  ASSERT_NE(comm, nullptr);
  std::string failure;
  for (DType dtype : kAllDTypes)
    for (size_t count : kCounts)
      for (int root = 0; root < comm->size(); ++root)
        for (bool in_place : {true, false}) {
          std::string f = BroadcastAndCheck(*comm, Stream::Cpu(), dtype, count, root, in_place);
          if (failure.empty()) failure = f;
        }
  EXPECT_EQ(failure, "");
}

TEST(MpiRankTest, GatherAndScatterFromEveryRootInEveryDType) {
  SKIP_UNLESS_UNDER_MPIRUN();
  auto comm = NewCommunicator();
  ASSERT_NE(comm, nullptr);
  std::string failure;
  for (auto check : {GatherAndCheck, ScatterAndCheck})
    for (DType dtype : kAllDTypes)
      for (size_t count : kCounts)
        for (int root = 0; root < comm->size(); ++root)
          for (bool in_place : {false, true})
            for (bool null_elsewhere : {false, true}) {
              std::string f =
                  check(*comm, Stream::Cpu(), dtype, count, root, in_place, null_elsewhere);
              if (failure.empty()) failure = f;
            }
  EXPECT_EQ(failure, "");
}

TEST(MpiRankTest, AllToAllInEveryDType) {
  SKIP_UNLESS_UNDER_MPIRUN();
  auto comm = NewCommunicator();
  ASSERT_NE(comm, nullptr);
  std::string failure;
  for (DType dtype : kAllDTypes)
    for (size_t count : kCounts) {
      std::string f = AllToAllAndCheck(*comm, Stream::Cpu(), dtype, count);
      if (failure.empty()) failure = f;
    }
  EXPECT_EQ(failure, "");
}

TEST(MpiRankTest, AllGatherInEveryDTypeInAndOutOfPlace) {
  SKIP_UNLESS_UNDER_MPIRUN();
  auto comm = NewCommunicator();
  ASSERT_NE(comm, nullptr);
  std::string failure;
  for (DType dtype : kAllDTypes)
    for (size_t count : kCounts)
      for (bool in_place : {false, true}) {
        std::string f = AllGatherAndCheck(*comm, Stream::Cpu(), dtype, count, in_place);
        if (failure.empty()) failure = f;
      }
  EXPECT_EQ(failure, "");
}

TEST(MpiRankTest, ReduceToEveryRootInEveryDTypeAndOp) {
  SKIP_UNLESS_UNDER_MPIRUN();
  auto comm = NewCommunicator();
  ASSERT_NE(comm, nullptr);
  std::string failure;
  for (int root = 0; root < comm->size(); ++root)
    for (bool null_elsewhere : {false, true}) {
      std::string f = FirstFailureOverReductions(
          kCounts, [&](DType dtype, ReduceOp op, size_t count, bool in_place) {
            return ReduceAndCheck(*comm, Stream::Cpu(), dtype, op, count, root, in_place,
                                  null_elsewhere);
          });
      if (failure.empty()) failure = std::move(f);
    }
  EXPECT_EQ(failure, "");
}

TEST(MpiRankTest, MismatchedReductionsFailOnEveryRank) {
  SKIP_UNLESS_UNDER_MPIRUN();
  auto comm = NewCommunicator();
  ASSERT_NE(comm, nullptr);
  if (comm->size() < 2) GTEST_SKIP() << "needs two ranks to disagree";
  const AnyCall reduce{.collective = Collective::kReduce, .root = 0};
  const AnyCall odd_root{.collective = Collective::kReduce, .root = 1};
  const absl::Status status = RunAny(*comm, comm->rank() == 1 ? odd_root : reduce);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "root")) << status;
  // The communicator goes on.
  EXPECT_TRUE(RunAny(*comm, AnyCall{.collective = Collective::kReduceScatter}).ok());
}

TEST(MpiRankTest, CallsTheRanksDisagreeOnFailOnEveryRankAndTheCommunicatorGoesOn) {
  SKIP_UNLESS_UNDER_MPIRUN();
  auto comm = NewCommunicator();
  ASSERT_NE(comm, nullptr);
  if (comm->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  struct Case {
    AnyCall common;     // every rank but the last
    AnyCall odd;        // the last rank
    const char* named;  // the range the message reports
  };
  const bool odd = comm->rank() == comm->size() - 1;
  const AnyCall broadcast{.collective = Collective::kBroadcast, .root = 0};
  for (const Case& c : {Case{AnyCall{}, AnyCall{.count = 10}, "count from 8 to 10"},
                        Case{AnyCall{}, AnyCall{.dtype = DType::kF64}, "dtype from fp32 to fp64"},
                        Case{broadcast, AnyCall{.collective = Collective::kBroadcast, .root = 1},
                             "root from 0 to 1"},
                        Case{AnyCall{}, AnyCall{.collective = Collective::kAllGather},
                             "collective from all-reduce to all-gather"}}) {
    absl::Status s = RunAny(*comm, odd ? c.odd : c.common);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.named << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "disagree")) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), c.named)) << s;
    s = RunAny(*comm, c.common);  // the communicator goes on
    EXPECT_TRUE(s.ok()) << c.named << ": " << s;
  }
  // A different op: both ranks name it.
  float value = 1;
  absl::Status s = comm->AllReduce(&value, &value, 1, DType::kF32,
                                   odd ? ReduceOp::kMax : ReduceOp::kSum, Stream::Cpu());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "op from sum to max")) << s;
}

TEST(MpiRankTest, OneRanksBadCallFailsEveryRank) {
  SKIP_UNLESS_UNDER_MPIRUN();
  auto comm = NewCommunicator();
  ASSERT_NE(comm, nullptr);
  if (comm->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  // Rank 1 passes a null send buffer.
  float data[4] = {1, 2, 3, 4};
  absl::Status s = comm->AllReduce(comm->rank() == 1 ? nullptr : data, data, 4, DType::kF32,
                                   ReduceOp::kSum, Stream::Cpu());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), comm->rank() == 1 ? "null" : "rank 1 refused")) << s;
  // A dtype no rank can reduce: Unimplemented on every rank.
  uint8_t bytes[4] = {};
  s = comm->AllReduce(bytes, bytes, 4, DType::kU8, ReduceOp::kSum, Stream::Cpu());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), "unsupported: ")) << s;
  // A root outside the group.
  s = comm->Broadcast(data, data, 4, DType::kF32, comm->size(), Stream::Cpu());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "is not a rank")) << s;
  EXPECT_TRUE(comm->AllReduce(data, data, 4, DType::kF32, ReduceOp::kSum, Stream::Cpu()).ok());
}

TEST(MpiRankTest, ARankThatSkipsACallTimesOutRankZeroAndBreaksItsCommunicator) {
  SKIP_UNLESS_UNDER_MPIRUN();
  auto comm = NewCommunicator(absl::Seconds(1));
  ASSERT_NE(comm, nullptr);
  if (comm->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  if (comm->rank() == 0) {
    float value = 1;
    absl::Status s = comm->AllReduce(&value, &value, 1, DType::kF32, ReduceOp::kSum, Stream::Cpu());
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "mpi all-reduce timed out after 1s: rank")) << s;
    // Each late rank with its host.
    auto env = MpiEnvironment::Get();
    ASSERT_TRUE(env.ok());
    const std::string late = absl::StrCat("1 (on ", (*env)->host_names()[1], ")");
    const std::string missing = comm->size() == 2 ? absl::StrCat("rank ", late, " did not arrive")
                                                  : absl::StrCat("ranks ", late, ", ");
    EXPECT_TRUE(absl::StrContains(s.message(), missing)) << s;
    // Broken: fails at once (waiting would end in DeadlineExceeded).
    s = comm->Broadcast(&value, &value, 1, DType::kF32, 0, Stream::Cpu());
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "broken")) << s;
  }
  // Rank 1 skipped the call. Creating a new communicator waits for every
  // rank, so no rank goes on before rank 0 has timed out.
  auto next = NewCommunicator();
  ASSERT_NE(next, nullptr);
  float value = 1;
  EXPECT_TRUE(next->AllReduce(&value, &value, 1, DType::kF32, ReduceOp::kSum, Stream::Cpu()).ok());
  EXPECT_EQ(value, static_cast<float>(next->size()));
}

TEST(MpiRankTest, FinalizeOnceThenNothingStartsAgain) {
  SKIP_UNLESS_UNDER_MPIRUN();
  auto comm = NewCommunicator();
  ASSERT_NE(comm, nullptr);
  auto env = MpiEnvironment::Get();
  ASSERT_TRUE(env.ok());
  EXPECT_TRUE((*env)->Finalize().ok());
  EXPECT_TRUE((*env)->Finalize().ok());  // twice is fine
  float value = 1;
  absl::Status s = comm->AllReduce(&value, &value, 1, DType::kF32, ReduceOp::kSum, Stream::Cpu());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_EQ(MpiEnvironment::Get().status().code(), absl::StatusCode::kFailedPrecondition);
}

// Run only by MpiLaunchTest.AbortEndsTheJob (disabled otherwise): rank 0
// times out waiting for rank 1 and ends the job, as a benchmark would.
TEST(MpiAbortTest, DISABLED_RankZeroAbortsTheJobAfterATimeout) {
  SKIP_UNLESS_UNDER_MPIRUN();
  auto comm = NewCommunicator(absl::Seconds(1));
  ASSERT_NE(comm, nullptr);
  if (comm->rank() == 0) {
    float value = 1;
    absl::Status s = comm->AllReduce(&value, &value, 1, DType::kF32, ReduceOp::kSum, Stream::Cpu());
    AbortMpiJob(7, s.ToString());
  }
  // Rank 1 waits for a communicator rank 0 never joins, until the abort.
  auto never = NewCommunicator(absl::Seconds(60));
  ADD_FAILURE() << "the job was not aborted";
}

// ---- Run plainly: start the binary under mpirun. ----

using Job = testing::MpiJob;

// Runs this binary as an mpirun job of `ranks` ranks with `gtest_flags`.
Job RunJob(const std::string& mpirun, int ranks, const std::string& gtest_flags) {
  char self[PATH_MAX] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) return Job{-1, "cannot read /proc/self/exe"};
  return testing::RunMpiJob(
      mpirun, ranks,
      absl::StrCat(std::string(self, static_cast<size_t>(length)), " ", gtest_flags));
}

size_t Occurrences(absl::string_view text, absl::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != absl::string_view::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

#define SKIP_UNDER_MPIRUN_OR_WITHOUT_IT(mpirun)                                       \
  if (MpiEnvironment::Launched()) GTEST_SKIP() << "the launcher runs outside mpirun"; \
  const std::string mpirun = testing::FindMpirun();                                   \
  if (mpirun.empty()) GTEST_SKIP() << "mpirun is not on PATH: install OpenMPI (openmpi-bin)"

TEST(MpiLaunchTest, TwoRanksPassEveryRankTest) {
  SKIP_UNDER_MPIRUN_OR_WITHOUT_IT(mpirun);
  const Job job = RunJob(mpirun, 2, "--gtest_filter=MpiRankTest.*");
  EXPECT_EQ(job.exit_code, 0) << job.output;
  EXPECT_EQ(Occurrences(job.output, "[  PASSED  ]"), 2u) << job.output;
  EXPECT_EQ(Occurrences(job.output, "[  FAILED  ]"), 0u) << job.output;
  EXPECT_EQ(Occurrences(job.output, "[  SKIPPED ]"), 0u) << job.output;
  for (int r = 0; r < 2; ++r)
    EXPECT_TRUE(absl::StrContains(job.output, absl::StrCat("mpi rank ", r, " of 2 on ")))
        << job.output;
}

TEST(MpiLaunchTest, OneRankWorld) {
  SKIP_UNDER_MPIRUN_OR_WITHOUT_IT(mpirun);
  const Job job = RunJob(mpirun, 1, "--gtest_filter=MpiRankTest.*");
  EXPECT_EQ(job.exit_code, 0) << job.output;
  EXPECT_EQ(Occurrences(job.output, "[  PASSED  ]"), 1u) << job.output;
  EXPECT_EQ(Occurrences(job.output, "[  FAILED  ]"), 0u) << job.output;
  EXPECT_TRUE(absl::StrContains(job.output, "mpi rank 0 of 1 on ")) << job.output;
}

TEST(MpiLaunchTest, AbortEndsTheJob) {
  SKIP_UNDER_MPIRUN_OR_WITHOUT_IT(mpirun);
  const Job job = RunJob(mpirun, 2,
                         "--gtest_also_run_disabled_tests "
                         "--gtest_filter=MpiAbortTest.DISABLED_RankZeroAbortsTheJobAfterATimeout");
  EXPECT_EQ(job.exit_code, 7) << job.output;
  EXPECT_TRUE(absl::StrContains(job.output, "aborting the MPI job (exit code 7)")) << job.output;
  EXPECT_TRUE(absl::StrContains(job.output, "rank 1 (on ")) << job.output;
  EXPECT_TRUE(absl::StrContains(job.output, ") did not arrive")) << job.output;
  EXPECT_EQ(Occurrences(job.output, "the job was not aborted"), 0u) << job.output;
}

}  // namespace
}  // namespace cnnbench

// Run plainly, only the launcher tests (the rank tests would all skip);
// under mpirun, what the launcher's --gtest_filter asks for.
int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (!cnnbench::MpiEnvironment::Launched() && testing::GTEST_FLAG(filter) == "*")
    testing::GTEST_FLAG(filter) = "MpiLaunchTest.*";
  return RUN_ALL_TESTS();
}
