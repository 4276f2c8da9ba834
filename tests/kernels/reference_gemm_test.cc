// Reference GEMM as an op: exact small products in every transpose
// combination, and both operand gradients against finite differences.
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
using kernel_test::FromDoubles;
using kernel_test::ToDoubles;

TEST(ReferenceGemmTest, ProductInEveryTransposeCombination) {
  // op(A) = [[1,2,3],[4,5,6]] (2x3), op(B) = [[1,0],[0,1],[2,-1]] (3x2).
  const std::vector<double> a = {1, 2, 3, 4, 5, 6}, a_t = {1, 4, 2, 5, 3, 6};
  const std::vector<double> b = {1, 0, 0, 1, 2, -1}, b_t = {1, 0, 2, 0, 1, -1};
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const GemmDesc desc{2, 2, 3, ta, tb};
      SCOPED_TRACE(desc.ToString());
      auto k = CreateKernelUnderTest(*backend, desc, DType::kF64);
      ASSERT_TRUE(k.ok()) << k.status();
      const KernelSignature& sig = k->kernel->signature();
      ASSERT_TRUE(FromDoubles(sig.inputs[0], k->buffers.x[0].data(), ta ? a_t : a).ok());
      ASSERT_TRUE(FromDoubles(sig.inputs[1], k->buffers.x[1].data(), tb ? b_t : b).ok());
      ASSERT_TRUE(k->kernel->Forward(k->buffers.Args()).ok());
      EXPECT_EQ(ToDoubles(sig.output, k->buffers.y.data()), (std::vector<double>{7, -1, 16, -1}));
    }
}

TEST(ReferenceGemmTest, GradientsMatchFiniteDifferences) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  for (const char* text :
       {"gemm:m3n4k5", "gemm:m3n4k5_ta", "gemm:m2n5k3_tb", "gemm:m4n1k6_ta_tb"}) {
    SCOPED_TRACE(text);
    auto desc = GemmDesc::Parse(text);
    ASSERT_TRUE(desc.ok());
    auto k = CreateKernelUnderTest(*backend, *desc, DType::kF64);
    ASSERT_TRUE(k.ok()) << k.status();
    FillDefaults(k->buffers, 3);
    absl::Status status = CheckGradients(*k->kernel, k->buffers);
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(ReferenceGemmTest, WrongOperandShapeIsAClearError) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  auto kernel = backend->Create(
      GemmDesc{2, 3, 4}, DType::kF32,
      {TensorSpec::Plain(DType::kF32, Shape{4, 2}), TensorSpec::Plain(DType::kF32, Shape{4, 3})});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.status().message().find("gemm:m2n3k4"), absl::string_view::npos)
      << kernel.status();
}

}  // namespace
}  // namespace cnnbench
