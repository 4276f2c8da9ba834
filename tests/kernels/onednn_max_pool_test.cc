// The oneDNN backend's own max pooling (kernels/onednn/max_pool.h) against
// the reference backend, on both channel blocks (8 and 16, whatever layout
// oneDNN would pick on this CPU), with integer inputs (many ties: the first
// maximum in scan order must win, as in the reference) and real ones, odd
// channel counts (padded lanes), SAME/VALID/explicit padding, strides 1 and
// 2; and the backend choosing it for a blocked input from a convolution.
#include <cmath>
#include <cstring>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "kernels/onednn/max_pool.h"
#include "tests/kernels/gradient_check.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using kernel_test::CompareTensors;
using kernel_test::CreateKernelUnderTest;
using kernel_test::FillIntegers;
using kernel_test::FillUniform;
using kernel_test::KernelUnderTest;
using kernel_test::ToDoubles;
using onednn::BlockedMaxPool;

// Plain (N, C, H, W) <-> (N, ceil(C/B), H, W, B), padded lanes `pad`.
std::vector<float> Pack(const std::vector<double>& plain, int64_t n, int64_t c, int64_t h,
                        int64_t w, int block, float pad) {
  const int64_t blocks = (c + block - 1) / block;
  std::vector<float> out(n * blocks * h * w * block, pad);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < h * w; ++p)
        out[((i * blocks + ch / block) * h * w + p) * block + ch % block] =
            static_cast<float>(plain[(i * c + ch) * h * w + p]);
  return out;
}
std::vector<double> Unpack(const std::vector<float>& blocked, int64_t n, int64_t c, int64_t h,
                           int64_t w, int block) {
  const int64_t blocks = (c + block - 1) / block;
  std::vector<double> out(n * c * h * w);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < h * w; ++p)
        out[(i * c + ch) * h * w + p] =
            blocked[((i * blocks + ch / block) * h * w + p) * block + ch % block];
  return out;
}

struct Case {
  std::string desc;
  bool integers;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.desc << (c.integers ? " (integers)" : " (reals)");
}

class OwnMaxPoolTest : public ::testing::TestWithParam<Case> {};

