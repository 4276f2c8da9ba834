// oneDNN's matmul as the GEMM op against the reference: every transpose
// combination, forward and both operand gradients; integers, exact in fp32;
// bf16 (where the CPU has it) within bf16's rounding.
#include <string>

#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::CompareOptions;
using onednn_test::CompareWithReference;
using onednn_test::OneDnn;

TEST(OneDnnGemmTest, MatchesTheReferenceInEveryTransposeCombination) {
  ASSERT_NE(OneDnn(), nullptr);
  for (const char* text : {"gemm:m7n5k9", "gemm:m7n5k9_ta", "gemm:m7n5k9_tb", "gemm:m7n5k9_ta_tb",
                           "gemm:m1n33k17", "gemm:m64n48k80_tb"}) {
    SCOPED_TRACE(text);
    absl::StatusOr<OpDesc> desc = ParseOpDesc(text);
    ASSERT_TRUE(desc.ok()) << desc.status();
    absl::Status status = CompareWithReference(*desc);
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(OneDnnGemmTest, Bf16WithinRounding) {
  auto probe = OneDnn()->Create(GemmDesc{2, 2, 2}, DType::kBF16, {});
  if (!probe.ok()) GTEST_SKIP() << probe.status().message();
  CompareOptions options;
  options.dtype = DType::kBF16;
  options.integers = false;
  options.low = -1;
  options.high = 1;
  options.forward_rtol = options.backward_rtol = 2e-2;
  options.forward_atol = options.backward_atol = 5e-2;
  absl::Status status = CompareWithReference(*ParseOpDesc("gemm:m32n24k40_ta"), options);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(OneDnnGemmTest, TheImplementationIsNamed) {
  auto kernel = OneDnn()->Create(GemmDesc{64, 64, 64}, DType::kF32, {});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_FALSE((*kernel)->implementation().empty());
  EXPECT_NE((*kernel)->implementation(), "reference");
}

}  // namespace
}  // namespace cnnbench
