// Bad input to the oneDNN backend gives a clear Status naming the
// descriptor, never a crash: bad descriptors, mismatched or malformed input
// specs, unsupported types, missing buffers.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::OneDnn;

bool Mentions(const absl::Status& status, absl::string_view text) {
  return status.message().find(text) != absl::string_view::npos;
}

TEST(OneDnnErrorsTest, InvalidDescriptor) {
  ASSERT_NE(OneDnn(), nullptr);
  ConvDesc conv = *ConvDesc::Parse("conv:mb2_ic8oc16_ih5oh5kh3sh1ph1_iw5ow5kw3sw1pw1");
  conv.groups = 3;  // 8 channels do not split into 3 groups
  auto kernel = OneDnn()->Create(conv, DType::kF32, {});
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(kernel.status(), "bad descriptor")) << kernel.status();
}

TEST(OneDnnErrorsTest, InputSpecOfTheWrongShape) {
  ASSERT_NE(OneDnn(), nullptr);
  const std::string text = "relu:mb2ic8ih5iw5";
  auto kernel = OneDnn()->Create(*ParseOpDesc(text), DType::kF32,
                                 {TensorSpec::Plain(DType::kF32, Shape{2, 8, 5, 4})});
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(kernel.status(), text)) << kernel.status();
}

TEST(OneDnnErrorsTest, WrongNumberOfInputSpecs) {
  ASSERT_NE(OneDnn(), nullptr);
  const TensorSpec x = TensorSpec::Plain(DType::kF32, Shape{2, 8, 5, 5});
  auto kernel = OneDnn()->Create(*ParseOpDesc("add:mb2ic8ih5iw5"), DType::kF32, {x});
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument) << kernel.status();
}

TEST(OneDnnErrorsTest, BlockedSpecWithoutADescriptor) {
  ASSERT_NE(OneDnn(), nullptr);
  TensorSpec x = TensorSpec::Plain(DType::kF32, Shape{2, 8, 5, 5});
  x.layout = Layout::kBlocked;
  const std::string text = "bn:mb2ic8ih5iw5_eps0.001mom0.997";
  auto kernel = OneDnn()->Create(*ParseOpDesc(text), DType::kF32, {x});
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(kernel.status(), text)) << kernel.status();
}

TEST(OneDnnErrorsTest, BlockedSpecOfAnotherShape) {
  ASSERT_NE(OneDnn(), nullptr);
  auto conv = OneDnn()->Create(*ParseOpDesc("conv:mb2_ic8oc16_ih5oh5kh3sh1ph1_iw5ow5kw3sw1pw1"),
                               DType::kF32, {});
  ASSERT_TRUE(conv.ok()) << conv.status();
  TensorSpec y = (*conv)->signature().output;
  y.shape = Shape{2, 16, 25, 1};  // same element count, other dims
  auto relu = OneDnn()->Create(*ParseOpDesc("relu:mb2ic16ih25iw1"), DType::kF32, {y});
  ASSERT_FALSE(relu.ok());
  EXPECT_EQ(relu.status().code(), absl::StatusCode::kInvalidArgument) << relu.status();
}

TEST(OneDnnErrorsTest, UnsupportedTypes) {
  ASSERT_NE(OneDnn(), nullptr);
  auto f64 = OneDnn()->Create(*ParseOpDesc("relu:mb2ic8ih5iw5"), DType::kF64, {});
  ASSERT_FALSE(f64.ok());
  EXPECT_EQ(f64.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(Mentions(f64.status(), "unsupported:")) << f64.status();
  auto bf16 = OneDnn()->Create(*ParseOpDesc("relu:mb2ic8ih5iw5"), DType::kBF16, {});
  if (!bf16.ok()) {
    EXPECT_EQ(bf16.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_TRUE(Mentions(bf16.status(), "unsupported: bf16 needs avx512_bf16")) << bf16.status();
  }
}

TEST(OneDnnErrorsTest, MissingBuffers) {
  ASSERT_NE(OneDnn(), nullptr);
  const std::string text = "conv:mb2_ic8oc16_ih5oh5kh3sh1ph1_iw5ow5kw3sw1pw1_bias";
  auto k = kernel_test::CreateKernelUnderTest(*OneDnn(), *ParseOpDesc(text), DType::kF32);
  ASSERT_TRUE(k.ok()) << k.status();
  KernelArgs args = k->buffers.Args();
  args.params.pop_back();  // no bias
  absl::Status status = k->kernel->Forward(args);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(status, text)) << status;
  args = k->buffers.Args();
  args.x.clear();
  status = k->kernel->BackwardWeights(args);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
}

}  // namespace
}  // namespace cnnbench
