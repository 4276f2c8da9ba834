// Reference convolution: exact forward on small integer cases (stride,
// asymmetric SAME padding, groups, dilation, bias) and both backward passes
// against finite differences on odd shapes.
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
using kernel_test::FillUniform;
using kernel_test::FromDoubles;
using kernel_test::KernelUnderTest;
using kernel_test::ToDoubles;

std::vector<double> Iota(int count) {
  std::vector<double> v(count);
  for (int i = 0; i < count; ++i) v[i] = i + 1;
  return v;
}

// Runs a forward of `text` in `dtype` with the given x, weights and bias.
std::vector<double> ConvForward(const std::string& text, DType dtype, const std::vector<double>& x,
                                const std::vector<double>& w, const std::vector<double>& b = {}) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  absl::StatusOr<ConvDesc> desc = ConvDesc::Parse(text);
  EXPECT_TRUE(desc.ok()) << desc.status();
  absl::StatusOr<KernelUnderTest> k = CreateKernelUnderTest(*backend, *desc, dtype);
  EXPECT_TRUE(k.ok()) << k.status();
  if (!k.ok()) return {};
  const KernelSignature& sig = k->kernel->signature();
  EXPECT_TRUE(FromDoubles(sig.inputs[0], k->buffers.x[0].data(), x).ok());
  EXPECT_TRUE(FromDoubles(sig.params[0], k->buffers.params[0].data(), w).ok());
  if (!b.empty()) {
    EXPECT_TRUE(FromDoubles(sig.params[1], k->buffers.params[1].data(), b).ok());
  }
  absl::Status status = k->kernel->Forward(k->buffers.Args());
  EXPECT_TRUE(status.ok()) << status;
  return ToDoubles(sig.output, k->buffers.y.data());
}

class ConvForwardTest : public ::testing::TestWithParam<DType> {};

TEST_P(ConvForwardTest, ValidWithBias) {
  // x = 1..9 (3x3), w = [1 2; 3 4], b = 1.
  EXPECT_EQ(ConvForward("conv:mb1_ic1oc1_ih3oh2kh2sh1ph0_iw3ow2kw2sw1pw0_bias", GetParam(), Iota(9),
                        {1, 2, 3, 4}, {1}),
            (std::vector<double>{38, 48, 68, 78}));
}

TEST_P(ConvForwardTest, SameStride2PadsTheOddElementAfter) {
  // x = 1..16 (4x4), 3x3 ones, SAME stride 2: pads 0 before, 1 after.
  absl::StatusOr<WindowDim> same = MakeWindowDim(4, 3, 2, Padding::kSame);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->pad_before, 0);
  EXPECT_EQ(same->pad_after, 1);
  EXPECT_EQ(ConvForward("conv:mb1_ic1oc1_ih4oh2kh3sh2pt0pb1_iw4ow2kw3sw2pl0pr1", GetParam(),
                        Iota(16), std::vector<double>(9, 1.0)),
            (std::vector<double>{54, 45, 72, 54}));
}

TEST_P(ConvForwardTest, SymmetricPadding) {
  // x = 1..4 (2x2), 3x3 ones, pad 1: every output sums the whole input.
  EXPECT_EQ(ConvForward("conv:mb1_ic1oc1_ih2oh2kh3sh1ph1_iw2ow2kw3sw1pw1", GetParam(), Iota(4),
                        std::vector<double>(9, 1.0)),
            (std::vector<double>{10, 10, 10, 10}));
}

TEST_P(ConvForwardTest, GroupsReadTheirOwnChannels) {
  // x = [2, 3] (2 channels of 1x1); 2 groups of 2 outputs each.
  EXPECT_EQ(ConvForward("conv:mb1_g2_ic2oc4_ih1oh1kh1sh1ph0_iw1ow1kw1sw1pw0", GetParam(), {2, 3},
                        {1, 2, 3, 4}),
            (std::vector<double>{2, 4, 9, 12}));
}

