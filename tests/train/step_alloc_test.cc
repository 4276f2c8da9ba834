// The executor allocates nothing in a step: global operator new is replaced
// (//tests/testing:alloc_counter) to count heap allocations while steps run (after a warm-up step). SmallCnn
// has a concat, a residual add (gradients summed over two edges) and dropout,
// and profiling is on in one run, so every path of the step is exercised.
// On the reference backend, whose kernels allocate nothing per call, every
// allocation would be the executor's. (oneDNN 2.6's own dnnl_primitive_execute
// builds its argument map on the heap per call: the library's, not ours.)
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "tests/testing/alloc_counter.h"
#include "tests/train/small_cnn.h"
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

}  // namespace
}  // namespace cnnbench
