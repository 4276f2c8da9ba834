// Global average pooling (the spatial mean) on oneDNN against the
// reference: the backend's own loops over the input's layout as given,
// plain, blocked by 16 (a convolution's output) and by 8 (a grouped
// convolution's at 8 channels per group, RegNet's, where oneDNN's bf16
// pooling is its reference kernel), with padded channels, fp32 and bf16
// where the CPU has it, forward and backward; the output plain (N,C,1,1).
// A pooling window short of the plane stays oneDNN's.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::CompareOptions;
using onednn_test::CompareWithReference;
using onednn_test::OneDnn;

// The output spec of a oneDNN grouped 3x3 convolution with 8 channels per
// group to `k` channels at (n, hw, hw).
TensorSpec GroupedConvOutputSpec(int64_t n, int64_t k, int64_t hw, DType dtype) {
  const std::string text = absl::StrCat("conv:mb", n, "_g", k / 8, "_ic", k, "oc", k, "_ih", hw,
                                        "oh", hw, "kh3sh1ph1_iw", hw, "ow", hw, "kw3sw1pw1");
  auto conv = ParseOpDesc(text);
  EXPECT_TRUE(conv.ok()) << text << ": " << conv.status();
  auto kernel = OneDnn()->Create(*conv, KernelOptions::ForDType(dtype), {});
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  return kernel.ok() ? (*kernel)->signature().output : TensorSpec();
}

PoolDesc GlobalMean(int64_t n, int64_t c, int64_t hw) {
  PoolDesc d;
  d.algorithm = PoolAlgorithm::kAvg;
  d.n = n;
  d.c = c;
  d.h = MakeWindowDim(hw, hw, 1, Padding::kValid).value();
  d.w = d.h;
  return d;
}

TEST(OneDnnGlobalPoolTest, MatchesTheReferenceInEveryLayout) {
  ASSERT_NE(OneDnn(), nullptr);
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    const KernelOptions options = KernelOptions::ForDType(dtype);
    if (!OneDnn()->Supports(GlobalMean(2, 16, 4), options).ok()) continue;  // no bf16 here
    for (int64_t channels : {16, 24, 40}) {
      const PoolDesc desc = GlobalMean(2, channels, 5);
      const TensorSpec blocked = onednn_test::ConvOutputSpec(2, channels, 5, dtype);
      const TensorSpec grouped = GroupedConvOutputSpec(2, channels, 5, dtype);
      for (const std::vector<TensorSpec>& given :
           {std::vector<TensorSpec>{}, std::vector<TensorSpec>{blocked},
            std::vector<TensorSpec>{grouped}}) {
        const std::string what = absl::StrCat(desc.ToString(), " ", DTypeName(dtype),
                                              given.empty() ? " plain" : given[0].DebugString());
        auto kernel = OneDnn()->Create(desc, options, given);
        ASSERT_TRUE(kernel.ok()) << what << ": " << kernel.status();
        EXPECT_EQ((*kernel)->implementation(), "cnnbench:global_avg_pool") << what;
        const KernelSignature& sig = (*kernel)->signature();
        if (!given.empty()) {
          EXPECT_TRUE(OneDnn()->SameLayout(sig.inputs[0], given[0])) << what;
        }
        EXPECT_TRUE(sig.output.is_plain()) << what;
        CompareOptions o;
        o.dtype = dtype;
        o.onednn_inputs = given;
        if (dtype == DType::kBF16) {  // the mean and dx rounded to bf16 once
          o.forward_rtol = o.backward_rtol = 1.0 / 128;
          o.forward_atol = o.backward_atol = 1e-2;
        } else {
          o.forward_rtol = o.backward_rtol = 1e-6;
          o.forward_atol = o.backward_atol = 1e-6;
        }
        const absl::Status status = CompareWithReference(desc, o);
        EXPECT_TRUE(status.ok()) << what << ": " << status;
      }
    }
  }
  // A window short of the plane is oneDNN's pooling.
  PoolDesc partial = GlobalMean(2, 16, 5);
  partial.h = MakeWindowDim(5, 3, 2, Padding::kValid).value();
  auto kernel = OneDnn()->Create(partial, KernelOptions::ForDType(DType::kF32), {});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_NE((*kernel)->implementation(), "cnnbench:global_avg_pool");
}

}  // namespace
}  // namespace cnnbench