TEST_P(ConvForwardTest, Depthwise) {
  // 2 channels of 1x3, kernel 1x2 each: y_c = w0 x_c[q] + w1 x_c[q+1].
  EXPECT_EQ(ConvForward("conv:mb1_g2_ic2oc2_ih1oh1kh1sh1ph0_iw3ow2kw2sw1pw0", GetParam(),
                        {1, 2, 3, 4, 5, 6}, {1, 10, 2, 20}),
            (std::vector<double>{21, 32, 2 * 4 + 20 * 5, 2 * 5 + 20 * 6}));
}

TEST_P(ConvForwardTest, Dilation) {
  // 1x5 input, kernel 1x2 dilated by 2: y[q] = x[q] + 10 x[q+2].
  EXPECT_EQ(ConvForward("conv:mb1_ic1oc1_ih1oh1kh1sh1ph0_iw5ow3kw2sw1pw0dw2", GetParam(), Iota(5),
                        {1, 10}),
            (std::vector<double>{31, 42, 53}));
}

TEST_P(ConvForwardTest, BatchAndChannels) {
  // 2 images x 2 channels of 1x1 -> 3 outputs: y[n,k] = sum_c w[k,c] x[n,c].
  EXPECT_EQ(ConvForward("conv:mb2_ic2oc3_ih1oh1kh1sh1ph0_iw1ow1kw1sw1pw0_bias", GetParam(),
                        {1, 2, 3, 4}, {1, 1, 1, -1, 2, 0}, {0, 0, 100}),
            (std::vector<double>{3, -1, 102, 7, -1, 106}));
}

TEST_P(ConvForwardTest, ReluEpilogueZeroesWhatIsNotPositive) {
  // The BatchAndChannels case with the ReLU epilogue: -1 and -1 become 0,
  // and a sum of exactly 0 (bias -3 on 3) stays 0.
  EXPECT_EQ(ConvForward("conv:mb2_ic2oc3_ih1oh1kh1sh1ph0_iw1ow1kw1sw1pw0_bias_relu", GetParam(),
                        {1, 2, 3, 4}, {1, 1, 1, -1, 2, 0}, {-3, 0, 100}),
            (std::vector<double>{0, 0, 102, 4, 0, 106}));
  // Without a bias.
  EXPECT_EQ(ConvForward("conv:mb1_ic1oc1_ih1oh1kh1sh1ph0_iw3ow3kw1sw1pw0_relu", GetParam(),
                        {-2, 0, 5}, {1}),
            (std::vector<double>{0, 0, 5}));
}

// The residual input (`_add`) is added to the sum before the activation,
// and the same y comes out when y is x1's buffer (written over it).
TEST_P(ConvForwardTest, ResidualIsAddedBeforeTheActivationAndMayBeWrittenOver) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  absl::StatusOr<ConvDesc> desc =
      ConvDesc::Parse("conv:mb2_ic2oc3_ih1oh1kh1sh1ph0_iw1ow1kw1sw1pw0_bias_add_relu");
  ASSERT_TRUE(desc.ok()) << desc.status();
  KernelOptions options = KernelOptions::ForDType(GetParam());
  EXPECT_EQ(backend->Create(*desc, options, {}).status().code(), absl::StatusCode::kUnimplemented);
  options.forward_only = true;
  absl::StatusOr<KernelUnderTest> k = CreateKernelUnderTest(*backend, *desc, options);
  ASSERT_TRUE(k.ok()) << k.status();
  const KernelSignature& sig = k->kernel->signature();
  ASSERT_EQ(sig.inputs.size(), 2u);
  EXPECT_EQ(sig.inputs[1].shape, sig.output.shape);
  EXPECT_EQ(sig.output_over_input, 1);
  // BatchAndChannels' sums (3, -1, 102, 7, -1, 106) plus x1, then the ReLU.
  const std::vector<double> x1 = {-4, 2, -200, 1, 0.5, 0};
  const std::vector<double> want = {0, 1, 0, 8, 0, 106};
  ASSERT_TRUE(FromDoubles(sig.inputs[0], k->buffers.x[0].data(), {1, 2, 3, 4}).ok());
  ASSERT_TRUE(FromDoubles(sig.inputs[1], k->buffers.x[1].data(), x1).ok());
  ASSERT_TRUE(FromDoubles(sig.params[0], k->buffers.params[0].data(), {1, 1, 1, -1, 2, 0}).ok());
  ASSERT_TRUE(FromDoubles(sig.params[1], k->buffers.params[1].data(), {0, 0, 100}).ok());
  KernelArgs args = k->buffers.Args(/*training=*/false);
  ASSERT_TRUE(k->kernel->Forward(args).ok());
  EXPECT_EQ(ToDoubles(sig.output, k->buffers.y.data()), want);
  ASSERT_TRUE(FromDoubles(sig.output, k->buffers.y.data(), x1).ok());
  args.x[1] = args.y;
  ASSERT_TRUE(k->kernel->Forward(args).ok());
  EXPECT_EQ(ToDoubles(sig.output, k->buffers.y.data()), want);
}

