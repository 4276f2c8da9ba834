// oneDNN batch normalization against the reference: training forward with
// batch statistics and the running-statistics update, inference with the
// running statistics, without gamma, in a blocked layout, and backward
// weights with and without a preceding backward data.
#include <string>

#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::CompareOptions;
using onednn_test::CompareWithReference;
using onednn_test::OneDnn;

// Division by sqrt(var + eps): not exact in fp32; oneDNN also sums in fp32.
CompareOptions Options() {
  CompareOptions o;
  o.integers = false;
  o.low = -2;
  o.high = 2;
  o.forward_rtol = o.backward_rtol = 1e-4;
  o.forward_atol = o.backward_atol = 1e-5;
  return o;
}

void ExpectMatch(const std::string& text, const CompareOptions& options) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<OpDesc> desc = ParseOpDesc(text);
  ASSERT_TRUE(desc.ok()) << desc.status();
  absl::Status status = CompareWithReference(*desc, options);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(OneDnnBatchNormTest, Training) { ExpectMatch("bn:mb4ic5ih7iw3_eps0.001mom0.9", Options()); }

TEST(OneDnnBatchNormTest, TrainingWithoutScale) {
  ExpectMatch("bn:mb2ic16ih5iw5_eps1e-05mom0.997_noscale", Options());
}

TEST(OneDnnBatchNormTest, TrainingOnASinglePixelPerChannel) {
  // m = N*H*W = 2: the unbiased variance doubles the biased one.
  ExpectMatch("bn:mb2ic8ih1iw1_eps0.001mom0.5", Options());
}

// A ReLU fused through oneDNN's flag (its mask kept in the workspace, saved).
TEST(OneDnnBatchNormTest, TrainingWithFusedRelu) {
  ExpectMatch("bn:mb4ic5ih7iw3_eps0.001mom0.9_relu", Options());
  ExpectMatch("bn:mb2ic16ih5iw5_eps1e-05mom0.997_noscale_relu", Options());
}

TEST(OneDnnBatchNormTest, Inference) {
  CompareOptions o = Options();
  o.training = false;
  o.backward = false;
  ExpectMatch("bn:mb3ic6ih4iw4_eps0.001mom0.997", o);
  ExpectMatch("bn:mb3ic6ih4iw4_eps0.001mom0.997_relu", o);
}

TEST(OneDnnBatchNormTest, BlockedInput) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<ConvDesc> conv =
      ConvDesc::Parse("conv:mb2_ic8oc16_ih6oh6kh3sh1ph1_iw6ow6kw3sw1pw1");
  ASSERT_TRUE(conv.ok()) << conv.status();
  absl::StatusOr<std::unique_ptr<Kernel>> producer = OneDnn()->Create(*conv, DType::kF32, {});
  ASSERT_TRUE(producer.ok()) << producer.status();
  CompareOptions o = Options();
  o.onednn_inputs = {(*producer)->signature().output};
  ExpectMatch("bn:mb2ic16ih6iw6_eps0.001mom0.997", o);
  ExpectMatch("bn:mb2ic16ih6iw6_eps0.001mom0.997_relu", o);
  o.training = false;
  o.backward = false;
  ExpectMatch("bn:mb2ic16ih6iw6_eps0.001mom0.997", o);
}

// BackwardWeights on its own (no BackwardData after the forward) runs the
// backward pass itself; after a BackwardData it copies that pass's result.
TEST(OneDnnBatchNormTest, BackwardWeightsAloneAndAfterBackwardData) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<OpDesc> desc = ParseOpDesc("bn:mb2ic3ih4iw4_eps0.001mom0.997");
  ASSERT_TRUE(desc.ok());
  absl::StatusOr<kernel_test::KernelUnderTest> k =
      kernel_test::CreateKernelUnderTest(*OneDnn(), *desc, DType::kF32);
  ASSERT_TRUE(k.ok()) << k.status();
  kernel_test::FillDefaults(k->buffers, 7);
  const KernelSignature& sig = k->kernel->signature();
  kernel_test::FillUniform(sig.output, k->buffers.dy.data(), 8, -1, 1);
  KernelArgs args = k->buffers.Args();
  ASSERT_TRUE(k->kernel->Forward(args).ok());
  ASSERT_TRUE(k->kernel->BackwardWeights(args).ok());
  const std::vector<double> alone_gamma = kernel_test::ToDoubles(sig.params[0], args.dparams[0]);
  const std::vector<double> alone_beta = kernel_test::ToDoubles(sig.params[1], args.dparams[1]);
  onednn_test::Poison(k->buffers.dparams[0]);
  onednn_test::Poison(k->buffers.dparams[1]);
  ASSERT_TRUE(k->kernel->BackwardData(args).ok());
  ASSERT_TRUE(k->kernel->BackwardWeights(args).ok());
  EXPECT_EQ(kernel_test::ToDoubles(sig.params[0], args.dparams[0]), alone_gamma);
  EXPECT_EQ(kernel_test::ToDoubles(sig.params[1], args.dparams[1]), alone_beta);
  // A new dy after a new forward is not served from the stale copy.
  ASSERT_TRUE(k->kernel->Forward(args).ok());
  kernel_test::FillUniform(sig.output, k->buffers.dy.data(), 9, -1, 1);
  ASSERT_TRUE(k->kernel->BackwardWeights(args).ok());
  EXPECT_NE(kernel_test::ToDoubles(sig.params[1], args.dparams[1]), alone_beta);
}

}  // namespace
}  // namespace cnnbench
