// Reference softmax cross-entropy: the mean loss on hand-computed cases,
// dx = (softmax - onehot) / N with dy ignored, finite differences, and a
// clear error for a label out of range.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "kernels/reference/reference_backend.h"
#include "tests/kernels/gradient_check.h"

namespace cnnbench {
namespace {

using kernel_test::CheckGradients;
using kernel_test::CreateKernelUnderTest;
using kernel_test::FillDefaults;
using kernel_test::FillIntegers;
using kernel_test::FromDoubles;
using kernel_test::GradientCheckOptions;
using kernel_test::KernelUnderTest;
using kernel_test::ToDoubles;
using ::testing::HasSubstr;

KernelUnderTest Make(const SoftmaxXentDesc& desc, DType dtype,
                     const std::vector<TensorSpec>& inputs = {}) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  absl::StatusOr<KernelUnderTest> k = CreateKernelUnderTest(*backend, desc, dtype, inputs);
  EXPECT_TRUE(k.ok()) << k.status();
  return std::move(k).value();
}

class SoftmaxXentTest : public ::testing::TestWithParam<DType> {};

TEST_P(SoftmaxXentTest, MeanLossAndGradient) {
  // Row 0: equal logits, loss log 4. Row 1: logits log[1, 1, 2, 4] - 7
  // (softmax 1/8, 1/8, 2/8, 4/8; the shift must not matter), label 3: log 2.
  KernelUnderTest k = Make(SoftmaxXentDesc{2, 4}, GetParam());
  const KernelSignature& sig = k.kernel->signature();
  EXPECT_EQ(sig.output.shape, Shape{});
  EXPECT_EQ(sig.output.dtype, GetParam());
  EXPECT_EQ(sig.inputs[1].dtype, DType::kI32);
  const double l2 = std::log(2.0);
  ASSERT_TRUE(
      FromDoubles(sig.inputs[0], k.buffers.x[0].data(), {5, 5, 5, 5, -7, -7, l2 - 7, 2 * l2 - 7})
          .ok());
  ASSERT_TRUE(FromDoubles(sig.inputs[1], k.buffers.x[1].data(), {1, 3}).ok());
  ASSERT_TRUE(FromDoubles(sig.output, k.buffers.dy.data(), {123}).ok());  // ignored
  KernelArgs args = k.buffers.Args();
  args.dx[1] = nullptr;  // labels take no gradient
  ASSERT_TRUE(k.kernel->Forward(args).ok());
  const double tolerance = GetParam() == DType::kF32 ? 1e-6 : 1e-14;
  EXPECT_NEAR(ToDoubles(sig.output, k.buffers.y.data())[0], (std::log(4.0) + l2) / 2, tolerance);
  ASSERT_TRUE(k.kernel->BackwardData(args).ok());
  const std::vector<double> want = {0.125, -0.375, 0.125, 0.125, 0.0625, 0.0625, 0.125, -0.25};
  const std::vector<double> got = ToDoubles(sig.inputs[0], k.buffers.dx[0].data());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tolerance) << i;
  // Dynamic loss scaling: the same gradient times the scale (a power of two: exact).
  const float scale = 1024;
  args.loss_scale = &scale;
  ASSERT_TRUE(k.kernel->BackwardData(args).ok());
  const std::vector<double> scaled = ToDoubles(sig.inputs[0], k.buffers.dx[0].data());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(scaled[i], got[i] * 1024) << i;
}

TEST_P(SoftmaxXentTest, LargeLogitsDoNotOverflow) {
  KernelUnderTest k = Make(SoftmaxXentDesc{1, 2}, GetParam());
  const KernelSignature& sig = k.kernel->signature();
  ASSERT_TRUE(FromDoubles(sig.inputs[0], k.buffers.x[0].data(), {1000, 1000}).ok());
  ASSERT_TRUE(FromDoubles(sig.inputs[1], k.buffers.x[1].data(), {0}).ok());
  ASSERT_TRUE(k.kernel->Forward(k.buffers.Args()).ok());
  EXPECT_NEAR(ToDoubles(sig.output, k.buffers.y.data())[0], std::log(2.0), 1e-6);
}

TEST_P(SoftmaxXentTest, LabelOutOfRangeIsAnError) {
  for (int bad : {-1, 10}) {
    KernelUnderTest k = Make(SoftmaxXentDesc{3, 10}, GetParam());
    const KernelSignature& sig = k.kernel->signature();
    FillDefaults(k.buffers, 1);
    ASSERT_TRUE(
        FromDoubles(sig.inputs[1], k.buffers.x[1].data(), {0, static_cast<double>(bad), 9}).ok());
    absl::Status status = k.kernel->Forward(k.buffers.Args());
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()), HasSubstr("example 1"));
    EXPECT_THAT(std::string(status.message()), HasSubstr("label " + std::to_string(bad)));
    EXPECT_THAT(std::string(status.message()), HasSubstr("softmax_xent:mb3ic10"));
  }
}

INSTANTIATE_TEST_SUITE_P(Types, SoftmaxXentTest, ::testing::Values(DType::kF32, DType::kF64));

TEST(SoftmaxXentGradientTest, MatchesFiniteDifferences) {
  struct Case {
    SoftmaxXentDesc desc;
    Shape input;  // empty: (N, classes)
  };
  for (const Case& c :
       {Case{{3, 7}, {}}, Case{{1, 2}, {}}, Case{{2, 12}, {2, 3, 2, 2}}, Case{{5, 1}, {}}}) {
    std::vector<TensorSpec> inputs;
    if (c.input.rank() > 0)
      inputs = {TensorSpec::Plain(DType::kF64, c.input),
                TensorSpec::Plain(DType::kI32, Shape{c.desc.n})};
    KernelUnderTest k = Make(c.desc, DType::kF64, inputs);
    const KernelSignature& sig = k.kernel->signature();
    FillDefaults(k.buffers, 37);
    FillIntegers(sig.inputs[1], k.buffers.x[1].data(), 41, 0, c.desc.classes - 1);
    GradientCheckOptions options;
    options.unit_output_gradient = true;  // d loss = 1
    absl::Status status = CheckGradients(*k.kernel, k.buffers, options);
    EXPECT_TRUE(status.ok()) << c.desc.ToString() << ": " << status;
  }
}

TEST(SoftmaxXentSignatureTest, BackwardNeedsOnlySaved) {
  KernelUnderTest k = Make(SoftmaxXentDesc{4, 1001}, DType::kF32);
  const KernelSignature& sig = k.kernel->signature();
  EXPECT_EQ(sig.output.dtype, DType::kF32);
  EXPECT_EQ(sig.inputs[1].shape, (Shape{4}));
  EXPECT_GT(sig.saved_bytes, 0u);
  EXPECT_FALSE(sig.backward_reads_inputs);
  EXPECT_FALSE(sig.backward_reads_output);
}

}  // namespace
}  // namespace cnnbench
