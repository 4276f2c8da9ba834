// oneDNN convolution against the reference backend: forward, backward data
// and backward weights on integer data (exact in fp32) over odd sizes,
// stride > 1, TensorFlow's asymmetric SAME padding, explicit asymmetric
// padding, dilation, groups, depthwise and bias.
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::CompareWithReference;
using onednn_test::OneDnn;

struct ConvCase {
  int64_t n, c, k, ih, iw, kh, kw, sh, sw;
  Padding padding;
  int64_t groups = 1, dilation = 1;
  bool bias = false;
  int64_t pt = 0, pb = 0, pl = 0, pr = 0;  // for Padding::kExplicit
};

std::string ConvString(const ConvCase& c) {
  ConvDesc d;
  d.n = c.n;
  d.c = c.c;
  d.k = c.k;
  d.groups = c.groups;
  d.bias = c.bias;
  d.h = MakeWindowDim(c.ih, c.kh, c.sh, c.padding, c.dilation, c.pt, c.pb).value();
  d.w = MakeWindowDim(c.iw, c.kw, c.sw, c.padding, c.dilation, c.pl, c.pr).value();
  return d.ToString();
}

std::vector<std::string> Cases() {
  return {
      // 3x3 SAME on odd 7x7, bias.
      ConvString({2, 8, 16, 7, 7, 3, 3, 1, 1, Padding::kSame, 1, 1, true}),
      // SAME stride 2 on an even input: TensorFlow pads 0 before, 1 after.
      ConvString({2, 5, 7, 8, 8, 3, 3, 2, 2, Padding::kSame}),
      // First-layer style: 3 channels, 7x7 stride 2.
      ConvString({2, 3, 8, 15, 15, 7, 7, 2, 2, Padding::kSame, 1, 1, true}),
      // ResNet projection: 1x1 stride 2 VALID.
      ConvString({2, 16, 32, 9, 9, 1, 1, 2, 2, Padding::kValid}),
      // Explicit asymmetric padding, non-square kernel and strides.
      ConvString({2, 4, 6, 7, 6, 3, 2, 2, 1, Padding::kExplicit, 1, 1, true, 1, 2, 0, 1}),
      // Dilation 2.
      ConvString({2, 8, 8, 9, 9, 3, 3, 1, 1, Padding::kSame, 1, 2}),
      // Grouped (2 groups), odd output channels per group.
      ConvString({2, 8, 6, 6, 6, 3, 3, 1, 1, Padding::kSame, 2}),
      // Depthwise, stride 2.
      ConvString({2, 16, 16, 9, 9, 3, 3, 2, 2, Padding::kSame, 16, 1, true}),
      // Depthwise 5x5 and 7x7 (NASNet's separable convolutions): oneDNN 2.6
      // has their weight gradient only as its reference kernel on the
      // blocked layout, so the backend copies x and dy channels-last.
      ConvString({2, 16, 16, 9, 9, 5, 5, 1, 1, Padding::kSame, 16}),
      ConvString({2, 32, 32, 11, 11, 7, 7, 2, 2, Padding::kSame, 32}),
      // 5x5 VALID stride 3 on 11x13.
      ConvString({3, 4, 4, 11, 13, 5, 5, 3, 3, Padding::kValid}),
      // Blocked-friendly channels (jit, nChw8c on AVX2).
      ConvString({1, 32, 32, 6, 6, 3, 3, 1, 1, Padding::kSame, 1, 1, true}),
  };
}

class OneDnnConvTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OneDnnConvTest, MatchesReference) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<OpDesc> desc = ParseOpDesc(GetParam());
  ASSERT_TRUE(desc.ok()) << desc.status();
  absl::Status status = CompareWithReference(*desc);
  EXPECT_TRUE(status.ok()) << status;
}

INSTANTIATE_TEST_SUITE_P(Shapes, OneDnnConvTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return absl::StrReplaceAll(info.param, {{":", "_"}});
                         });

