// Data-parallel replicas on the CPU with the `local` group (one thread per
// rank): N replicas at batch B follow one trainer at batch N*B; overlap on
// and off give the same bits; batch-norm replicas stay identical to each
// other; rank 0's weights reach every rank; bucket planning.
#include "train/data_parallel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "kernels/collectives/local.h"
#include "tests/train/small_cnn.h"
#include "train/trace.h"

namespace cnnbench {
namespace {

using ::testing::HasSubstr;
using train_test::kBatch;

TEST(PlanBucketsTest, CutsBetweenRangesOnceABucketIsFull) {
  // Ranges in backward order: [60,100), [40,60), [10,40), [0,10).
  const std::vector<GradientRange> ranges = {{3, 60, 40}, {2, 40, 20}, {1, 10, 30}, {0, 0, 10}};
  auto buckets = PlanBuckets(ranges, 100, 50);
  ASSERT_TRUE(buckets.ok()) << buckets.status();
  ASSERT_EQ(buckets->size(), 2u);
  EXPECT_EQ((*buckets)[0].offset, 40u);  // 40 + 20 bytes >= 50
  EXPECT_EQ((*buckets)[0].bytes, 60u);
  EXPECT_EQ((*buckets)[1].offset, 0u);  // the rest
  EXPECT_EQ((*buckets)[1].bytes, 40u);

  auto one_each = PlanBuckets(ranges, 100, 1);
  ASSERT_TRUE(one_each.ok());
  EXPECT_EQ(one_each->size(), 4u);
  auto all_in_one = PlanBuckets(ranges, 100, size_t{1} << 30);
  ASSERT_TRUE(all_in_one.ok());
  ASSERT_EQ(all_in_one->size(), 1u);
  EXPECT_EQ((*all_in_one)[0].bytes, 100u);
}

TEST(PlanBucketsTest, RefusesGapsAndZeroSize) {
  const std::vector<GradientRange> gap = {{1, 60, 40}, {0, 0, 50}};
  auto buckets = PlanBuckets(gap, 100, 10);
  ASSERT_FALSE(buckets.ok());
  EXPECT_THAT(std::string(buckets.status().message()), HasSubstr("not contiguous"));
  EXPECT_FALSE(PlanBuckets({}, 100, 0).ok());
}

// Runs `body(rank)` on `ranks` threads and returns each thread's status.
std::vector<absl::Status> OnRanks(int ranks, const std::function<absl::Status(int)>& body) {
  std::vector<absl::Status> status(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) threads.emplace_back([&, r] { status[r] = body(r); });
  for (auto& t : threads) t.join();
  return status;
}

std::vector<float> HostParameters(Trainer& trainer) {
  std::vector<float> values(trainer.gradient_bytes() / sizeof(float));
  std::memcpy(values.data(), trainer.parameters(), trainer.gradient_bytes());
  return values;
}

struct RunResult {
  std::vector<std::vector<float>> weights;  // per rank
  std::vector<std::vector<GradientBucket>> buckets;
  std::vector<float> losses;  // global loss per step (rank 0's view)
  bool weights_agreed = false;
};

// `ranks` replicas, each at batch `batch`, for `steps` steps on the global
// batches MakeBatch(seed = step) at ranks * batch.
// Step `traced_step` (where >= 0) is Replica::TraceStep, its slices per rank
// into `traces`.
RunResult RunReplicas(int ranks, int batch, int steps, bool batch_norm,
                      const DataParallelOptions& dp, const std::vector<uint64_t>& seeds = {},
                      int traced_step = -1,
                      std::vector<std::vector<TraceSlice>>* traces = nullptr) {
  RunResult result;
  result.weights.resize(ranks);
  result.buckets.resize(ranks);
  auto group = CreateLocalGroup(ranks);
  EXPECT_TRUE(group.ok()) << group.status();
  if (!group.ok()) return result;
  std::vector<std::vector<float>> images(steps);
  std::vector<std::vector<int32_t>> labels(steps);
  for (int s = 0; s < steps; ++s)
    train_test::MakeBatch(100 + s, &images[s], &labels[s], ranks * batch);
  const size_t image_floats = images[0].size() / (ranks * batch);
  const Graph graph = train_test::SmallCnn(batch, batch_norm);
  std::vector<bool> agreed(ranks);
  if (traces != nullptr) traces->assign(ranks, {});
  const auto origin = std::chrono::steady_clock::now();
  std::vector<absl::Status> status = OnRanks(ranks, [&](int rank) -> absl::Status {
    auto backend = CreateBackend("reference", Device::Cpu());
    if (!backend.ok()) return backend.status();
    TrainOptions options;
    options.learning_rate = 0.05;
    options.weight_decay = 1e-4;
    if (!seeds.empty()) options.seed = seeds[rank];
    auto replica = Replica::Create(graph, backend->get(), options, (*group)[rank].get(), dp);
    if (!replica.ok()) return replica.status();
    auto same = (*replica)->SyncInitialWeights();
    if (!same.ok()) return same.status();
    agreed[rank] = *same;
    for (int s = 0; s < steps; ++s) {
      absl::Status set = (*replica)->SetBatch(images[s].data() + rank * batch * image_floats,
                                              labels[s].data() + rank * batch);
      if (!set.ok()) return set;
      if (s == traced_step) {
        auto traced = (*replica)->TraceStep(origin);
        if (!traced.ok()) return traced.status();
        if (traces != nullptr) (*traces)[rank] = *std::move(traced);
      } else {
        absl::Status step = (*replica)->Step();
        if (!step.ok()) return step;
      }
      auto loss = (*replica)->GlobalLoss();
      if (!loss.ok()) return loss.status();
      if (rank == 0) result.losses.push_back(*loss);
    }
    result.weights[rank] = HostParameters((*replica)->trainer());
    result.buckets[rank] = (*replica)->buckets();
    return absl::OkStatus();
  });
  for (int r = 0; r < ranks; ++r) EXPECT_TRUE(status[r].ok()) << "rank " << r << ": " << status[r];
  result.weights_agreed = true;
  for (bool a : agreed) result.weights_agreed = result.weights_agreed && a;
  return result;
}

// One trainer at `batch` on the same global batches.
std::vector<float> RunSingle(int batch, int steps, std::vector<float>* losses) {
  auto backend = CreateBackend("reference", Device::Cpu());
  EXPECT_TRUE(backend.ok());
  TrainOptions options;
  options.learning_rate = 0.05;
  options.weight_decay = 1e-4;
  auto trainer = Trainer::Compile(train_test::SmallCnn(batch, false), backend->get(), options);
  EXPECT_TRUE(trainer.ok()) << trainer.status();
  if (!trainer.ok()) return {};
  for (int s = 0; s < steps; ++s) {
    std::vector<float> images;
    std::vector<int32_t> labels;
    train_test::MakeBatch(100 + s, &images, &labels, batch);
    EXPECT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
    auto loss = train_test::StepAndLoss(**trainer);
    EXPECT_TRUE(loss.ok()) << loss.status();
    losses->push_back(loss.ok() ? *loss : NAN);
  }
  return HostParameters(**trainer);
}

// Largest |a - b| / (1 + |b|) over the two vectors.
double MaxRelativeDifference(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    worst = std::max(worst, std::fabs(double{a[i]} - b[i]) / (1.0 + std::fabs(double{b[i]})));
  return worst;
}

TEST(DataParallelTest, ReplicasMatchOneTrainerAtTheGlobalBatch) {
  constexpr int kSteps = 4;
  DataParallelOptions dp;
  dp.bucket_bytes = 4096;  // several buckets
  for (int ranks : {2, 3}) {
    const int batch = ranks == 2 ? kBatch / 2 : 4;
    std::vector<float> single_losses;
    const std::vector<float> single = RunSingle(ranks * batch, kSteps, &single_losses);
    RunResult replicas = RunReplicas(ranks, batch, kSteps, /*batch_norm=*/false, dp);
    ASSERT_EQ(replicas.losses.size(), single_losses.size());
    for (int s = 0; s < kSteps; ++s)
      EXPECT_NEAR(replicas.losses[s], single_losses[s], 1e-5 * (1 + single_losses[s]))
          << ranks << " ranks, step " << s;
    EXPECT_GT(replicas.buckets[0].size(), 1u);
    for (int r = 0; r < ranks; ++r) {
      EXPECT_LT(MaxRelativeDifference(replicas.weights[r], single), 1e-5)
          << ranks << " ranks, rank " << r;
      // Every rank holds the same bits (the average is computed once per element).
      EXPECT_EQ(replicas.weights[r], replicas.weights[0]) << "rank " << r;
    }
    // The weights moved: the comparison is not between initial weights.
    std::vector<float> untrained_losses;
    const std::vector<float> untrained = RunSingle(ranks * batch, 0, &untrained_losses);
    EXPECT_GT(MaxRelativeDifference(replicas.weights[0], untrained), 1e-4);
  }
}

TEST(DataParallelTest, OverlapOnAndOffGiveTheSameBits) {
  DataParallelOptions on, off;
  on.bucket_bytes = off.bucket_bytes = 2048;
  off.overlap = false;
  RunResult a = RunReplicas(2, kBatch / 2, 3, /*batch_norm=*/true, on);
  RunResult b = RunReplicas(2, kBatch / 2, 3, /*batch_norm=*/true, off);
  ASSERT_EQ(a.buckets[0].size(), b.buckets[0].size());
  EXPECT_GT(a.buckets[0].size(), 2u);
  for (size_t i = 0; i < a.buckets[0].size(); ++i) {
    EXPECT_EQ(a.buckets[0][i].offset, b.buckets[0][i].offset);
    EXPECT_EQ(a.buckets[0][i].bytes, b.buckets[0][i].bytes);
  }
  // The trainer's own list of ranges plans the same buckets (what the
  // gradient all-reduce case reduces).
  auto backend = CreateBackend("reference", Device::Cpu());
  ASSERT_TRUE(backend.ok());
  auto trainer =
      Trainer::Compile(train_test::SmallCnn(kBatch / 2, true), backend->get(), TrainOptions());
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  auto planned = PlanBuckets((*trainer)->GradientRanges(), (*trainer)->gradient_bytes(), 2048);
  ASSERT_TRUE(planned.ok()) << planned.status();
  ASSERT_EQ(planned->size(), a.buckets[0].size());
  for (size_t i = 0; i < planned->size(); ++i) {
    EXPECT_EQ((*planned)[i].offset, a.buckets[0][i].offset);
    EXPECT_EQ((*planned)[i].bytes, a.buckets[0][i].bytes);
  }
  for (int r = 0; r < 2; ++r) {
    ASSERT_FALSE(a.weights[r].empty());
    EXPECT_EQ(0, std::memcmp(a.weights[r].data(), b.weights[r].data(),
                             a.weights[r].size() * sizeof(float)))
        << "rank " << r;
  }
  EXPECT_EQ(a.losses, b.losses);
}

// A traced step (Replica::TraceStep) trains like any step (the same bits
// as the untraced run); each rank's trace has every layer's passes on the
// compute lane, one slice per bucket on the communication lane, in the
// order reduced and without overlap, inside the traced step, and the
// update after the last of them.
TEST(DataParallelTest, ATracedStepPutsEachBucketOnTheCommunicationLane) {
  DataParallelOptions dp;
  dp.bucket_bytes = 2048;
  std::vector<std::vector<TraceSlice>> traces;
  RunResult plain = RunReplicas(2, kBatch / 2, 3, /*batch_norm=*/true, dp);
  RunResult traced = RunReplicas(2, kBatch / 2, 3, /*batch_norm=*/true, dp, {}, 1, &traces);
  ASSERT_EQ(traces.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    ASSERT_FALSE(traced.weights[r].empty());
    EXPECT_EQ(traced.weights[r], plain.weights[r]) << "rank " << r;
  }
  EXPECT_EQ(traced.losses, plain.losses);
  // The layers a replica runs: those of a trainer compiled alike.
  auto backend = CreateBackend("reference", Device::Cpu());
  ASSERT_TRUE(backend.ok());
  auto trainer =
      Trainer::Compile(train_test::SmallCnn(kBatch / 2, true), backend->get(), TrainOptions());
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  for (int r = 0; r < 2; ++r) {
    std::vector<TraceSlice> comm, compute;
    for (const TraceSlice& s : traces[r]) (s.lane == "communication" ? comm : compute).push_back(s);
    // One slice per bucket of that step (the buckets of a step are the same
    // every step), named by its bytes.
    ASSERT_EQ(comm.size(), traced.buckets[r].size()) << "rank " << r;
    EXPECT_GT(comm.size(), 2u);
    for (size_t i = 0; i < comm.size(); ++i) {
      EXPECT_EQ(comm[i].category, "all-reduce");
      EXPECT_EQ(comm[i].op,
                absl::StrCat("gradient bytes [", traced.buckets[r][i].offset, ", ",
                             traced.buckets[r][i].offset + traced.buckets[r][i].bytes, ")"));
      EXPECT_FALSE(comm[i].implementation.empty());
      if (i > 0) {
        EXPECT_LE(comm[i - 1].start_us + comm[i - 1].duration_us, comm[i].start_us + 1e-3);
      }
    }
    // Every layer's forward; the wait for the buckets, and the update after the last one.
    std::set<std::string> forward;
    double first = 1e300, update_start = -1, wait_start = -1;
    for (const TraceSlice& s : compute) {
      EXPECT_EQ(s.lane, "compute");
      first = std::min(first, s.start_us);
      if (s.category == "forward") forward.insert(s.name);
      if (s.name == "(update)") update_start = s.start_us;
      if (s.name == "(wait for all-reduce)") wait_start = s.start_us;
    }
    for (const auto& layer : (*trainer)->step_plan().layers)
      EXPECT_TRUE(forward.count(layer->name)) << "rank " << r << ": " << layer->name;
    ASSERT_GE(update_start, 0) << "rank " << r;
    ASSERT_GE(wait_start, 0) << "rank " << r;
    for (const TraceSlice& s : comm) {
      EXPECT_GE(s.start_us, first - 1e-3);
      EXPECT_LE(s.start_us + s.duration_us, update_start + 1e-3) << s.name;
    }
    EXPECT_LE(wait_start, update_start);
  }
  // Both ranks' processes in one file.
  const std::string json =
      ChromeTraceJson({TraceProcess{"rank 0", traces[0]}, TraceProcess{"rank 1", traces[1]}});
  EXPECT_THAT(json, HasSubstr("\"communication\""));
  EXPECT_THAT(json, HasSubstr("\"pid\": 2"));
}

TEST(DataParallelTest, BatchNormReplicasStayIdentical) {
  DataParallelOptions dp;
  RunResult result = RunReplicas(2, kBatch / 2, 3, /*batch_norm=*/true, dp);
  // Buckets cover the whole block exactly, from its end down to 0.
  size_t end = result.buckets[0].empty()
                   ? 0
                   : result.buckets[0].front().offset + result.buckets[0].front().bytes;
  for (const GradientBucket& b : result.buckets[0]) {
    EXPECT_EQ(b.offset + b.bytes, end);
    end = b.offset;
  }
  EXPECT_EQ(end, 0u);
  ASSERT_FALSE(result.weights[0].empty());
  EXPECT_EQ(result.weights[0], result.weights[1]);
  for (float loss : result.losses) EXPECT_TRUE(std::isfinite(loss));
}

TEST(DataParallelTest, RankZeroWeightsReachEveryRank) {
  DataParallelOptions dp;
  // Different seeds: different initial weights, until the broadcast.
  RunResult result = RunReplicas(2, kBatch / 2, 1, /*batch_norm=*/false, dp, {7, 8});
  EXPECT_FALSE(result.weights_agreed);
  EXPECT_EQ(result.weights[0], result.weights[1]);
  RunResult same = RunReplicas(2, kBatch / 2, 1, /*batch_norm=*/false, dp);
  EXPECT_TRUE(same.weights_agreed);
}

TEST(DataParallelTest, BadOptionsAreErrors) {
  auto group = CreateLocalGroup(1);
  ASSERT_TRUE(group.ok());
  auto backend = CreateBackend("reference", Device::Cpu());
  ASSERT_TRUE(backend.ok());
  DataParallelOptions dp;
  dp.bucket_bytes = 0;
  auto replica = Replica::Create(train_test::SmallCnn(4), backend->get(), TrainOptions(),
                                 (*group)[0].get(), dp);
  EXPECT_FALSE(replica.ok());
  EXPECT_FALSE(Replica::Create(train_test::SmallCnn(4), backend->get(), TrainOptions(), nullptr,
                               DataParallelOptions())
                   .ok());
}

}  // namespace
}  // namespace cnnbench
