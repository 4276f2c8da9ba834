// oneDNN's activations beyond ReLU: ReLU6 fused as a convolution's
// forward-only epilogue (inference, after batch norm folding) equals the
// reference, on outputs that cross both clips; and fused in training (batch
// norm, add, the convolution's epilogue), fp32 and bf16, its forward clips
// and its backward masks dy exactly as the reference's ActivationPasses:
// dy passes strictly inside (0, 6), at exactly 0 and 6 it is masked.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/gradient_check.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::OneDnn;
using onednn_test::ReadPlain;
using onednn_test::Reference;
using onednn_test::WritePlain;

TEST(OneDnnActivationTest, ForwardOnlyConvRelu6EpilogueMatchesTheReference) {
  ASSERT_NE(OneDnn(), nullptr);
  const OpDesc desc = *ParseOpDesc("conv:mb2_ic8oc16_ih6oh6kh3sh1ph1_iw6ow6kw3sw1pw1_bias_relu6");
  KernelOptions options = KernelOptions::ForDType(DType::kF32);
  options.forward_only = true;
  auto onednn = kernel_test::CreateKernelUnderTest(*OneDnn(), desc, DType::kF32);
  EXPECT_TRUE(onednn.ok()) << "ReLU6 fused in training runs on oneDNN too: " << onednn.status();
  auto ours = OneDnn()->Create(desc, options, {});
  ASSERT_TRUE(ours.ok()) << ours.status();
  auto truth = kernel_test::CreateKernelUnderTest(*Reference(), desc, DType::kF32);
  ASSERT_TRUE(truth.ok()) << truth.status();
  auto buffers = kernel_test::AllocateBuffers((*ours)->signature());
  ASSERT_TRUE(buffers.ok()) << buffers.status();
  const KernelSignature& sig = (*ours)->signature();
  const KernelSignature& plain = truth->kernel->signature();
  // Integers: x in [-3, 3], weights in [-1, 1], bias 0: sums of 72 products
  // exact in fp32, reaching past 0 and 6.
  const std::vector<double> x = onednn_test::IntegerValues(plain.inputs[0].shape, 3, -3, 3);
  const std::vector<double> w = onednn_test::IntegerValues(plain.params[0].shape, 4, -1, 1);
  const std::vector<double> b(plain.params[1].shape.num_elements(), 0.0);
  ASSERT_TRUE(WritePlain(sig.inputs[0], buffers->x[0].data(), x).ok());
  ASSERT_TRUE(WritePlain(sig.params[0], buffers->params[0].data(), w).ok());
  ASSERT_TRUE(WritePlain(sig.params[1], buffers->params[1].data(), b).ok());
  ASSERT_TRUE(kernel_test::FromDoubles(plain.inputs[0], truth->buffers.x[0].data(), x).ok());
  ASSERT_TRUE(kernel_test::FromDoubles(plain.params[0], truth->buffers.params[0].data(), w).ok());
  ASSERT_TRUE(kernel_test::FromDoubles(plain.params[1], truth->buffers.params[1].data(), b).ok());
  ASSERT_TRUE((*ours)->Forward(buffers->Args(/*training=*/false)).ok());
  ASSERT_TRUE(truth->kernel->Forward(truth->buffers.Args(/*training=*/false)).ok());
  auto got = ReadPlain(sig.output, buffers->y.data());
  ASSERT_TRUE(got.ok()) << got.status();
  const std::vector<double> want = kernel_test::ToDoubles(plain.output, truth->buffers.y.data());
  EXPECT_EQ(*got, want);
  int zeros = 0, sixes = 0;
  for (double v : want) {
    zeros += v == 0;
    sixes += v == 6;
  }
  EXPECT_GT(zeros, 0);
  EXPECT_GT(sixes, 0);
}

// ReLU6 and whether dy passes at y, stated here: masked at 0 and 6.
double Clip(double v) { return v > 0 ? (v < 6 ? v : 6) : 0; }
bool Passes(double y) { return y > 0 && y < 6; }

// A fused ReLU6 op in training on oneDNN in `dtype` (fp32, bf16), its
// buffers, and the plain values written into them.
struct Fused {
  std::unique_ptr<Kernel> kernel;
  kernel_test::KernelBuffers buffers;
};