TEST(OneDnnConvLayoutTest, ChoosesABlockedLayoutAndAJitKernel) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<ConvDesc> desc =
      ConvDesc::Parse(ConvString({2, 32, 64, 14, 14, 3, 3, 1, 1, Padding::kSame}));
  ASSERT_TRUE(desc.ok()) << desc.status();
  absl::StatusOr<std::unique_ptr<Kernel>> kernel = OneDnn()->Create(*desc, DType::kF32, {});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const KernelSignature& sig = (*kernel)->signature();
  // On AVX2 and AVX-512 machines oneDNN's direct convolution works on
  // channel-blocked activations and weights.
  EXPECT_EQ(sig.output.layout, Layout::kBlocked) << sig.output.DebugString();
  EXPECT_EQ(sig.params[0].layout, Layout::kBlocked) << sig.params[0].DebugString();
  EXPECT_NE(sig.output.native, nullptr);
  EXPECT_EQ(sig.output.shape, (Shape{2, 64, 14, 14}));
  EXPECT_EQ(sig.params[0].shape, (Shape{64, 32, 3, 3}));
  EXPECT_NE((*kernel)->implementation().find("jit"), std::string::npos)
      << (*kernel)->implementation();
}

// `options` in bf16: integers in [-2, 2], compared to 1/128 relative and
// 1e-2 absolute (bf16's 8-bit mantissa).
onednn_test::CompareOptions InBf16(onednn_test::CompareOptions options) {
  options.dtype = DType::kBF16;
  options.low = -2;
  options.high = 2;
  options.forward_rtol = options.backward_rtol = 1.0 / 128;
  options.forward_atol = options.backward_atol = 1e-2;
  return options;
}

// The ReLU epilogue (the forward primitive's eltwise post-op) against the
// reference, forward and backward (dy masked by y > 0 once for both passes
// in Backward, in each pass called alone), with and without a bias, plain
// and blocked-friendly channels, fp32 on integers and bf16 where the CPU has
// it; a kernel made forward only refuses the backward.
TEST(OneDnnConvReluEpilogueTest, MatchesReferenceForwardAndBackward) {
  ASSERT_NE(OneDnn(), nullptr);
  for (ConvCase c : {ConvCase{2, 8, 16, 7, 7, 3, 3, 1, 1, Padding::kSame, 1, 1, true},
                     ConvCase{2, 5, 7, 8, 8, 3, 3, 2, 2, Padding::kSame},
                     ConvCase{1, 32, 32, 6, 6, 3, 3, 1, 1, Padding::kSame, 1, 1, true},
                     ConvCase{2, 16, 16, 9, 9, 3, 3, 2, 2, Padding::kSame, 16, 1, true}}) {
    const std::string text = ConvString(c) + "_relu";
    absl::StatusOr<OpDesc> desc = ParseOpDesc(text);
    ASSERT_TRUE(desc.ok()) << desc.status();
    onednn_test::CompareOptions options;
    absl::Status status = CompareWithReference(*desc, options);
    EXPECT_TRUE(status.ok()) << text << ": " << status;
    absl::StatusOr<std::unique_ptr<Kernel>> training = OneDnn()->Create(*desc, DType::kF32, {});
    ASSERT_TRUE(training.ok()) << training.status();
    EXPECT_TRUE((*training)->signature().backward_reads_output) << text;
    KernelOptions forward_only = KernelOptions::ForDType(DType::kF32);
    forward_only.forward_only = true;
    absl::StatusOr<std::unique_ptr<Kernel>> kernel = OneDnn()->Create(*desc, forward_only, {});
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_FALSE((*kernel)->signature().backward_reads_output) << text;
    EXPECT_LE((*kernel)->signature().scratch_bytes, (*training)->signature().scratch_bytes);
    KernelArgs args;
    for (const absl::Status& s : {(*kernel)->BackwardData(args), (*kernel)->BackwardWeights(args),
                                  (*kernel)->Backward(args)}) {
      EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
      EXPECT_NE(s.message().find("forward only"), absl::string_view::npos) << s;
    }
    if (OneDnn()->Supports(*desc, KernelOptions::ForDType(DType::kBF16)).ok()) {
      status = CompareWithReference(*desc, InBf16(options));
      EXPECT_TRUE(status.ok()) << text << " bf16: " << status;
    }
  }
}

