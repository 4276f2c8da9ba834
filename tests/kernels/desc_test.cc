// Descriptor strings: canonical print -> parse round trips for every op,
// TensorFlow SAME/VALID window arithmetic, and clear errors for malformed or
// inconsistent strings.
#include "kernels/desc.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cnnbench {
namespace {

using ::testing::HasSubstr;

WindowDim Window(int64_t in, int64_t k, int64_t s, Padding padding, int64_t d = 1, int64_t pb = 0,
                 int64_t pa = 0) {
  absl::StatusOr<WindowDim> w = MakeWindowDim(in, k, s, padding, d, pb, pa);
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? *w : WindowDim{};
}

// print -> parse -> equal descriptor and identical string, also through
// ParseOpDesc for layer ops.
template <typename Desc>
void ExpectRoundTrip(const Desc& desc) {
  ASSERT_TRUE(desc.Validate().ok()) << desc.Validate();
  const std::string text = desc.ToString();
  absl::StatusOr<Desc> parsed = Desc::Parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(*parsed == desc) << text;
  EXPECT_EQ(parsed->ToString(), text);
}

template <typename Desc>
void ExpectCanonical(absl::string_view text) {
  absl::StatusOr<Desc> parsed = Desc::Parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->ToString(), text);
  if constexpr (!std::is_same_v<Desc, SgdDesc>) {
    absl::StatusOr<OpDesc> any = ParseOpDesc(text);
    ASSERT_TRUE(any.ok()) << any.status();
    EXPECT_EQ(OpDescToString(*any), text);
  }
}

// The error names the whole string and `field`.
template <typename Desc>
void ExpectError(absl::string_view text, absl::string_view field) {
  absl::StatusOr<Desc> parsed = Desc::Parse(text);
  ASSERT_FALSE(parsed.ok()) << text << " parsed as " << parsed->ToString();
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(std::string(text)));
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(std::string(field)));
}

TEST(WindowTest, SameMatchesTensorFlow) {
  // ceil(in/stride) outputs; the odd padding element goes after.
  EXPECT_EQ(Window(224, 7, 2, Padding::kSame), (WindowDim{224, 112, 7, 2, 2, 3, 1}));
  EXPECT_EQ(Window(56, 3, 1, Padding::kSame), (WindowDim{56, 56, 3, 1, 1, 1, 1}));
  EXPECT_EQ(Window(8, 3, 2, Padding::kSame), (WindowDim{8, 4, 3, 2, 0, 1, 1}));
  EXPECT_EQ(Window(7, 3, 2, Padding::kSame), (WindowDim{7, 4, 3, 2, 1, 1, 1}));
  EXPECT_EQ(Window(112, 3, 2, Padding::kSame), (WindowDim{112, 56, 3, 2, 0, 1, 1}));
  EXPECT_EQ(Window(5, 1, 2, Padding::kSame), (WindowDim{5, 3, 1, 2, 0, 0, 1}));
  EXPECT_EQ(Window(10, 3, 1, Padding::kSame, 2), (WindowDim{10, 10, 3, 1, 2, 2, 2}));
  EXPECT_EQ(Window(1, 5, 1, Padding::kSame), (WindowDim{1, 1, 5, 1, 2, 2, 1}));
}

TEST(WindowTest, ValidMatchesTensorFlow) {
  // ceil((in - (k-1)*d) / stride) outputs, no padding.
  EXPECT_EQ(Window(224, 11, 4, Padding::kValid), (WindowDim{224, 54, 11, 4, 0, 0, 1}));
  EXPECT_EQ(Window(7, 3, 2, Padding::kValid), (WindowDim{7, 3, 3, 2, 0, 0, 1}));
  EXPECT_EQ(Window(5, 5, 1, Padding::kValid), (WindowDim{5, 1, 5, 1, 0, 0, 1}));
  EXPECT_EQ(Window(10, 3, 1, Padding::kValid, 2), (WindowDim{10, 6, 3, 1, 0, 0, 2}));
  EXPECT_EQ(Window(8, 2, 3, Padding::kValid), (WindowDim{8, 3, 2, 3, 0, 0, 1}));
}

TEST(WindowTest, ExplicitPads) {
  EXPECT_EQ(Window(56, 3, 2, Padding::kExplicit, 1, 1, 1), (WindowDim{56, 28, 3, 2, 1, 1, 1}));
  EXPECT_EQ(Window(9, 4, 2, Padding::kExplicit, 1, 0, 2), (WindowDim{9, 4, 4, 2, 0, 2, 1}));
}

