// Reference fully connected layer: exact forward with and without bias, a
// 4-D input read as (N, C*H*W), and backward against finite differences.
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
using kernel_test::FromDoubles;
using kernel_test::KernelUnderTest;
using kernel_test::ToDoubles;

class FcForwardTest : public ::testing::TestWithParam<DType> {};

TEST_P(FcForwardTest, WithBias) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  absl::StatusOr<KernelUnderTest> k =
      CreateKernelUnderTest(*backend, FcDesc{2, 3, 2, true}, GetParam());
  ASSERT_TRUE(k.ok()) << k.status();
  const KernelSignature& sig = k->kernel->signature();
  ASSERT_TRUE(FromDoubles(sig.inputs[0], k->buffers.x[0].data(), {1, 2, 3, 4, 5, 6}).ok());
  ASSERT_TRUE(FromDoubles(sig.params[0], k->buffers.params[0].data(), {1, 0, -1, 2, 1, 0}).ok());
  ASSERT_TRUE(FromDoubles(sig.params[1], k->buffers.params[1].data(), {1, -1}).ok());
  ASSERT_TRUE(k->kernel->Forward(k->buffers.Args()).ok());
  EXPECT_EQ(ToDoubles(sig.output, k->buffers.y.data()), (std::vector<double>{-1, 3, -1, 12}));
}

TEST_P(FcForwardTest, FourDimensionalInputWithoutBias) {
  // x (2,2,1,2) is read as (2,4).
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  const std::vector<TensorSpec> inputs = {TensorSpec::Plain(GetParam(), Shape{2, 2, 1, 2})};
  absl::StatusOr<KernelUnderTest> k =
      CreateKernelUnderTest(*backend, FcDesc{2, 4, 1, false}, GetParam(), inputs);
  ASSERT_TRUE(k.ok()) << k.status();
  const KernelSignature& sig = k->kernel->signature();
  EXPECT_EQ(sig.inputs[0].shape, (Shape{2, 2, 1, 2}));  // kept as the producer gives it
  ASSERT_EQ(sig.params.size(), 1u);
  ASSERT_TRUE(FromDoubles(sig.inputs[0], k->buffers.x[0].data(), {1, 2, 3, 4, 5, 6, 7, 8}).ok());
  ASSERT_TRUE(FromDoubles(sig.params[0], k->buffers.params[0].data(), {1, 10, 100, 1000}).ok());
  ASSERT_TRUE(k->kernel->Forward(k->buffers.Args()).ok());
  EXPECT_EQ(ToDoubles(sig.output, k->buffers.y.data()), (std::vector<double>{4321, 8765}));
}

INSTANTIATE_TEST_SUITE_P(Types, FcForwardTest, ::testing::Values(DType::kF32, DType::kF64));

TEST(FcTest, RejectsAnInputOfTheWrongSize) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  absl::StatusOr<std::unique_ptr<Kernel>> k = backend->Create(
      FcDesc{2, 4, 1, false}, DType::kF32, {TensorSpec::Plain(DType::kF32, Shape{2, 3, 1, 1})});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(k.status().message().find("fc:mb2ic4oc1_nobias"), absl::string_view::npos);
}

struct FcCase {
  FcDesc desc;
  Shape input;  // empty: (N, IC)
};

class FcGradientTest : public ::testing::TestWithParam<FcCase> {};

TEST_P(FcGradientTest, MatchesFiniteDifferences) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  std::vector<TensorSpec> inputs;
  if (GetParam().input.rank() > 0)
    inputs.push_back(TensorSpec::Plain(DType::kF64, GetParam().input));
  absl::StatusOr<KernelUnderTest> k =
      CreateKernelUnderTest(*backend, GetParam().desc, DType::kF64, inputs);
  ASSERT_TRUE(k.ok()) << k.status();
  FillDefaults(k->buffers, 9);
  absl::Status status = CheckGradients(*k->kernel, k->buffers);
  EXPECT_TRUE(status.ok()) << GetParam().desc.ToString() << ": " << status;
}

INSTANTIATE_TEST_SUITE_P(Shapes, FcGradientTest,
                         ::testing::Values(FcCase{{3, 5, 4, true}, {}},
                                           FcCase{{1, 7, 3, false}, {}},
                                           FcCase{{2, 12, 5, true}, {2, 3, 2, 2}},
                                           FcCase{{5, 1, 1, true}, {}}));

}  // namespace
}  // namespace cnnbench