// A residual input (`_add`: y = f(conv(x0) + b + x1), forward only, the sum
// post-op) against the reference: y a buffer of its own (x1 copied in) and
// y over x1 (the plan's binding), with and without bias and ReLU, plain and
// blocked-friendly channels, fp32 on integers and bf16 where the CPU has
// it. x1 is read in y's layout; training refuses the op.
TEST(OneDnnConvResidualTest, MatchesReferenceApartAndOverTheShortcut) {
  ASSERT_NE(OneDnn(), nullptr);
  for (ConvCase c : {ConvCase{2, 8, 16, 7, 7, 3, 3, 1, 1, Padding::kSame, 1, 1, true},
                     ConvCase{2, 5, 7, 8, 8, 3, 3, 2, 2, Padding::kSame},
                     ConvCase{1, 32, 64, 6, 6, 1, 1, 1, 1, Padding::kValid, 1, 1, true},
                     ConvCase{2, 16, 16, 9, 9, 3, 3, 2, 2, Padding::kSame, 16, 1, true}}) {
    for (const char* suffix : {"_add", "_add_relu"}) {
      const std::string text = ConvString(c) + suffix;
      absl::StatusOr<OpDesc> desc = ParseOpDesc(text);
      ASSERT_TRUE(desc.ok()) << desc.status();
      absl::Status training = OneDnn()->Supports(*desc, KernelOptions::ForDType(DType::kF32));
      EXPECT_EQ(training.code(), absl::StatusCode::kUnimplemented) << text << ": " << training;
      EXPECT_NE(training.message().find("forward only"), absl::string_view::npos) << training;
      KernelOptions forward_only = KernelOptions::ForDType(DType::kF32);
      forward_only.forward_only = true;
      absl::StatusOr<std::unique_ptr<Kernel>> kernel = OneDnn()->Create(*desc, forward_only, {});
      ASSERT_TRUE(kernel.ok()) << kernel.status();
      const KernelSignature& sig = (*kernel)->signature();
      ASSERT_EQ(sig.inputs.size(), 2u) << text;
      EXPECT_TRUE(OneDnn()->SameLayout(sig.inputs[1], sig.output)) << text;
      EXPECT_EQ(sig.output_over_input, 1) << text;
      EXPECT_EQ((*kernel)->implementation().rfind("ref:", 0), std::string::npos)
          << text << ": " << (*kernel)->implementation();
      onednn_test::CompareOptions options;
      options.forward_only = true;
      for (int over : {-1, 1}) {
        options.y_over_input = over;
        absl::Status status = CompareWithReference(*desc, options);
        EXPECT_TRUE(status.ok()) << text << " y over x" << over << ": " << status;
      }
      KernelOptions bf16_forward = KernelOptions::ForDType(DType::kBF16);
      bf16_forward.forward_only = true;
      if (OneDnn()->Supports(*desc, bf16_forward).ok()) {
        absl::Status status = CompareWithReference(*desc, InBf16(options));
        EXPECT_TRUE(status.ok()) << text << " bf16: " << status;
      }
    }
  }
}

