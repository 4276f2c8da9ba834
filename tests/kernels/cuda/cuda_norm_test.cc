// Layer norm over channels on the cuda backend against the reference: in
// every precision (fp32 NCHW, fp16/bf16 NHWC), with the channel counts of a
// blocked layout's padding (3, 20) and a whole block (16), forward and both
// backward passes; and an inference forward. The per-position arithmetic is
// kernels/layer_norm.h's, checked on the host by onednn_layer_norm_test.
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/cuda/cuda_test_util.h"

namespace cnnbench {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (cuda_test::Cuda() == nullptr) GTEST_SKIP() << cuda_test::NoGpuReason()

TEST(CudaNormTest, LayerNormMatchesTheReferenceInEveryPrecision) {
  SKIP_WITHOUT_GPU();
  for (int64_t channels : {3, 16, 20})
    for (Precision p :
         {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16})
      for (bool training : {true, false}) {
        const LayerNormDesc desc{{2, channels, 3, 5}, 1e-6};
        cuda_test::CompareOptions o;
        o.precision = p;
        o.training = training;
        o.backward = training;
        o.integers = false;  // reals: no position of equal values
        o.low = -2;
        o.high = 2;
        const double tol = p == Precision::kBf16 ? 2e-2 : p == Precision::kFp16 ? 3e-3 : 2e-5;
        o.forward_rtol = o.backward_rtol = tol;
        o.forward_atol = o.backward_atol = tol;
        const absl::Status status = cuda_test::CompareWithReference(desc, o);
        EXPECT_TRUE(status.ok()) << desc.ToString() << " " << PrecisionName(p)
                                 << (training ? "" : " inference") << ": " << status;
      }
}

}  // namespace
}  // namespace cnnbench
