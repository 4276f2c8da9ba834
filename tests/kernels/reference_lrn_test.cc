// Reference LRN (TensorFlow's across-channel definition): forward against
// the formula on small cases, and backward against finite differences for
// several radii and exponents, including radii wider than the channels.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "kernels/reference/reference_backend.h"
#include "tests/kernels/gradient_check.h"

namespace cnnbench {
namespace {

using kernel_test::CheckGradients;
using kernel_test::CreateKernelUnderTest;
using kernel_test::FillDefaults;
using kernel_test::FromDoubles;
using kernel_test::KernelUnderTest;
using kernel_test::ToDoubles;

KernelUnderTest Make(const std::string& text, DType dtype) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  absl::StatusOr<LrnDesc> desc = LrnDesc::Parse(text);
  EXPECT_TRUE(desc.ok()) << desc.status();
  absl::StatusOr<KernelUnderTest> k = CreateKernelUnderTest(*backend, *desc, dtype);
  EXPECT_TRUE(k.ok()) << k.status();
  return std::move(k).value();
}

std::vector<double> LrnForward(const std::string& text, const std::vector<double>& x) {
  KernelUnderTest k = Make(text, DType::kF64);
  const KernelSignature& sig = k.kernel->signature();
  EXPECT_TRUE(FromDoubles(sig.inputs[0], k.buffers.x[0].data(), x).ok());
  EXPECT_TRUE(k.kernel->Forward(k.buffers.Args()).ok());
  return ToDoubles(sig.output, k.buffers.y.data());
}

TEST(LrnForwardTest, SumsSquaresOverTheChannelWindow) {
  // x = [1, 2, 3] across channels, r 1, bias 1, alpha 1, beta 1:
  // s = 1 + [1+4, 1+4+9, 4+9] = [6, 15, 14].
  const std::vector<double> y = LrnForward("lrn:mb1ic3ih1iw1_r1k1a1b1", {1, 2, 3});
  ASSERT_EQ(y.size(), 3u);
  EXPECT_DOUBLE_EQ(y[0], 1.0 / 6);
  EXPECT_DOUBLE_EQ(y[1], 2.0 / 15);
  EXPECT_DOUBLE_EQ(y[2], 3.0 / 14);
}

TEST(LrnForwardTest, ExactWithSquareRoots) {
  // r 0, bias 7, alpha 1, beta 0.5: y = x / sqrt(7 + x^2); x = 3 -> 3/4.
  // Two pixels per channel check that only channels are summed.
  EXPECT_EQ(LrnForward("lrn:mb1ic2ih1iw2_r0k7a1b0.5", {3, 0, 0, -3}),
            (std::vector<double>{0.75, 0, 0, -0.75}));
  // r 1 over two channels: s = 8 + (2^2 + 2^2) = 16 at pixel 0 of both
  // channels, so y = 2/4 there; pixel 1 is 0.
  EXPECT_EQ(LrnForward("lrn:mb1ic2ih1iw2_r1k8a1b0.5", {2, 0, 2, 0}),
            (std::vector<double>{0.5, 0, 0.5, 0}));
}

TEST(LrnForwardTest, Float32AgreesWithFloat64) {
  KernelUnderTest k = Make("lrn:mb2ic5ih2iw3_r2k1a0.0001b0.75", DType::kF32);
  FillDefaults(k.buffers, 29);
  ASSERT_TRUE(k.kernel->Forward(k.buffers.Args()).ok());
  const KernelSignature& sig = k.kernel->signature();
  const std::vector<double> x = ToDoubles(sig.inputs[0], k.buffers.x[0].data());
  const std::vector<double> want = LrnForward("lrn:mb2ic5ih2iw3_r2k1a0.0001b0.75", x);
  const std::vector<double> got = ToDoubles(sig.output, k.buffers.y.data());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
}

class LrnGradientTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LrnGradientTest, MatchesFiniteDifferences) {
  KernelUnderTest k = Make(GetParam(), DType::kF64);
  FillDefaults(k.buffers, 31);
  absl::Status status = CheckGradients(*k.kernel, k.buffers);
  EXPECT_TRUE(status.ok()) << GetParam() << ": " << status;
}

INSTANTIATE_TEST_SUITE_P(Shapes, LrnGradientTest,
                         ::testing::Values("lrn:mb2ic7ih3iw2_r2k1a0.5b0.75",
                                           "lrn:mb1ic5ih2iw3_r5k2a0.3b0.5",  // radius > C
                                           "lrn:mb2ic3ih1iw1_r0k1a1b1",
                                           "lrn:mb1ic9ih1iw3_r1k1.5a0.1b2"));

TEST(LrnSignatureTest, SavesAndReadsInputs) {
  KernelUnderTest k = Make("lrn:mb2ic7ih3iw2_r2k1a0.5b0.75", DType::kF32);
  EXPECT_TRUE(k.kernel->signature().backward_reads_inputs);
  EXPECT_TRUE(k.kernel->signature().params.empty());
}

}  // namespace
}  // namespace cnnbench