// The curved kinds (sigmoid, SiLU, hard-sigmoid, hard-swish, GELU) as a
// convolution's forward-only epilogue (eltwise post-ops; hard-sigmoid two)
// against the reference, with a residual input too, fp32 and bf16 where the
// CPU has it; training refuses them (their gradient needs x).
TEST(OneDnnConvEpilogueTest, CurvedKindsRunForwardOnly) {
  ASSERT_NE(OneDnn(), nullptr);
  for (int k = static_cast<int>(ActivationKind::kSigmoid);
       k < static_cast<int>(ActivationKind::kCount); ++k) {
    const std::string kind = ActivationSuffix(static_cast<ActivationKind>(k));
    for (ConvCase c : {ConvCase{2, 8, 16, 7, 7, 3, 3, 1, 1, Padding::kSame, 1, 1, true},
                       ConvCase{1, 32, 32, 6, 6, 1, 1, 1, 1, Padding::kValid, 1, 1, true}}) {
      for (const std::string& text : {ConvString(c) + kind, ConvString(c) + "_add" + kind}) {
        absl::StatusOr<OpDesc> desc = ParseOpDesc(text);
        ASSERT_TRUE(desc.ok()) << text << ": " << desc.status();
        EXPECT_EQ(OneDnn()->Supports(*desc, KernelOptions::ForDType(DType::kF32)).code(),
                  absl::StatusCode::kUnimplemented)
            << text;
        // Integers in [-1, 1]: the convolution's sums are exact (in bf16
        // too) and spread over about [-8, 8], across the kinks at -3 and 3
        // and into the tails; the activation is then to fp32's (bf16's)
        // rounding.
        onednn_test::CompareOptions options;
        options.forward_only = true;
        options.low = -1;
        options.high = 1;
        options.forward_rtol = 1e-5;
        options.forward_atol = 1e-6;
        absl::Status status = CompareWithReference(*desc, options);
        EXPECT_TRUE(status.ok()) << text << ": " << status;
        KernelOptions bf16_forward = KernelOptions::ForDType(DType::kBF16);
        bf16_forward.forward_only = true;
        if (OneDnn()->Supports(*desc, bf16_forward).ok()) {
          onednn_test::CompareOptions bf16 = InBf16(options);
          bf16.low = -1;
          bf16.high = 1;
          status = CompareWithReference(*desc, bf16);
          EXPECT_TRUE(status.ok()) << text << " bf16: " << status;
        }
      }
    }
  }
}

// No pass of a depthwise 5x5 or 7x7 convolution runs oneDNN's reference
// kernel where its jit kernels exist (AVX-512): the weight gradient reads
// channels-last copies of x and dy; bf16 too where the CPU has it.
TEST(OneDnnConvLayoutTest, DepthwiseWeightGradientsRunAJitKernel) {
  ASSERT_NE(OneDnn(), nullptr);
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512 here";
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    for (const ConvCase& c : {ConvCase{2, 32, 32, 16, 16, 5, 5, 1, 1, Padding::kSame, 32},
                              ConvCase{2, 32, 32, 16, 16, 7, 7, 2, 2, Padding::kSame, 32}}) {
      absl::StatusOr<ConvDesc> desc = ConvDesc::Parse(ConvString(c));
      ASSERT_TRUE(desc.ok()) << desc.status();
      if (!OneDnn()->Supports(*desc, KernelOptions::ForDType(dtype)).ok()) continue;
      absl::StatusOr<std::unique_ptr<Kernel>> kernel = OneDnn()->Create(*desc, dtype, {});
      ASSERT_TRUE(kernel.ok()) << kernel.status();
      for (OpPass pass : {OpPass::kForward, OpPass::kBackwardData, OpPass::kBackwardWeights}) {
        const std::string impl = (*kernel)->pass_implementation(pass);
        EXPECT_EQ(impl.rfind("ref:", 0), std::string::npos)
            << ConvString(c) << " " << DTypeName(dtype) << " pass " << static_cast<int>(pass)
            << ": " << impl;
      }
    }
  }
}

// bf16 depthwise 5x5 and 7x7 in training against the reference, forward
// and both backward passes: their weight gradient may run oneDNN's fp32
// kernel on fp32 copies of x and dy, its result rounded back (conv.cc takes
// it where its timing is the faster), or the bf16 kernel. Integers in
// [-2, 2], exact in bf16; outputs rounded to bf16's 8 bits.
TEST(OneDnnConvLayoutTest, Bf16DepthwiseWeightGradientsMatchTheReference) {
  ASSERT_NE(OneDnn(), nullptr);
  for (const ConvCase& c : {ConvCase{2, 32, 32, 9, 9, 5, 5, 1, 1, Padding::kSame, 32},
                            ConvCase{2, 48, 48, 9, 9, 7, 7, 2, 2, Padding::kSame, 48},
                            // ConvNeXt's: 7x7, stride 1, with a bias.
                            ConvCase{2, 32, 32, 9, 9, 7, 7, 1, 1, Padding::kSame, 32, 1, true},
                            ConvCase{2, 32, 32, 9, 9, 3, 3, 1, 1, Padding::kSame, 32}}) {
    absl::StatusOr<ConvDesc> desc = ConvDesc::Parse(ConvString(c));
    ASSERT_TRUE(desc.ok()) << desc.status();
    if (!OneDnn()->Supports(*desc, KernelOptions::ForDType(DType::kBF16)).ok())
      GTEST_SKIP() << "no bf16 on this CPU";
    onednn_test::CompareOptions o;
    o.dtype = DType::kBF16;
    o.low = -2;
    o.high = 2;
    o.forward_rtol = o.backward_rtol = 1.0 / 128;
    o.forward_atol = o.backward_atol = 1e-2;
    const absl::Status status = CompareWithReference(*desc, o);
    EXPECT_TRUE(status.ok()) << ConvString(c) << ": " << status;
  }
}