class OneDnnFusedRelu6Test : public ::testing::TestWithParam<DType> {
 protected:
  // Skips (returns false) where bf16 is asked for on a CPU without it.
  bool Make(const std::string& text, Fused* out) {
    const OpDesc desc = *ParseOpDesc(text);
    auto kernel = OneDnn()->Create(desc, GetParam(), {});
    if (!kernel.ok() && absl::StrContains(kernel.status().message(), "avx512_bf16")) return false;
    EXPECT_TRUE(kernel.ok()) << text << ": " << kernel.status();
    if (!kernel.ok()) return false;
    auto buffers = kernel_test::AllocateBuffers((*kernel)->signature());
    EXPECT_TRUE(buffers.ok()) << buffers.status();
    if (!buffers.ok()) return false;
    out->kernel = *std::move(kernel);
    out->buffers = *std::move(buffers);
    return true;
  }
  // Forward, then both backward passes, in training.
  void Run(Fused& f) {
    const KernelArgs args = f.buffers.Args(/*training=*/true);
    ASSERT_TRUE(f.kernel->Forward(args).ok());
    ASSERT_TRUE(f.kernel->BackwardData(args).ok());
    ASSERT_TRUE(f.kernel->BackwardWeights(args).ok());
  }
  std::vector<double> Read(const TensorSpec& spec, const Buffer& buffer) {
    auto values = ReadPlain(spec, buffer.data());
    EXPECT_TRUE(values.ok()) << values.status();
    return values.ok() ? *values : std::vector<double>();
  }
};

// Counts of the values at exactly 0, exactly 6 and strictly inside: each
// case below must hit all three.
void ExpectBothClipsAndInside(const std::vector<double>& pre) {
  int zeros = 0, sixes = 0, inside = 0;
  for (double v : pre) {
    zeros += v == 0;
    sixes += v == 6;
    inside += Passes(v);
  }
  EXPECT_GT(zeros, 0);
  EXPECT_GT(sixes, 0);
  EXPECT_GT(inside, 0);
}

// add+ReLU6: y = clip(x0 + x1), dx0 = dx1 = dy where 0 < x0 + x1 < 6.
TEST_P(OneDnnFusedRelu6Test, AddMasksAtExactlyZeroAndSix) {
  Fused f;
  if (!Make("add:mb2ic16ih4iw4_relu6", &f)) GTEST_SKIP() << "no bf16 on this CPU";
  const KernelSignature& sig = f.buffers.signature;
  const Shape shape{2, 16, 4, 4};
  const std::vector<double> x0 = onednn_test::IntegerValues(shape, 5, -3, 9);
  const std::vector<double> x1 = onednn_test::IntegerValues(shape, 6, -2, 2);
  const std::vector<double> dy = onednn_test::IntegerValues(shape, 7, 1, 3);
  ASSERT_TRUE(WritePlain(sig.inputs[0], f.buffers.x[0].data(), x0).ok());
  ASSERT_TRUE(WritePlain(sig.inputs[1], f.buffers.x[1].data(), x1).ok());
  ASSERT_TRUE(WritePlain(sig.output, f.buffers.dy.data(), dy).ok());
  Run(f);
  const std::vector<double> y = Read(sig.output, f.buffers.y);
  const std::vector<double> dx0 = Read(sig.inputs[0], f.buffers.dx[0]);
  const std::vector<double> dx1 = Read(sig.inputs[1], f.buffers.dx[1]);
  std::vector<double> sum(x0.size());
  for (size_t i = 0; i < x0.size(); ++i) {
    sum[i] = x0[i] + x1[i];
    ASSERT_EQ(y[i], Clip(sum[i])) << "element " << i;
    ASSERT_EQ(dx0[i], Passes(sum[i]) ? dy[i] : 0) << "element " << i << ", x0 + x1 " << sum[i];
    ASSERT_EQ(dx1[i], dx0[i]) << "element " << i;
  }
  ExpectBothClipsAndInside(sum);
}