TEST(WindowTest, ImpossibleWindowsAreErrors) {
  for (auto w : {MakeWindowDim(4, 5, 1, Padding::kValid),              // kernel > input
                 MakeWindowDim(5, 3, 1, Padding::kValid, 3),           // dilated extent 7 > 5
                 MakeWindowDim(0, 1, 1, Padding::kSame),               // empty input
                 MakeWindowDim(4, 0, 1, Padding::kSame),               // empty kernel
                 MakeWindowDim(4, 1, 0, Padding::kSame),               // zero stride
                 MakeWindowDim(4, 1, 1, Padding::kSame, 0),            // zero dilation
                 MakeWindowDim(-3, 1, 1, Padding::kValid),             // negative
                 MakeWindowDim(2, 5, 1, Padding::kExplicit, 1, 1, 1),  // no output
                 MakeWindowDim(4, 3, 1, Padding::kExplicit, 1, -1, 0)}) {
    EXPECT_FALSE(w.ok());
    EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_THAT(std::string(MakeWindowDim(4, 5, 1, Padding::kValid).status().message()),
              HasSubstr("VALID"));
}

TEST(ConvDescTest, CanonicalStrings) {
  ExpectCanonical<ConvDesc>("conv:mb64_ic256oc512_ih56oh28kh1sh2ph0_iw56ow28kw1sw2pw0");
  ExpectCanonical<ConvDesc>("conv:mb32_g32_ic64oc128_ih56oh28kh3sh2ph1_iw56ow28kw3sw2pw1_bias");
  ExpectCanonical<ConvDesc>("conv:mb1_ic3oc64_ih224oh112kh7sh2pt2pb3_iw224ow112kw7sw2pl2pr3");
  ExpectCanonical<ConvDesc>("conv:mb2_ic4oc4_ih10oh10kh3sh1ph2dh2_iw9ow9kw3sw1pw2dw2");
  // The fused ReLU epilogue, with and without a bias.
  ExpectCanonical<ConvDesc>("conv:mb1_ic64oc64_ih56oh56kh3sh1ph1_iw56ow56kw3sw1pw1_bias_relu");
  ExpectCanonical<ConvDesc>("conv:mb1_ic64oc64_ih56oh56kh3sh1ph1_iw56ow56kw3sw1pw1_relu");
  ExpectCanonical<ConvDesc>("conv:mb1_ic64oc256_ih56oh56kh1sh1ph0_iw56ow56kw1sw1pw0_bias_add_relu");
  ExpectCanonical<ConvDesc>("conv:mb1_ic64oc256_ih56oh56kh1sh1ph0_iw56ow56kw1sw1pw0_add");
}

TEST(ConvDescTest, RoundTripsManyShapes) {
  struct Case {
    int64_t n, c, k, groups, in_h, in_w, kh, kw, stride, dilation;
    Padding padding;
    bool bias;
  };
  const std::vector<Case> cases = {
      {64, 256, 512, 1, 56, 56, 1, 1, 2, 1, Padding::kSame, false},
      {1, 3, 64, 1, 224, 224, 7, 7, 2, 1, Padding::kSame, true},  // asymmetric SAME
      {3, 5, 7, 1, 13, 11, 3, 5, 2, 1, Padding::kSame, true},     // odd sizes
      {2, 3, 6, 1, 9, 7, 3, 3, 3, 1, Padding::kValid, false},
      {4, 32, 32, 32, 15, 15, 3, 3, 2, 1, Padding::kSame, false},  // depthwise
      {2, 8, 12, 4, 10, 10, 3, 3, 1, 1, Padding::kSame, true},     // groups
      {1, 4, 4, 1, 17, 17, 3, 3, 1, 2, Padding::kSame, false},     // dilation
      {1, 4, 4, 2, 17, 12, 3, 2, 2, 3, Padding::kValid, true},
      {1, 288, 384, 1, 35, 35, 3, 3, 2, 1, Padding::kValid, false},  // inception3
      {1, 192, 192, 1, 17, 17, 1, 7, 1, 1, Padding::kSame, false},   // 1x7
  };
  for (const Case& t : cases) {
    ConvDesc d;
    d.n = t.n;
    d.c = t.c;
    d.k = t.k;
    d.groups = t.groups;
    d.bias = t.bias;
    d.h = Window(t.in_h, t.kh, t.stride, t.padding, t.dilation);
    d.w = Window(t.in_w, t.kw, t.stride, t.padding, t.dilation);
    ExpectRoundTrip(d);
  }
}

TEST(ConvDescTest, ShapesAndFlops) {
  absl::StatusOr<ConvDesc> d =
      ConvDesc::Parse("conv:mb2_g2_ic4oc6_ih5oh3kh3sh2ph1_iw5ow3kw3sw2pw1");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->input(), (Dims4{2, 4, 5, 5}));
  EXPECT_EQ(d->output(), (Dims4{2, 6, 3, 3}));
  EXPECT_EQ(d->weights_shape(), (Shape{6, 2, 3, 3}));
  EXPECT_DOUBLE_EQ(d->ForwardFlops(), 2.0 * 2 * 6 * 3 * 3 * 2 * 3 * 3);
}