// A producer's layout that only oneDNN's reference convolution reads
// (channels-last into 12 output channels, DenseNet's growth layers after a
// channels-last concatenation) is reordered at the edge instead.
TEST(OneDnnConvLayoutTest, ReordersAProducerOnlyTheReferenceKernelReads) {
  ASSERT_NE(OneDnn(), nullptr);
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512 here";
  absl::StatusOr<ConvDesc> a =
      ConvDesc::Parse(ConvString({2, 8, 28, 6, 6, 1, 1, 1, 1, Padding::kValid}));
  absl::StatusOr<ConvDesc> b =
      ConvDesc::Parse(ConvString({2, 8, 12, 6, 6, 1, 1, 1, 1, Padding::kValid}));
  absl::StatusOr<OpDesc> concat = ParseOpDesc("concat:mb2ih6iw6_ic28:12");
  ASSERT_TRUE(a.ok() && b.ok() && concat.ok());
  auto ka = OneDnn()->Create(*a, DType::kF32, {});
  auto kb = OneDnn()->Create(*b, DType::kF32, {});
  ASSERT_TRUE(ka.ok() && kb.ok());
  auto kc = OneDnn()->Create(*concat, DType::kF32,
                             {(*ka)->signature().output, (*kb)->signature().output});
  ASSERT_TRUE(kc.ok()) << kc.status();
  const TensorSpec produced = (*kc)->signature().output;
  ASSERT_FALSE(produced.is_plain()) << produced.DebugString();
  const std::string growth = ConvString({2, 40, 12, 6, 6, 3, 3, 1, 1, Padding::kSame});
  absl::StatusOr<ConvDesc> desc = ConvDesc::Parse(growth);
  ASSERT_TRUE(desc.ok()) << desc.status();
  absl::StatusOr<std::unique_ptr<Kernel>> kernel = OneDnn()->Create(*desc, DType::kF32, {produced});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ((*kernel)->implementation().rfind("ref:", 0), std::string::npos)
      << (*kernel)->implementation();
  onednn_test::CompareOptions options;
  options.onednn_inputs = {produced};
  absl::Status status = CompareWithReference(*desc, options);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(OneDnnConvLayoutTest, ReadsABlockedProducerAsItIs) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<ConvDesc> first =
      ConvDesc::Parse(ConvString({2, 16, 32, 10, 10, 3, 3, 1, 1, Padding::kSame}));
  absl::StatusOr<ConvDesc> second =
      ConvDesc::Parse(ConvString({2, 32, 16, 10, 10, 3, 3, 2, 2, Padding::kSame, 1, 1, true}));
  ASSERT_TRUE(first.ok() && second.ok());
  absl::StatusOr<std::unique_ptr<Kernel>> a = OneDnn()->Create(*first, DType::kF32, {});
  ASSERT_TRUE(a.ok()) << a.status();
  const TensorSpec produced = (*a)->signature().output;
  absl::StatusOr<std::unique_ptr<Kernel>> b = OneDnn()->Create(*second, DType::kF32, {produced});
  ASSERT_TRUE(b.ok()) << b.status();
  // The very spec comes back: no reorder on this edge.
  EXPECT_EQ((*b)->signature().inputs[0].native, produced.native);
  EXPECT_TRUE(OneDnn()->SameLayout(produced, (*b)->signature().inputs[0]));
  // And the numbers still match the reference with that layout.
  onednn_test::CompareOptions options;
  options.onednn_inputs = {produced};
  absl::Status status = CompareWithReference(*second, options);
  EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace cnnbench