// conv+ReLU6 with identity 1x1 weights: y = clip(x); dx = dy where
// 0 < x < 6 (the epilogue's mask, then an identity backward data).
TEST_P(OneDnnFusedRelu6Test, ConvEpilogueMasksAtExactlyZeroAndSix) {
  Fused f;
  if (!Make("conv:mb2_ic16oc16_ih4oh4kh1sh1ph0_iw4ow4kw1sw1pw0_relu6", &f))
    GTEST_SKIP() << "no bf16 on this CPU";
  const KernelSignature& sig = f.buffers.signature;
  const Shape shape{2, 16, 4, 4};
  const std::vector<double> x = onednn_test::IntegerValues(shape, 8, -3, 9);
  const std::vector<double> dy = onednn_test::IntegerValues(shape, 9, 1, 3);
  std::vector<double> w(16 * 16, 0.0);
  for (int k = 0; k < 16; ++k) w[k * 16 + k] = 1;
  ASSERT_TRUE(WritePlain(sig.inputs[0], f.buffers.x[0].data(), x).ok());
  ASSERT_TRUE(WritePlain(sig.params[0], f.buffers.params[0].data(), w).ok());
  ASSERT_TRUE(WritePlain(sig.output, f.buffers.dy.data(), dy).ok());
  Run(f);
  const std::vector<double> y = Read(sig.output, f.buffers.y);
  const std::vector<double> dx = Read(sig.inputs[0], f.buffers.dx[0]);
  const std::vector<double> dw = Read(sig.params[0], f.buffers.dparams[0]);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(y[i], Clip(x[i])) << "element " << i;
    ASSERT_EQ(dx[i], Passes(x[i]) ? dy[i] : 0) << "element " << i << ", x " << x[i];
  }
  // dW[k][c] = sum over (n, h, w) of masked dy_k * x_c: the weight pass
  // takes the masked dy too (the diagonal, small integers: exact).
  for (int k = 0; k < 16; ++k) {
    double want = 0;
    for (int n = 0; n < 2; ++n)
      for (int p = 0; p < 16; ++p) {
        const size_t i = (n * 16 + k) * 16 + p;
        want += Passes(x[i]) ? dy[i] * x[i] : 0;
      }
    EXPECT_EQ(dw[k * 16 + k], want) << "dW[" << k << "][" << k << "]";
  }
  ExpectBothClipsAndInside(x);
}

// bn+ReLU6 with gamma 0: y = beta exactly per channel, so channels with
// beta 0 and 6 sit on the clips and the others inside or past them; the
// masked dy reaches dbeta = sum of dy where 0 < beta < 6, else 0 (and
// dgamma 0 there).
TEST_P(OneDnnFusedRelu6Test, BatchNormMasksAtExactlyZeroAndSix) {
  Fused f;
  if (!Make("bn:mb2ic16ih3iw3_eps0.001mom0.9_relu6", &f)) GTEST_SKIP() << "no bf16 on this CPU";
  const KernelSignature& sig = f.buffers.signature;
  const Shape shape{2, 16, 3, 3};
  const double kBetas[] = {0, 6, 3, 5.96875, 6.03125, -1, 0.5, 7};
  std::vector<double> gamma(16, 0.0), beta(16);
  for (int c = 0; c < 16; ++c) beta[c] = kBetas[c % 8];
  const std::vector<double> x = onednn_test::IntegerValues(shape, 10, -3, 9);
  const std::vector<double> dy = onednn_test::IntegerValues(shape, 11, 1, 3);
  ASSERT_TRUE(WritePlain(sig.inputs[0], f.buffers.x[0].data(), x).ok());
  ASSERT_TRUE(WritePlain(sig.params[0], f.buffers.params[0].data(), gamma).ok());
  ASSERT_TRUE(WritePlain(sig.params[1], f.buffers.params[1].data(), beta).ok());
  for (int s = 0; s < 2; ++s)
    ASSERT_TRUE(WritePlain(sig.state[s], f.buffers.state[s].data(), std::vector<double>(16, 1.0))
                    .ok());
  ASSERT_TRUE(WritePlain(sig.output, f.buffers.dy.data(), dy).ok());
  Run(f);
  const std::vector<double> y = Read(sig.output, f.buffers.y);
  const std::vector<double> dgamma = Read(sig.params[0], f.buffers.dparams[0]);
  const std::vector<double> dbeta = Read(sig.params[1], f.buffers.dparams[1]);
  for (int c = 0; c < 16; ++c) {
    double sum = 0;
    for (int n = 0; n < 2; ++n)
      for (int p = 0; p < 9; ++p) {
        const size_t i = (n * 16 + c) * 9 + p;
        ASSERT_EQ(y[i], Clip(beta[c])) << "channel " << c;
        sum += dy[i];
      }
    EXPECT_EQ(dbeta[c], Passes(beta[c]) ? sum : 0) << "channel " << c << ", beta " << beta[c];
    if (!Passes(beta[c])) {
      EXPECT_EQ(dgamma[c], 0) << "channel " << c;
    }
  }
  ExpectBothClipsAndInside(beta);
}

INSTANTIATE_TEST_SUITE_P(Types, OneDnnFusedRelu6Test, ::testing::Values(DType::kF32, DType::kBF16),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(DTypeName(info.param));
                         });

}  // namespace
}  // namespace cnnbench