TEST(ConvDescTest, Errors) {
  ExpectError<ConvDesc>("conv:mb64_ic256oc512_ih56oh27kh1sh2ph0_iw56ow28kw1sw2pw0", "oh");
  ExpectError<ConvDesc>("conv:mb64_ic256oc512_ih56oh28kh1sh2ph0_iw56ow29kw1sw2pw0", "ow");
  ExpectError<ConvDesc>("conv:mb1_g3_ic4oc6_ih5oh5kh1sh1ph0_iw5ow5kw1sw1pw0", "groups");
  ExpectError<ConvDesc>("conv:mb0_ic4oc6_ih5oh5kh1sh1ph0_iw5ow5kw1sw1pw0", "mb");
  ExpectError<ConvDesc>("conv:mb1_ic4oc6_ih3oh1kh5sh1ph0_iw5ow5kw1sw1pw0", "h");
  ExpectError<ConvDesc>("conv:mb1_ic4oc6_ih5oh5kh1sh1_iw5ow5kw1sw1pw0", "ph");
  ExpectError<ConvDesc>("conv:mb1_ic4oc6_ih5oh5kh1sh1ph0_iw5ow5kw1sw1pw0_bias_x", "offset");
  // The epilogue comes after the bias, never before.
  ExpectError<ConvDesc>("conv:mb1_ic4oc6_ih5oh5kh1sh1ph0_iw5ow5kw1sw1pw0_relu_bias", "offset");
  ExpectError<ConvDesc>("conv:mb1_ic4oc6_ih5oh5kh1sh1ph0_iw5ow5kw1sw1pw0_add_bias", "offset");
  ExpectError<ConvDesc>("conv:mb1_ic4oc6_ih5oh5kh1sh1ph0_iw5ow5kw1sw1pw0_relu_add", "offset");
  ExpectError<ConvDesc>("conv:mb1_ic4ocX_ih5oh5kh1sh1ph0_iw5ow5kw1sw1pw0", "oc");
  ExpectError<ConvDesc>("conv:mb99999999999999999999_ic4oc6_ih5oh5kh1sh1ph0_iw5ow5kw1sw1pw0", "mb");
  ExpectError<ConvDesc>("pool:mb1", "conv:");
  ExpectError<ConvDesc>("", "conv:");
}

TEST(PoolDescTest, CanonicalStringsAndRoundTrips) {
  ExpectCanonical<PoolDesc>("pool:max_mb32ic64_ih112oh56kh3sh2pt0pb1_iw112ow56kw3sw2pl0pr1");
  ExpectCanonical<PoolDesc>("pool:max_mb32ic64_ih112oh55kh3sh2ph0_iw112ow55kw3sw2pw0");
  ExpectCanonical<PoolDesc>("pool:avg_mb8ic2048_ih8oh1kh8sh1ph0_iw8ow1kw8sw1pw0");
  ExpectCanonical<PoolDesc>("pool:avgx_mb1ic3_ih7oh4kh3sh2ph1_iw6ow3kw3sw2pl0pr1");
  for (PoolAlgorithm a : {PoolAlgorithm::kMax, PoolAlgorithm::kAvg, PoolAlgorithm::kAvgExcludePad})
    for (Padding p : {Padding::kSame, Padding::kValid})
      for (int64_t in : {5, 8, 13})
        for (int64_t stride : {1, 2, 3}) {
          PoolDesc d;
          d.algorithm = a;
          d.n = 3;
          d.c = 5;
          d.h = Window(in, 3, stride, p);
          d.w = Window(in + 1, 2, stride, p);
          ExpectRoundTrip(d);
        }
}

TEST(PoolDescTest, Errors) {
  ExpectError<PoolDesc>("pool:min_mb1ic1_ih4oh2kh2sh2ph0_iw4ow2kw2sw2pw0", "algorithm");
  ExpectError<PoolDesc>("pool:max_mb1ic1_ih4oh3kh2sh2ph0_iw4ow2kw2sw2pw0", "oh");
  ExpectError<PoolDesc>("pool:max_mb1ic1_ih4oh7kh2sh1ph2_iw4ow2kw2sw2pw0", "padding");
  ExpectError<PoolDesc>("pool:max_mb1ic1_ih4oh1kh2sh2ph0dh2_iw4ow2kw2sw2pw0", "dilation");
  ExpectError<PoolDesc>("pool:max_mb1ic1_ih4oh2kh2sh2ph0", "_");
}