TEST_P(OwnMaxPoolTest, MatchesReferenceOnBothBlockSizes) {
  absl::StatusOr<PoolDesc> desc = PoolDesc::Parse(GetParam().desc);
  ASSERT_TRUE(desc.ok()) << desc.status();
  const Shape in = desc->input().shape(), out = desc->output().shape();
  const int64_t n = in[0], c = in[1];
  absl::StatusOr<KernelUnderTest> ref =
      CreateKernelUnderTest(*onednn_test::Reference(), *desc, DType::kF32);
  ASSERT_TRUE(ref.ok()) << ref.status();
  kernel_test::KernelBuffers& rb = ref->buffers;
  const TensorSpec& xs = rb.signature.inputs[0];
  const TensorSpec& ys = rb.signature.output;
  if (GetParam().integers) {
    FillIntegers(xs, rb.x[0].data(), 7, -3, 3);  // post-ReLU-like ties included
    FillIntegers(ys, rb.dy.data(), 8, -4, 4);
  } else {
    FillUniform(xs, rb.x[0].data(), 7, -1, 1);
    FillUniform(ys, rb.dy.data(), 8, -1, 1);
  }
  ASSERT_TRUE(ref->kernel->Forward(rb.Args()).ok());
  ASSERT_TRUE(ref->kernel->BackwardData(rb.Args()).ok());
  const std::vector<double> x = ToDoubles(xs, rb.x[0].data());
  const std::vector<double> dy = ToDoubles(ys, rb.dy.data());
  const std::vector<double> y_ref = ToDoubles(ys, rb.y.data());
  const std::vector<double> dx_ref = ToDoubles(xs, rb.dx[0].data());

  for (int block : {8, 16}) {
    SCOPED_TRACE(absl::StrCat("block ", block));
    BlockedMaxPool p;
    p.batch = n;
    p.block = block;
    p.channel_blocks = (c + block - 1) / block;
    p.in_h = static_cast<int>(in[2]);
    p.in_w = static_cast<int>(in[3]);
    p.out_h = static_cast<int>(out[2]);
    p.out_w = static_cast<int>(out[3]);
    p.kernel_h = static_cast<int>(desc->h.kernel);
    p.kernel_w = static_cast<int>(desc->w.kernel);
    p.stride_h = static_cast<int>(desc->h.stride);
    p.stride_w = static_cast<int>(desc->w.stride);
    p.pad_top = static_cast<int>(desc->h.pad_before);
    p.pad_left = static_cast<int>(desc->w.pad_before);
    ASSERT_TRUE(p.Valid());
    const std::vector<float> xb = Pack(x, n, c, in[2], in[3], block, 0.0f);
    // Outputs poisoned, so an unwritten element shows as NaN.
    std::vector<float> yb(p.output_elements(), NAN), dxb(xb.size(), NAN);
    std::vector<uint8_t> argmax(p.output_elements(), 0xEE);
    onednn::MaxPoolForward(p, xb.data(), yb.data(), argmax.data());
    EXPECT_TRUE(CompareTensors("y", Unpack(yb, n, c, out[2], out[3], block), y_ref, 0, 0).ok())
        << CompareTensors("y", Unpack(yb, n, c, out[2], out[3], block), y_ref, 0, 0);
    const std::vector<float> dyb = Pack(dy, n, c, out[2], out[3], block, 0.0f);
    onednn::MaxPoolBackward(p, dyb.data(), argmax.data(), dxb.data());
    const double tol = GetParam().integers ? 0 : 1e-6;  // overlapping windows sum in float
    const absl::Status dx_ok =
        CompareTensors("dx", Unpack(dxb, n, c, in[2], in[3], block), dx_ref, tol, tol);
    EXPECT_TRUE(dx_ok.ok()) << dx_ok;
    // Padded lanes: zero in, zero out.
    for (size_t i = 0; i < dxb.size(); ++i) {
      if ((i % block) + (i / (block * in[2] * in[3]) % p.channel_blocks) * block >=
          static_cast<size_t>(c)) {
        ASSERT_EQ(dxb[i], 0.0f) << "padded lane " << i;
        ASSERT_FALSE(std::isnan(dxb[i]));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, OwnMaxPoolTest,
    ::testing::Values(
        Case{"pool:max_mb2ic16_ih9oh9kh3sh1ph1_iw9ow9kw3sw1pw1", true},         // 3x3/1 SAME
        Case{"pool:max_mb2ic20_ih9oh5kh3sh2ph1_iw9ow5kw3sw2pw1", true},         // odd C, 3x3/2
        Case{"pool:max_mb2ic5_ih11oh5kh3sh2ph0_iw8ow3kw3sw2pw0", true},         // VALID, C < block
        Case{"pool:max_mb1ic16_ih7oh4kh2sh2pt0pb1_iw7ow4kw2sw2pl0pr1", true},   // 2x2/2 on odd
        Case{"pool:max_mb2ic24_ih8oh4kh3sh2pt0pb1_iw8ow4kw3sw2pl0pr1", false},  // TF SAME
        Case{"pool:max_mb2ic16_ih6oh6kh5sh1pt2pb2_iw5ow5kw5sw1pl2pr2", false},  // window > half
        Case{"pool:max_mb1ic32_ih3oh1kh3sh1ph0_iw3ow1kw3sw1pw0", true},         // global
        Case{"pool:max_mb2ic20_ih9oh8kh2sh1ph0_iw8ow4kw3sw2pl0pr1", true}),     // per-axis
    [](const ::testing::TestParamInfo<Case>& info) {
      return absl::StrCat("case", info.index, info.param.integers ? "_integers" : "_reals");
    });

TEST(OwnMaxPoolTest, WindowsThatMissTheInputAreNotValid) {
  BlockedMaxPool p;
  p.batch = 1;
  p.channel_blocks = 1;
  p.in_h = p.in_w = 4;
  p.out_h = p.out_w = 2;
  p.kernel_h = p.kernel_w = 2;
  p.stride_h = p.stride_w = 2;
  EXPECT_TRUE(p.Valid());
  p.pad_top = 2;  // the first row's window lies wholly in the padding
  EXPECT_FALSE(p.Valid());
  p.pad_top = 0;
  p.out_w = 3;  // the last column's window starts past the input
  EXPECT_FALSE(p.Valid());
  p.out_w = 2;
  p.kernel_h = 16;
  p.kernel_w = 16;  // 256 positions do not fit the argmax byte
  EXPECT_FALSE(p.Valid());
  p.kernel_h = p.kernel_w = 2;
  p.block = 4;
  EXPECT_FALSE(p.Valid());
}

// A blocked input from a convolution: the backend runs its own loop for
// training (named in implementation()) and matches the reference; a plain
// input keeps oneDNN's primitive. The second pair is rectangular, with
// different kernels, strides and pads per axis, so a field taken from the
// wrong axis or side in the backend's translation of the descriptor fails.
TEST(OwnMaxPoolTest, TheBackendChoosesItForABlockedInput) {
  ASSERT_NE(onednn_test::OneDnn(), nullptr);
  const std::pair<const char*, const char*> pairs[] = {
      {"conv:mb2_ic8oc24_ih9oh9kh3sh1ph1_iw9ow9kw3sw1pw1",
       "pool:max_mb2ic24_ih9oh9kh3sh1ph1_iw9ow9kw3sw1pw1"},
      {"conv:mb2_ic8oc20_ih9oh9kh3sh1ph1_iw8ow8kw3sw1pw1",
       "pool:max_mb2ic20_ih9oh8kh2sh1ph0_iw8ow4kw3sw2pl0pr1"},
  };
  for (const auto& [conv_string, pool] : pairs) {
    SCOPED_TRACE(pool);
    absl::StatusOr<ConvDesc> conv = ConvDesc::Parse(conv_string);
    ASSERT_TRUE(conv.ok()) << conv.status();
    absl::StatusOr<std::unique_ptr<Kernel>> producer =
        onednn_test::OneDnn()->Create(*conv, DType::kF32, {});
    ASSERT_TRUE(producer.ok()) << producer.status();
    const TensorSpec blocked = (*producer)->signature().output;
    ASSERT_FALSE(blocked.is_plain()) << blocked.DebugString();
    absl::StatusOr<PoolDesc> desc = PoolDesc::Parse(pool);
    ASSERT_TRUE(desc.ok()) << desc.status();
    absl::StatusOr<std::unique_ptr<Kernel>> own =
        onednn_test::OneDnn()->Create(*desc, DType::kF32, {blocked});
    ASSERT_TRUE(own.ok()) << own.status();
    EXPECT_TRUE(absl::StartsWith((*own)->implementation(), "cnnbench:max_pool:nChw"))
        << (*own)->implementation();
    absl::StatusOr<std::unique_ptr<Kernel>> plain =
        onednn_test::OneDnn()->Create(*desc, DType::kF32, {});
    ASSERT_TRUE(plain.ok()) << plain.status();
    EXPECT_FALSE(absl::StartsWith((*plain)->implementation(), "cnnbench:"))
        << (*plain)->implementation();

    absl::StatusOr<OpDesc> op = ParseOpDesc(pool);
    ASSERT_TRUE(op.ok()) << op.status();
    for (bool integers : {true, false}) {
      onednn_test::CompareOptions o;
      o.onednn_inputs = {blocked};
      o.integers = integers;  // integers: ties everywhere
      o.low = integers ? -3 : -1;
      o.high = integers ? 3 : 1;
      o.backward_rtol = o.backward_atol = integers ? 0 : 1e-6;
      absl::Status status = onednn_test::CompareWithReference(*op, o);
      EXPECT_TRUE(status.ok()) << status;
      // Inference keeps oneDNN's primitive on the same layout.
      o.training = false;
      o.backward = false;
      status = onednn_test::CompareWithReference(*op, o);
      EXPECT_TRUE(status.ok()) << status;
    }
  }
}

}  // namespace
}  // namespace cnnbench
