// Reference batch normalization: exact training and inference forward on
// values chosen so 1/sqrt(var + eps) is exact, the running-statistics update
// (unbiased variance), and both backward passes in both modes against
// finite differences.
#include <algorithm>
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
using kernel_test::GradientCheckOptions;
using kernel_test::KernelUnderTest;
using kernel_test::ToDoubles;

// (N=2, C=2, H=1, W=2). Channel 0 holds 3,4,6,7 and channel 1 holds
// 12,8,9,11: means 5 and 10, biased variances 2.5; with eps 1.5 the
// inverse standard deviation is exactly 0.5.
const std::vector<double> kX = {3, 4, 12, 8, 6, 7, 9, 11};
constexpr char kDesc[] = "bn:mb2ic2ih1iw2_eps1.5mom0.5";

KernelUnderTest Make(const std::string& text, DType dtype) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  absl::StatusOr<BatchNormDesc> desc = BatchNormDesc::Parse(text);
  EXPECT_TRUE(desc.ok()) << desc.status();
  absl::StatusOr<KernelUnderTest> k = CreateKernelUnderTest(*backend, *desc, dtype);
  EXPECT_TRUE(k.ok()) << k.status();
  return std::move(k).value();
}

class BatchNormForwardTest : public ::testing::TestWithParam<DType> {};

TEST_P(BatchNormForwardTest, TrainingUsesBatchStatisticsAndUpdatesRunningOnes) {
  KernelUnderTest k = Make(kDesc, GetParam());
  const KernelSignature& sig = k.kernel->signature();
  ASSERT_EQ(sig.params.size(), 2u);
  ASSERT_EQ(sig.state.size(), 2u);
  ASSERT_TRUE(FromDoubles(sig.inputs[0], k.buffers.x[0].data(), kX).ok());
  ASSERT_TRUE(FromDoubles(sig.params[0], k.buffers.params[0].data(), {2, 4}).ok());   // gamma
  ASSERT_TRUE(FromDoubles(sig.params[1], k.buffers.params[1].data(), {1, -1}).ok());  // beta
  ASSERT_TRUE(FromDoubles(sig.state[0], k.buffers.state[0].data(), {1, 2}).ok());
  ASSERT_TRUE(FromDoubles(sig.state[1], k.buffers.state[1].data(), {2, 4}).ok());
  ASSERT_TRUE(k.kernel->Forward(k.buffers.Args(/*training=*/true)).ok());
  // y = gamma * (x - mean) * 0.5 + beta.
  EXPECT_EQ(ToDoubles(sig.output, k.buffers.y.data()),
            (std::vector<double>{-1, 0, 3, -5, 2, 3, -3, 1}));
  // running = 0.5 * running + 0.5 * batch; the variance is unbiased (x 4/3).
  EXPECT_EQ(ToDoubles(sig.state[0], k.buffers.state[0].data()), (std::vector<double>{3, 6}));
  const std::vector<double> var = ToDoubles(sig.state[1], k.buffers.state[1].data());
  EXPECT_NEAR(var[0], 0.5 * 2 + 0.5 * 2.5 * 4 / 3, 1e-6);
  EXPECT_NEAR(var[1], 0.5 * 4 + 0.5 * 2.5 * 4 / 3, 1e-6);
}

TEST_P(BatchNormForwardTest, InferenceUsesRunningStatisticsAndUpdatesNothing) {
  KernelUnderTest k = Make(std::string(kDesc) + "_noscale", GetParam());
  const KernelSignature& sig = k.kernel->signature();
  ASSERT_EQ(sig.params.size(), 1u);  // beta only
  ASSERT_TRUE(FromDoubles(sig.inputs[0], k.buffers.x[0].data(), kX).ok());
  ASSERT_TRUE(FromDoubles(sig.params[0], k.buffers.params[0].data(), {1, -1}).ok());
  ASSERT_TRUE(FromDoubles(sig.state[0], k.buffers.state[0].data(), {1, 10}).ok());
  ASSERT_TRUE(FromDoubles(sig.state[1], k.buffers.state[1].data(), {2.5, 14.5}).ok());
  KernelArgs args = k.buffers.Args(/*training=*/false);
  args.saved = nullptr;  // an inference forward needs no saved buffer
  ASSERT_TRUE(k.kernel->Forward(args).ok());
  // Channel 0: (x - 1) * 0.5 + 1; channel 1: (x - 10) / 4 - 1.
  EXPECT_EQ(ToDoubles(sig.output, k.buffers.y.data()),
            (std::vector<double>{2, 2.5, -0.5, -1.5, 3.5, 4, -1.25, -0.75}));
  EXPECT_EQ(ToDoubles(sig.state[0], k.buffers.state[0].data()), (std::vector<double>{1, 10}));
  EXPECT_EQ(ToDoubles(sig.state[1], k.buffers.state[1].data()), (std::vector<double>{2.5, 14.5}));
}

INSTANTIATE_TEST_SUITE_P(Types, BatchNormForwardTest, ::testing::Values(DType::kF32, DType::kF64));