TEST(GemmDescTest, RoundTrips) {
  ExpectCanonical<GemmDesc>("gemm:m2048n2048k2048");
  ExpectCanonical<GemmDesc>("gemm:m1n7k3_ta");
  ExpectCanonical<GemmDesc>("gemm:m5n6k7_tb");
  ExpectCanonical<GemmDesc>("gemm:m5n6k7_ta_tb");
  ExpectError<GemmDesc>("gemm:m5n6", "k");
  ExpectError<GemmDesc>("gemm:m5n0k3", "n");
  ExpectError<GemmDesc>("gemm:m5n6k7_tb_ta", "offset");
  EXPECT_DOUBLE_EQ((GemmDesc{2, 3, 4}.Flops()), 48.0);
}

TEST(FcDescTest, RoundTrips) {
  ExpectCanonical<FcDesc>("fc:mb32ic2048oc1001");
  ExpectCanonical<FcDesc>("fc:mb1ic9216oc4096_nobias");
  ExpectRoundTrip(FcDesc{7, 13, 5, false});
  EXPECT_EQ(FcDesc({32, 2048, 1001}).AsGemm(), (GemmDesc{32, 1001, 2048, false, true}));
  ExpectError<FcDesc>("fc:mb32ic2048", "oc");
  ExpectError<FcDesc>("fc:mb32ic0oc3", "ic");
  ExpectError<FcDesc>("fc:mb32ic2oc3_bias", "offset");
}

TEST(BatchNormDescTest, RoundTripsWithShortestReals) {
  ExpectCanonical<BatchNormDesc>("bn:mb32ic64ih56iw56_eps0.001mom0.997");
  ExpectCanonical<BatchNormDesc>("bn:mb1ic3ih5iw7_eps1e-05mom0.9_noscale");
  for (double eps : {1e-3, 1e-5, 1.0 / 3.0, 0.1 + 0.2, 2.5e-12, 123456.0})
    for (double mom : {0.0, 0.9, 0.997, 1.0, 0.1 + 0.7}) {
      BatchNormDesc d;
      d.dims = {3, 5, 7, 1};
      d.epsilon = eps;
      d.momentum = mom;
      d.scale = eps > 0.01;
      ExpectRoundTrip(d);
    }
  BatchNormDesc d;
  d.epsilon = 1e-5;
  EXPECT_THAT(d.ToString(), HasSubstr("eps1e-05mom0.997"));
  ExpectError<BatchNormDesc>("bn:mb1ic3ih5iw7_eps0mom0.9", "eps");
  ExpectError<BatchNormDesc>("bn:mb1ic3ih5iw7_eps0.001mom1.5", "mom");
  ExpectError<BatchNormDesc>("bn:mb1ic3ih5iw7_eps0.001mom", "mom");
  ExpectError<BatchNormDesc>("bn:mb1ic3ih5iw7_eps.mom0.9", "eps");
  ExpectError<BatchNormDesc>("bn:mb1ic3ih5iw7_eps-1mom0.9", "eps");
  ExpectError<BatchNormDesc>("bn:mb1ic3ih5_eps0.001mom0.9", "iw");
}

TEST(SimpleDescTest, RoundTrips) {
  ExpectCanonical<ReluDesc>("relu:mb32ic64ih56iw56");
  ExpectCanonical<AddDesc>("add:mb32ic256ih56iw56");
  ExpectCanonical<SoftmaxXentDesc>("softmax_xent:mb32ic1001");
  ExpectCanonical<LrnDesc>("lrn:mb32ic64ih56iw56_r5k1a0.0001b0.75");
  ExpectCanonical<LrnDesc>("lrn:mb1ic3ih5iw5_r2k2a2e-05b0.5");
  ExpectCanonical<DropoutDesc>("dropout:mb32ic4096ih1iw1_p0.5");
  ExpectCanonical<DropoutDesc>("dropout:mb3ic5ih7iw9_p0");
  ExpectRoundTrip(ReluDesc{{3, 5, 7, 9}});
  ExpectRoundTrip(AddDesc{{1, 1, 1, 1}});
  ExpectRoundTrip(SoftmaxXentDesc{3, 1000});
  ExpectRoundTrip(LrnDesc{{2, 7, 3, 3}, 0, 1.5, 1.0 / 7.0, 0.75});
  ExpectRoundTrip(DropoutDesc{{2, 7, 3, 3}, 0.1 + 0.2});
  ExpectError<ReluDesc>("relu:mb32ic64ih56", "iw");
  ExpectError<ReluDesc>("relu:mb32ic0ih56iw56", "positive");
  ExpectError<AddDesc>("add:mb1ic1ih1iw1x", "offset");
  ExpectError<SoftmaxXentDesc>("softmax_xent:mb32", "ic");
  ExpectError<LrnDesc>("lrn:mb1ic3ih5iw5_r2k0a2e-05b0.5", "'k'");
  ExpectError<LrnDesc>("lrn:mb1ic3ih5iw5_k1a2e-05b0.5", "'r'");
  ExpectError<DropoutDesc>("dropout:mb32ic4096ih1iw1_p1", "'p'");
  ExpectError<DropoutDesc>("dropout:mb32ic4096ih1iw1_p1e", "offset");
}

