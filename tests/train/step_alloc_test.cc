// The executor allocates nothing in a step: global operator new is replaced
// to count heap allocations while steps run (after a warm-up step). SmallCnn
// has a concat, a residual add (gradients summed over two edges) and dropout,
// and profiling is on in one run, so every path of the step is exercised.
// On the reference backend, whose kernels allocate nothing per call, every
// allocation would be the executor's. (oneDNN 2.6's own dnnl_primitive_execute
// builds its argument map on the heap per call: the library's, not ours.)
#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "tests/train/small_cnn.h"
#include "train/trainer.h"

// GCC flags malloc/free inside a replaced operator new/delete pair once
// inlined; that pairing is the replacement's whole point.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(size_t size) {
  if (g_counting) ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

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
  g_allocations = 0;
  g_counting = true;
  absl::Status status = (*trainer)->Step();
  if (status.ok()) status = (*trainer)->Step();
  g_counting = false;
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(g_allocations.load(), 0) << (profile ? "profiling" : "not profiling");
}

INSTANTIATE_TEST_SUITE_P(Profiling, StepAllocTest, ::testing::Bool());

}  // namespace
}  // namespace cnnbench
