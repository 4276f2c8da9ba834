// Data-parallel replicas as processes: run plainly (as `bazel test` does),
// the launcher test starts this binary again as a 2-process MPI job; under
// mpirun each rank trains one replica over the mpi communicator and checks
// that after k steps its weights match one trainer at the global batch (which
// every rank also runs, alone), and that every rank holds the same bits.
#include <unistd.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "kernels/collectives/mpi.h"
#include "tests/testing/mpi_job.h"
#include "tests/testing/two_hosts.h"
#include "tests/train/small_cnn.h"
#include "train/data_parallel.h"

namespace cnnbench {
namespace {

constexpr int kSteps = 3;
constexpr int kBatch = 6;  // per replica

std::vector<float> Weights(Trainer& trainer) {
  std::vector<float> w(trainer.gradient_bytes() / sizeof(float));
  std::memcpy(w.data(), trainer.parameters(), trainer.gradient_bytes());
  return w;
}

TrainOptions Options() {
  TrainOptions o;
  o.learning_rate = 0.05;
  o.weight_decay = 1e-4;
  return o;
}

// Disabled in a plain run: the launcher runs it on every rank of its job.
TEST(MpiReplicaTest, DISABLED_ReplicasMatchOneTrainerAtTheGlobalBatch) {
  if (!MpiEnvironment::Launched()) GTEST_SKIP() << "runs on each rank under mpirun";
  auto comm = CreateMpiCommunicator(CommunicatorOptions{.timeout = absl::Seconds(60)});
  ASSERT_TRUE(comm.ok()) << comm.status();
  const int rank = (*comm)->rank(), ranks = (*comm)->size();
  auto backend = CreateBackend("reference", Device::Cpu());
  ASSERT_TRUE(backend.ok());
  DataParallelOptions dp;
  dp.bucket_bytes = 4096;
  auto replica = Replica::Create(train_test::SmallCnn(kBatch, false), backend->get(), Options(),
                                 comm->get(), dp);
  ASSERT_TRUE(replica.ok()) << replica.status();
  ASSERT_TRUE((*replica)->SyncInitialWeights().ok());
  std::vector<float> losses;
  for (int s = 0; s < kSteps; ++s) {
    std::vector<float> images;
    std::vector<int32_t> labels;
    train_test::MakeBatch(100 + s, &images, &labels, ranks * kBatch);
    const size_t per_image = images.size() / (ranks * kBatch);
    ASSERT_TRUE(
        (*replica)
            ->SetBatch(images.data() + rank * kBatch * per_image, labels.data() + rank * kBatch)
            .ok());
    ASSERT_TRUE((*replica)->Step().ok());
    auto loss = (*replica)->GlobalLoss();
    ASSERT_TRUE(loss.ok()) << loss.status();
    losses.push_back(*loss);
  }
  EXPECT_GT((*replica)->buckets().size(), 1u);
  const std::vector<float> mine = Weights((*replica)->trainer());

  // The same steps by one trainer at the global batch.
  auto single_backend = CreateBackend("reference", Device::Cpu());
  ASSERT_TRUE(single_backend.ok());
  auto single = Trainer::Compile(train_test::SmallCnn(ranks * kBatch, false), single_backend->get(),
                                 Options());
  ASSERT_TRUE(single.ok()) << single.status();
  for (int s = 0; s < kSteps; ++s) {
    std::vector<float> images;
    std::vector<int32_t> labels;
    train_test::MakeBatch(100 + s, &images, &labels, ranks * kBatch);
    ASSERT_TRUE((*single)->SetBatch(images.data(), labels.data()).ok());
    auto loss = train_test::StepAndLoss(**single);
    ASSERT_TRUE(loss.ok());
    EXPECT_NEAR(losses[s], *loss, 1e-5 * (1 + *loss)) << "step " << s;
  }
  const std::vector<float> expected = Weights(**single);
  ASSERT_EQ(mine.size(), expected.size());
  double worst = 0;
  for (size_t i = 0; i < mine.size(); ++i)
    worst =
        std::max(worst, std::fabs(double{mine[i]} - expected[i]) / (1 + std::fabs(expected[i])));
  EXPECT_LT(worst, 1e-5) << "rank " << rank;

  // Every rank holds the same bits: rank 0's weights broadcast and compared.
  std::vector<float> rank0 = mine;
  ASSERT_TRUE(
      (*comm)
          ->Broadcast(rank0.data(), rank0.data(), rank0.size(), DType::kF32, 0, Stream::Cpu())
          .ok());
  EXPECT_EQ(0, std::memcmp(rank0.data(), mine.data(), mine.size() * sizeof(float)))
      << "rank " << rank;
  std::printf("replica rank %d of %d: max relative difference %g\n", rank, ranks, worst);
}

TEST(MpiReplicaLaunch, TwoProcesses) {
  if (MpiEnvironment::Launched()) GTEST_SKIP() << "the launcher runs outside mpirun";
  const std::string mpirun = testing::FindMpirun();
  if (mpirun.empty()) GTEST_SKIP() << "mpirun is not on PATH: install OpenMPI (openmpi-bin)";
  char self[PATH_MAX] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  ASSERT_GT(length, 0);
  const testing::MpiJob job = testing::RunMpiJob(
      mpirun, 2,
      absl::StrCat(self, " --gtest_also_run_disabled_tests --gtest_filter=MpiReplicaTest.*"));
  EXPECT_EQ(job.exit_code, 0) << job.output;
  for (int r = 0; r < 2; ++r)
    EXPECT_TRUE(absl::StrContains(job.output, absl::StrCat("replica rank ", r, " of 2")))
        << job.output;
  EXPECT_FALSE(absl::StrContains(job.output, "[  FAILED  ]")) << job.output;
}

// The same replicas, one on each of two hosts over TCP (network
// namespaces: root only, skipped elsewhere with the reason): the weights
// after k steps match one trainer at the global batch, as on one host.
TEST(MpiReplicaLaunch, TwoHostsOverTcp) {
  if (MpiEnvironment::Launched()) GTEST_SKIP() << "the launcher runs outside mpirun";
  const std::string mpirun = testing::FindMpirun();
  if (mpirun.empty()) GTEST_SKIP() << "mpirun is not on PATH: install OpenMPI (openmpi-bin)";
  const char* tmp = std::getenv("TEST_TMPDIR");
  auto hosts = testing::TwoHosts::Make(tmp != nullptr ? tmp : "/tmp");
  if (!hosts.ok()) GTEST_SKIP() << "no two hosts here: " << hosts.status().message();
  char self[PATH_MAX] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  ASSERT_GT(length, 0);
  const testing::MpiJob job = testing::RunMpiJob(
      mpirun, 2,
      absl::StrCat(self, " --gtest_also_run_disabled_tests --gtest_filter=MpiReplicaTest.*"),
      /*timeout_seconds=*/120, {(*hosts)->On(0), (*hosts)->MpirunOptions()});
  EXPECT_EQ(job.exit_code, 0) << job.output;
  for (int r = 0; r < 2; ++r)
    EXPECT_TRUE(absl::StrContains(job.output, absl::StrCat("replica rank ", r, " of 2")))
        << job.output;
  EXPECT_FALSE(absl::StrContains(job.output, "[  FAILED  ]")) << job.output;
}

}  // namespace
}  // namespace cnnbench