TEST(ChannelPadDescTest, RoundTrips) {
  ExpectCanonical<ChannelPadDesc>("chpad:mb128ic16ih16iw16_b8a8");
  ChannelPadDesc d;
  d.dims = {2, 3, 4, 5};
  d.before = 1;
  EXPECT_EQ(d.output(), (Dims4{2, 4, 4, 5}));
  EXPECT_EQ(d.ToString(), "chpad:mb2ic3ih4iw5_b1a0");
  d.after = -1;
  EXPECT_FALSE(d.Validate().ok());
  ExpectError<ChannelPadDesc>("chpad:mb2ic3ih4iw5", "_");
}

TEST(ConcatDescTest, RoundTrips) {
  ExpectCanonical<ConcatDesc>("concat:mb32ih28iw28_ic64:128:32:32");
  ExpectCanonical<ConcatDesc>("concat:mb1ih3iw5_ic7");
  ConcatDesc d{3, 5, 7, {1, 2, 3}};
  ExpectRoundTrip(d);
  EXPECT_EQ(d.output(), (Dims4{3, 6, 5, 7}));
  ExpectError<ConcatDesc>("concat:mb32ih28iw28_ic", "at least one input");
  ExpectError<ConcatDesc>("concat:mb32ih28iw28", "_");
  ExpectError<ConcatDesc>("concat:mb32ih28iw28_ic4:", "offset");
  ExpectError<ConcatDesc>("concat:mb32ih28iw28_ic4:0", "input 1");
  EXPECT_FALSE((ConcatDesc{1, 1, 1, {}}).Validate().ok());
}

TEST(SgdDescTest, RoundTrips) {
  ExpectCanonical<SgdDesc>("sgd:n25557032_lr0.1m0.9wd0.0001");
  ExpectCanonical<SgdDesc>("sgd:n1_lr0.005m0wd0");
  ExpectRoundTrip(SgdDesc{1000, 0.1 * 3, 0.0, 4e-5});
  ExpectError<SgdDesc>("sgd:n25557032_lr0.1m0.9", "wd");
  ExpectError<SgdDesc>("sgd:n0_lr0.1m0.9wd0", "'n'");
}

TEST(OpDescTest, DispatchesOnThePrefix) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"conv:mb1_ic1oc1_ih1oh1kh1sh1ph0_iw1ow1kw1sw1pw0", "conv"},
      {"pool:avg_mb1ic1_ih2oh1kh2sh2ph0_iw2ow1kw2sw2pw0", "pool"},
      {"fc:mb1ic1oc1", "fc"},
      {"bn:mb1ic1ih1iw1_eps0.001mom0.997", "bn"},
      {"relu:mb1ic1ih1iw1", "relu"},
      {"lrn:mb1ic1ih1iw1_r5k1a0.0001b0.75", "lrn"},
      {"dropout:mb1ic1ih1iw1_p0.5", "dropout"},
      {"concat:mb1ih1iw1_ic1:2", "concat"},
      {"add:mb1ic1ih1iw1", "add"},
      {"chpad:mb1ic1ih1iw1_b0a1", "chpad"},
      {"softmax_xent:mb1ic1", "softmax_xent"},
      {"gemm:m1n1k1", "gemm"},
  };
  for (const auto& [text, kind] : cases) {
    absl::StatusOr<OpDesc> d = ParseOpDesc(text);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(OpKind(*d), kind);
    EXPECT_EQ(OpDescToString(*d), text);
  }
  for (const char* bad : {"", "conv", "gemm:m1n1", "sgd:n1_lr0.1m0.9wd0", "nope:mb1"}) {
    absl::StatusOr<OpDesc> d = ParseOpDesc(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(d.status().message()), HasSubstr(std::string("'") + bad + "'"));
  }
}

}  // namespace
}  // namespace cnnbench
