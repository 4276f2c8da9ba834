// The channel multiply (squeeze-and-excitation's scale) on oneDNN against
// the reference: x0 plain and channel-blocked as a convolution gives it
// (padded channels too), x1 (N,C,1,1) and an fc's (N,C), fp32 on integers
// (exact) and bf16 where the CPU has it; y keeps x0's layout (no reorder
// on either side). And the scale index every backend shares
// (kernels/channel_mul.h) in both cuda layouts.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/channel_mul.h"
#include "kernels/desc.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::CompareOptions;
using onednn_test::CompareWithReference;
using onednn_test::OneDnn;

TEST(ChannelMulTest, ScaleIndexInBothLayouts) {
  const int64_t n = 2, c = 3, h = 2, w = 5, plane = h * w;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t iy = 0; iy < h; ++iy)
        for (int64_t ix = 0; ix < w; ++ix) {
          const int64_t nchw = ((in * c + ic) * h + iy) * w + ix;
          const int64_t nhwc = ((in * h + iy) * w + ix) * c + ic;
          EXPECT_EQ(ChannelMulScaleIndex(nchw, c, plane, false), in * c + ic) << nchw;
          EXPECT_EQ(ChannelMulScaleIndex(nhwc, c, plane, true), in * c + ic) << nhwc;
        }
}

TEST(OneDnnChannelMulTest, MatchesTheReferenceInEveryLayout) {
  ASSERT_NE(OneDnn(), nullptr);
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    KernelOptions options = KernelOptions::ForDType(dtype);
    const ChannelMulDesc probe{{2, 16, 4, 4}};
    if (!OneDnn()->Supports(probe, options).ok()) continue;  // no bf16 on this CPU
    for (int64_t channels : {16, 20, 3}) {
      const ChannelMulDesc desc{{2, channels, 4, 4}};
      const TensorSpec blocked = onednn_test::ConvOutputSpec(2, channels, 4, dtype);
      const TensorSpec fc_scales = TensorSpec::Plain(dtype, Shape{2, channels});
      const TensorSpec conv_scales = TensorSpec::Plain(dtype, Shape{2, channels, 1, 1});
      for (const std::vector<TensorSpec>& given :
           {std::vector<TensorSpec>{}, std::vector<TensorSpec>{blocked, fc_scales},
            std::vector<TensorSpec>{blocked, conv_scales}}) {
        const std::string what = absl::StrCat(
            desc.ToString(), " ", DTypeName(dtype),
            given.empty()
                ? " plain"
                : absl::StrCat(" ", given[0].DebugString(), ", ", given[1].DebugString()));
        auto kernel = OneDnn()->Create(desc, options, given);
        ASSERT_TRUE(kernel.ok()) << what << ": " << kernel.status();
        const KernelSignature& sig = (*kernel)->signature();
        EXPECT_EQ((*kernel)->implementation(), "cnnbench:chmul");
        if (!given.empty()) {
          EXPECT_TRUE(OneDnn()->SameLayout(sig.inputs[0], given[0])) << what;
          EXPECT_TRUE(OneDnn()->SameLayout(sig.inputs[1], given[1])) << what;
        }
        EXPECT_TRUE(OneDnn()->SameLayout(sig.output, sig.inputs[0])) << what;
        CompareOptions o;
        o.dtype = dtype;
        o.onednn_inputs = given;
        o.low = -3;
        o.high = 3;
        if (dtype == DType::kBF16) {  // products exact; the sums over (H,W) rounded once
          o.forward_rtol = o.backward_rtol = 1.0 / 128;
          o.forward_atol = o.backward_atol = 1e-2;
        }
        const absl::Status status = CompareWithReference(desc, o);
        EXPECT_TRUE(status.ok()) << what << ": " << status;
      }
    }
  }
}

}  // namespace
}  // namespace cnnbench
