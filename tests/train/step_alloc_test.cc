// The executor allocates nothing in a step: global operator new is replaced
// (//tests/testing:alloc_counter) to count heap allocations while steps run (after a warm-up step).
// SmallCnn has a concat, a residual add (gradients summed over two edges) and dropout, and
// profiling is on in one run, so every path of the step is exercised. On the reference backend,
// whose kernels allocate nothing per call, every allocation would be the executor's. Data-parallel
// replicas are counted the same way. (oneDNN 2.6's own dnnl_primitive_execute builds its argument
// map on the heap per call: the library's, not ours.)
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "kernels/collectives/local.h"
#include "tests/testing/alloc_counter.h"
#include "tests/train/small_cnn.h"
#include "train/data_parallel.h"
#include "train/trainer.h"

namespace cnnbench {
namespace {

class StepAllocTest : public ::testing::TestWithParam<bool> {};

TEST_P(StepAllocTest, AStepAllocatesNothing) {
  const bool profile = GetParam();
  auto backend = CreateBackend("reference", Device::Cpu());
  ASSERT_TRUE(backend.ok()) << backend.status();
  TrainOptions options;
  options.profile = profile;
  auto trainer = Trainer::Compile(train_test::SmallCnn(), backend->get(), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  std::vector<float> images;
  std::vector<int32_t> labels;
  train_test::MakeBatch(3, &images, &labels);
  ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
  ASSERT_TRUE((*trainer)->Step().ok());  // warm-up
  {  // The counter sees allocations at all (an escaping one, so it stays).
    std::vector<std::string> sink;
    testing::AllocationCounter::Start();
    sink.emplace_back(100, 'x');
    ASSERT_GT(testing::AllocationCounter::Stop(), 0);
  }
  testing::AllocationCounter::Start();
  absl::Status status = (*trainer)->Step();
  if (status.ok()) status = (*trainer)->Step();
  const long allocations = testing::AllocationCounter::Stop();
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(allocations, 0) << (profile ? "profiling" : "not profiling");
}

INSTANTIATE_TEST_SUITE_P(Profiling, StepAllocTest, ::testing::Bool());

// Two replicas (threads of the local group) with several buckets a step,
// overlap on and off: the steps, their bucketed all-reduces and the
// communication threads allocate nothing after a warm-up step.
class ReplicaStepAllocTest : public ::testing::TestWithParam<bool> {};

TEST_P(ReplicaStepAllocTest, AReplicatedStepAllocatesNothing) {
  constexpr int kRanks = 2;
  auto group = CreateLocalGroup(kRanks);
  ASSERT_TRUE(group.ok()) << group.status();
  DataParallelOptions dp;
  dp.bucket_bytes = 2048;
  dp.overlap = GetParam();
  std::vector<std::unique_ptr<Backend>> backends(kRanks);
  std::vector<std::unique_ptr<Replica>> replicas(kRanks);
  std::vector<float> images;
  std::vector<int32_t> labels;
  train_test::MakeBatch(3, &images, &labels);
  auto on_ranks = [&](const std::function<absl::Status(int)>& body) {
    std::vector<absl::Status> status(kRanks);
    std::vector<std::thread> threads;
    for (int r = 0; r < kRanks; ++r) threads.emplace_back([&, r] { status[r] = body(r); });
    for (auto& t : threads) t.join();
    for (int r = 0; r < kRanks; ++r) EXPECT_TRUE(status[r].ok()) << "rank " << r << status[r];
  };
  on_ranks([&](int r) -> absl::Status {
    auto backend = CreateBackend("reference", Device::Cpu());
    if (!backend.ok()) return backend.status();
    backends[r] = *std::move(backend);
    auto replica = Replica::Create(train_test::SmallCnn(train_test::kBatch, false),
                                   backends[r].get(), TrainOptions(), (*group)[r].get(), dp);
    if (!replica.ok()) return replica.status();
    replicas[r] = *std::move(replica);
    if (absl::Status s = replicas[r]->SetBatch(images.data(), labels.data()); !s.ok()) return s;
    return replicas[r]->Step();  // warm-up
  });
  ASSERT_GT(replicas[0]->buckets().size(), 2u);
  // The rank threads exist before counting starts (their creation allocates).
  std::vector<std::thread> threads;
  std::vector<absl::Status> status(kRanks);
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  for (int r = 0; r < kRanks; ++r)
    threads.emplace_back([&, r] {
      ++ready;
      while (!go) std::this_thread::yield();
      absl::Status s = replicas[r]->Step();
      if (s.ok()) s = replicas[r]->Step();
      status[r] = s;
    });
  while (ready < kRanks) std::this_thread::yield();
  testing::AllocationCounter::Start();
  go = true;
  for (auto& t : threads) t.join();
  const long allocations = testing::AllocationCounter::Stop();
  for (int r = 0; r < kRanks; ++r) ASSERT_TRUE(status[r].ok()) << status[r];
  EXPECT_EQ(allocations, 0) << (dp.overlap ? "overlap on" : "overlap off");
}

INSTANTIATE_TEST_SUITE_P(Overlap, ReplicaStepAllocTest, ::testing::Bool());

}  // namespace
}  // namespace cnnbench
