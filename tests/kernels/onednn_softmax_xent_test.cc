// oneDNN-backend softmax cross-entropy against the reference: loss and
// gradient (both computed in double, so they agree to fp32 rounding), a
// 4-D (N,C,1,1) input, and bad labels.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::CompareOptions;
using onednn_test::CompareWithReference;
using onednn_test::OneDnn;

CompareOptions Options() {
  CompareOptions o;
  o.integers = false;
  o.low = -4;
  o.high = 4;
  o.forward_rtol = o.backward_rtol = 1e-6;
  return o;
}

TEST(OneDnnSoftmaxXentTest, MatchesReference) {
  ASSERT_NE(OneDnn(), nullptr);
  for (const char* text :
       {"softmax_xent:mb4ic10", "softmax_xent:mb3ic1001", "softmax_xent:mb1ic2"}) {
    absl::StatusOr<OpDesc> desc = ParseOpDesc(text);
    ASSERT_TRUE(desc.ok()) << desc.status();
    absl::Status status = CompareWithReference(*desc, Options());
    EXPECT_TRUE(status.ok()) << status;
  }
}

// A scaled loss gradient (fp16's dynamic loss scaling) is refused, not
// silently left unscaled.
TEST(OneDnnSoftmaxXentTest, RefusesALossScale) {
  ASSERT_NE(OneDnn(), nullptr);
  auto kernel = OneDnn()->Create(*ParseOpDesc("softmax_xent:mb2ic4"), DType::kF32, {});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<float> logits(8, 0.5f), dx(8), saved((*kernel)->signature().saved_bytes / 4 + 1);
  std::vector<char> scratch((*kernel)->signature().scratch_bytes + 64);
  const float scale = 8;
  KernelArgs args;
  args.x = {logits.data(), nullptr};
  args.dx = {dx.data(), nullptr};
  args.saved = saved.data();
  args.scratch = scratch.data();
  args.loss_scale = &scale;
  absl::Status status = (*kernel)->BackwardData(args);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
  EXPECT_NE(std::string(status.message()).find("loss"), std::string::npos) << status;
}

TEST(OneDnnSoftmaxXentTest, FlattensA4DInput) {
  ASSERT_NE(OneDnn(), nullptr);
  CompareOptions o = Options();
  o.onednn_inputs = {TensorSpec::Plain(DType::kF32, Shape{2, 6, 1, 1}),
                     TensorSpec::Plain(DType::kI32, Shape{2})};
  absl::Status status = CompareWithReference(*ParseOpDesc("softmax_xent:mb2ic6"), o);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(OneDnnSoftmaxXentTest, LabelOutOfRangeNamesTheExample) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<kernel_test::KernelUnderTest> k = kernel_test::CreateKernelUnderTest(
      *OneDnn(), *ParseOpDesc("softmax_xent:mb3ic4"), DType::kF32);
  ASSERT_TRUE(k.ok()) << k.status();
  kernel_test::FillDefaults(k->buffers, 1);
  int32_t* labels = static_cast<int32_t*>(k->buffers.x[1].data());
  labels[0] = 1;
  labels[1] = 4;
  labels[2] = 0;
  absl::Status status = k->kernel->Forward(k->buffers.Args());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("label 4 of example 1"), absl::string_view::npos) << status;
}

}  // namespace
}  // namespace cnnbench