INSTANTIATE_TEST_SUITE_P(Types, ConvForwardTest, ::testing::Values(DType::kF32, DType::kF64));

// Behind the ReLU epilogue both backward passes read dy masked by y > 0:
// a dy where y is 0 changes no gradient.
TEST(ConvReluEpilogueTest, BackwardIgnoresDyWhereTheOutputIsZero) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  absl::StatusOr<ConvDesc> desc =
      ConvDesc::Parse("conv:mb1_ic2oc2_ih3oh3kh3sh1ph1_iw3ow3kw3sw1pw1_bias_relu");
  ASSERT_TRUE(desc.ok()) << desc.status();
  absl::StatusOr<KernelUnderTest> k = CreateKernelUnderTest(*backend, *desc, DType::kF64);
  ASSERT_TRUE(k.ok()) << k.status();
  FillDefaults(k->buffers, 3);
  const KernelSignature& sig = k->kernel->signature();
  EXPECT_TRUE(sig.backward_reads_output);
  FillUniform(sig.output, k->buffers.dy.data(), 4, -1, 1);
  KernelArgs args = k->buffers.Args();
  ASSERT_TRUE(k->kernel->Forward(args).ok());
  ASSERT_TRUE(k->kernel->Backward(args).ok());
  const std::vector<double> dx = ToDoubles(sig.inputs[0], args.dx[0]);
  const std::vector<double> dw = ToDoubles(sig.params[0], args.dparams[0]);
  const std::vector<double> db = ToDoubles(sig.params[1], args.dparams[1]);
  const std::vector<double> y = ToDoubles(sig.output, args.y);
  std::vector<double> dy = ToDoubles(sig.output, args.dy);
  int zeros = 0;
  for (size_t i = 0; i < y.size(); ++i)
    if (y[i] == 0) {
      dy[i] = 1e6;
      ++zeros;
    }
  ASSERT_GT(zeros, 0);
  ASSERT_TRUE(FromDoubles(sig.output, k->buffers.dy.data(), dy).ok());
  ASSERT_TRUE(k->kernel->Backward(args).ok());
  EXPECT_EQ(ToDoubles(sig.inputs[0], args.dx[0]), dx);
  EXPECT_EQ(ToDoubles(sig.params[0], args.dparams[0]), dw);
  EXPECT_EQ(ToDoubles(sig.params[1], args.dparams[1]), db);
  // Without y the backward cannot mask: an error, not a guess.
  args.y = nullptr;
  EXPECT_EQ(k->kernel->BackwardData(args).code(), absl::StatusCode::kInvalidArgument);
}

class ConvGradientTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvGradientTest, MatchesFiniteDifferences) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  absl::StatusOr<ConvDesc> desc = ConvDesc::Parse(GetParam());
  ASSERT_TRUE(desc.ok()) << desc.status();
  absl::StatusOr<KernelUnderTest> k = CreateKernelUnderTest(*backend, *desc, DType::kF64);
  ASSERT_TRUE(k.ok()) << k.status();
  FillDefaults(k->buffers, 3);
  absl::Status status = CheckGradients(*k->kernel, k->buffers);
  EXPECT_TRUE(status.ok()) << GetParam() << ": " << status;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvGradientTest,
    ::testing::Values(
        "conv:mb2_ic3oc4_ih5oh5kh3sh1ph1_iw5ow5kw3sw1pw1_bias",        // SAME 3x3
        "conv:mb1_ic2oc3_ih7oh4kh3sh2ph1_iw6ow3kw3sw2pl0pr1",          // SAME stride 2, odd
        "conv:mb2_ic3oc2_ih8oh4kh3sh2pt0pb1_iw8ow4kw3sw2pl0pr1_bias",  // asymmetric SAME
        "conv:mb1_ic2oc2_ih9oh3kh3sh3ph0_iw7ow2kw3sw3pw0",             // VALID stride 3
        "conv:mb1_ic3oc2_ih11oh6kh7sh2ph3_iw10ow5kw7sw2pl2pr3",        // 7x7 stride 2
        "conv:mb2_g2_ic4oc6_ih5oh3kh3sh2ph1_iw5ow3kw3sw2pw1_bias",     // groups
        "conv:mb2_g3_ic3oc3_ih6oh6kh3sh1ph1_iw5ow5kw3sw1pw1",          // depthwise
        "conv:mb1_ic2oc2_ih9oh9kh3sh1ph2dh2_iw7ow3kw2sw2pl1pr0dw3",    // dilation
        "conv:mb3_ic2oc3_ih5oh5kh1sh1ph0_iw3ow3kw1sw1pw0_bias",        // 1x1
        "conv:mb1_ic2oc2_ih5oh5kh1sh1ph0_iw5ow5kw3sw1pw1",             // 1x3 / 3x1 mix
        "conv:mb2_ic3oc4_ih5oh5kh3sh1ph1_iw5ow5kw3sw1pw1_bias_relu",   // ReLU epilogue
        "conv:mb1_ic2oc3_ih7oh4kh3sh2ph1_iw6ow3kw3sw2pl0pr1_relu"));   // ... without bias

TEST(ConvSignatureTest, ParamsAndLiveness) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  absl::StatusOr<ConvDesc> desc =
      ConvDesc::Parse("conv:mb2_g2_ic4oc6_ih5oh3kh3sh2ph1_iw5ow3kw3sw2pw1_bias");
  ASSERT_TRUE(desc.ok());
  absl::StatusOr<std::unique_ptr<Kernel>> k = backend->Create(*desc, DType::kF32, {});
  ASSERT_TRUE(k.ok()) << k.status();
  const KernelSignature& sig = (*k)->signature();
  ASSERT_EQ(sig.inputs.size(), 1u);
  EXPECT_EQ(sig.inputs[0].shape, (Shape{2, 4, 5, 5}));
  EXPECT_EQ(sig.output.shape, (Shape{2, 6, 3, 3}));
  EXPECT_EQ(sig.output.bytes, 2u * 6 * 3 * 3 * sizeof(float));
  ASSERT_EQ(sig.params.size(), 2u);
  EXPECT_EQ(sig.params[0].shape, (Shape{6, 2, 3, 3}));
  EXPECT_EQ(sig.params[1].shape, (Shape{6}));
  EXPECT_TRUE(sig.state.empty());
  EXPECT_EQ(sig.saved_bytes, 0u);
  EXPECT_TRUE(sig.backward_reads_inputs);
  EXPECT_FALSE(sig.backward_reads_output);
  EXPECT_EQ((*k)->implementation(), "reference");
}

}  // namespace
}  // namespace cnnbench