struct BnCase {
  std::string desc;
  bool training;
};

class BatchNormGradientTest : public ::testing::TestWithParam<BnCase> {};

TEST_P(BatchNormGradientTest, MatchesFiniteDifferences) {
  KernelUnderTest k = Make(GetParam().desc, DType::kF64);
  FillDefaults(k.buffers, 13);
  GradientCheckOptions options;
  options.training = GetParam().training;
  absl::Status status = CheckGradients(*k.kernel, k.buffers, options);
  EXPECT_TRUE(status.ok()) << GetParam().desc << (GetParam().training ? " training" : " inference")
                           << ": " << status;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, BatchNormGradientTest,
    ::testing::Values(BnCase{"bn:mb2ic3ih3iw3_eps0.001mom0.997", true},
                      BnCase{"bn:mb3ic2ih1iw5_eps1e-05mom0.9_noscale", true},
                      BnCase{"bn:mb1ic4ih3iw2_eps0.001mom0.997", true},
                      BnCase{"bn:mb5ic3ih1iw1_eps0.01mom0.5", true},
                      BnCase{"bn:mb2ic3ih3iw3_eps0.001mom0.997_relu", true},
                      BnCase{"bn:mb3ic2ih1iw5_eps1e-05mom0.9_noscale_relu", true},
                      BnCase{"bn:mb2ic3ih3iw3_eps0.001mom0.997_relu", false},
                      BnCase{"bn:mb2ic3ih3iw3_eps0.001mom0.997", false},
                      BnCase{"bn:mb3ic2ih1iw5_eps1e-05mom0.9_noscale", false}));

// The fused ReLU is exactly a ReLU after the batch norm: y = max(bn(x), 0),
// and the backward passes see dy masked by y > 0.
TEST(BatchNormFusedReluTest, IsTheBatchNormFollowedByARelu) {
  KernelUnderTest plain = Make("bn:mb2ic3ih3iw4_eps0.001mom0.997", DType::kF64);
  KernelUnderTest fused = Make("bn:mb2ic3ih3iw4_eps0.001mom0.997_relu", DType::kF64);
  EXPECT_TRUE(fused.kernel->signature().backward_reads_output);
  FillDefaults(plain.buffers, 5);
  FillDefaults(fused.buffers, 5);
  KernelArgs p = plain.buffers.Args(), f = fused.buffers.Args();
  ASSERT_TRUE(plain.kernel->Forward(p).ok());
  ASSERT_TRUE(fused.kernel->Forward(f).ok());
  const TensorSpec& out = plain.kernel->signature().output;
  const std::vector<double> y = ToDoubles(out, plain.buffers.y.data());
  const std::vector<double> fy = ToDoubles(out, fused.buffers.y.data());
  std::vector<double> dy(y.size());
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<double>((i * 7) % 11) / 5 - 1;
  ASSERT_TRUE(FromDoubles(out, fused.buffers.dy.data(), dy).ok());
  int negative = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_EQ(fy[i], y[i] > 0 ? y[i] : 0.0) << i;
    negative += y[i] < 0;
    if (!(y[i] > 0)) dy[i] = 0;  // what a separate ReLU's backward would pass on
  }
  ASSERT_GT(negative, 0);
  ASSERT_TRUE(FromDoubles(out, plain.buffers.dy.data(), dy).ok());
  ASSERT_TRUE(plain.kernel->BackwardData(p).ok());
  ASSERT_TRUE(plain.kernel->BackwardWeights(p).ok());
  ASSERT_TRUE(fused.kernel->BackwardData(f).ok());
  ASSERT_TRUE(fused.kernel->BackwardWeights(f).ok());
  const TensorSpec& in = plain.kernel->signature().inputs[0];
  double largest = 0;
  for (double v : ToDoubles(in, fused.buffers.dx[0].data()))
    largest = std::max(largest, std::fabs(v));
  EXPECT_GT(largest, 0.1);  // a real gradient, not zeros on both sides
  EXPECT_EQ(ToDoubles(in, fused.buffers.dx[0].data()), ToDoubles(in, plain.buffers.dx[0].data()));
  for (size_t j = 0; j < 2; ++j) {
    const TensorSpec& spec = plain.kernel->signature().params[j];
    EXPECT_EQ(ToDoubles(spec, fused.buffers.dparams[j].data()),
              ToDoubles(spec, plain.buffers.dparams[j].data()))
        << "dparams " << j;
  }
}

TEST(BatchNormSignatureTest, StateSavedAndLiveness) {
  KernelUnderTest k = Make("bn:mb2ic3ih3iw3_eps0.001mom0.997", DType::kF32);
  const KernelSignature& sig = k.kernel->signature();
  EXPECT_EQ(sig.params[0].shape, (Shape{3}));
  EXPECT_EQ(sig.state[1].shape, (Shape{3}));
  EXPECT_GE(sig.saved_bytes, 2u * 3 * sizeof(float));
  EXPECT_TRUE(sig.backward_reads_inputs);
  EXPECT_FALSE(sig.backward_reads_output);
}

}  // namespace
}  // namespace cnnbench
