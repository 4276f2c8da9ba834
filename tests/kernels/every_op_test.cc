// Every alternative of OpDesc, through its traits' sample (OpSamples()):
// the reference kernel's backward passes against central finite
// differences, and the oneDNN kernel against the reference, forward and
// backward. An op added to OpDesc is covered here without a line of this
// file (its kSample is all it needs); an op that the generic settings below
// do not fit fails until its kind's settings are added to them.
#include <string>

#include "absl/strings/string_view.h"
#include "core/device.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "kernels/desc.h"
#include "tests/kernels/gradient_check.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using kernel_test::CheckGradients;
using kernel_test::CreateKernelUnderTest;
using kernel_test::FillDefaults;
using kernel_test::FillIntegers;
using kernel_test::GradientCheckOptions;
using kernel_test::KernelUnderTest;

class EveryOpTest : public ::testing::TestWithParam<std::string> {
 protected:
  OpDesc Desc() const {
    absl::StatusOr<OpDesc> desc = ParseOpDesc(GetParam());
    EXPECT_TRUE(desc.ok()) << desc.status();
    return *desc;
  }
};

TEST_P(EveryOpTest, TheReferenceBackwardMatchesFiniteDifferences) {
  const OpDesc desc = Desc();
  std::unique_ptr<Backend> reference = CreateReferenceBackend();
  absl::StatusOr<KernelUnderTest> k = CreateKernelUnderTest(*reference, desc, DType::kF64);
  ASSERT_TRUE(k.ok()) << k.status();
  FillDefaults(k->buffers, 7);
  GradientCheckOptions options;
  const absl::string_view kind = OpKind(desc);
  if (kind == "softmax_xent") {  // labels in range; its backward ignores dy (d loss = 1)
    const auto& d = std::get<SoftmaxXentDesc>(desc);
    FillIntegers(k->buffers.signature.inputs[1], k->buffers.x[1].data(), 41, 0, d.classes - 1);
    options.unit_output_gradient = true;
  }
  if (kind == "dropout")  // each forward draws the next mask: a fresh kernel per forward
    options.fresh_kernel = [&] { return reference->Create(desc, DType::kF64, {}); };
  const absl::Status status = CheckGradients(*k->kernel, k->buffers, options);
  EXPECT_TRUE(status.ok()) << GetParam() << ": " << status;
}

TEST_P(EveryOpTest, TheOneDnnKernelMatchesTheReference) {
  ASSERT_NE(onednn_test::OneDnn(), nullptr);
  const OpDesc desc = Desc();
  onednn_test::CompareOptions options;
  // Integer inputs keep sums of products exact in fp32; ops with division,
  // roots or powers (batch norm, LRN) agree to fp32's rounding. The op's
  // own tests hold each op to its exact bound.
  options.forward_rtol = options.backward_rtol = 1e-4;
  options.forward_atol = options.backward_atol = 1e-5;
  if (OpKind(desc) == "softmax_xent") {  // exp and log: reals, to fp32's rounding
    options.integers = false;
    options.low = -4;
    options.high = 4;
    options.forward_rtol = options.backward_rtol = 1e-6;
  }
  const absl::Status status = onednn_test::CompareWithReference(desc, options);
  EXPECT_TRUE(status.ok()) << GetParam() << ": " << status;
}

INSTANTIATE_TEST_SUITE_P(Ops, EveryOpTest, ::testing::ValuesIn([] {
                           std::vector<std::string> samples;
                           for (absl::string_view s : OpSamples()) samples.emplace_back(s);
                           return samples;
                         }()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           const std::string& s = info.param;
                           return s.substr(0, s.find(':'));
                         });

}  // namespace
}  // namespace cnnbench
