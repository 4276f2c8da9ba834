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

// The activation of an activation sample: the op's kind, or the fused one.
ActivationKind ActivationOf(const OpDesc& desc) {
  const auto* op = std::get_if<ReluDesc>(&desc);
  return op != nullptr ? op->kind : FusedActivation(desc);
}

// ReLU6, as the op or fused: its inputs must reach past 6 to test the clip.
bool ClipsAtSix(const OpDesc& desc) { return ActivationOf(desc) == ActivationKind::kRelu6; }

// The kinds whose gradient is not a mask (sigmoid, SiLU, hard-sigmoid,
// hard-swish, GELU): reals over [-5, 5), past hard-sigmoid's and
// hard-swish's kinks at -3 and 3 and into the tails, never on a kink.
bool Curved(const OpDesc& desc) { return !ActivationMasks(ActivationOf(desc)); }

// Reals whose output crosses 0 and 6 (a finite-difference step never
// straddles a clip at these seeds): inputs in [-4, 10); a batch norm's beta 5.
void SpanTheClips(const OpDesc& desc, kernel_test::KernelBuffers& buffers) {
  const KernelSignature& sig = buffers.signature;
  for (size_t i = 0; i < sig.inputs.size(); ++i)
    kernel_test::FillUniform(sig.inputs[i], buffers.x[i].data(), 31 + i, -4, 10);
  if (std::holds_alternative<BatchNormDesc>(desc))  // gamma, beta about 3: y spans [-2, 8]
    for (size_t i = 0; i < sig.params.size(); ++i)
      kernel_test::FillUniform(sig.params[i], buffers.params[i].data(), 37 + i, 2.9, 3.1);
}

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
  // Each forward draws the next mask: a fresh kernel per forward.
  if (kind == "dropout" || kind == "droppath")
    options.fresh_kernel = [&] { return reference->Create(desc, DType::kF64, {}); };
  if (ClipsAtSix(desc)) SpanTheClips(desc, k->buffers);
  if (Curved(desc))
    kernel_test::FillUniform(k->buffers.signature.inputs[0], k->buffers.x[0].data(), 43, -5, 5);
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
  if (ClipsAtSix(desc)) {  // integers on both clips (0 and 6) and past them
    options.low = -3;
    options.high = 9;
  }
  if (Curved(desc)) {  // exp, erf and tanh: reals, to fp32's rounding
    options.integers = false;
    options.low = -5;
    options.high = 5;
  }
  if (OpKind(desc) == "softmax_xent") {  // exp and log: reals, to fp32's rounding
    options.integers = false;
    options.low = -4;
    options.high = 4;
    options.forward_rtol = options.backward_rtol = 1e-6;
  }
  // oneDNN runs every sample in training, the fused ReLU6 forms (bn, add,
  // the conv epilogue) included: none is skipped as unsupported.
  absl::StatusOr<std::unique_ptr<Kernel>> probe =
      onednn_test::OneDnn()->Create(desc, DType::kF32, {});
  ASSERT_TRUE(probe.ok()) << GetParam() << ": " << probe.status();
  const absl::Status status = onednn_test::CompareWithReference(desc, options);
  EXPECT_TRUE(status.ok()) << GetParam() << ": " << status;
}

INSTANTIATE_TEST_SUITE_P(Ops, EveryOpTest, ::testing::ValuesIn([] {
                           std::vector<std::string> samples;
                           for (absl::string_view s : OpSamples()) samples.emplace_back(s);
                           return samples;
                         }()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           // The kind, then the activation of an activation sample.
                           const std::string& s = info.param;
                           const absl::StatusOr<OpDesc> desc = ParseOpDesc(s);
                           const ActivationKind kind =
                               desc.ok() ? ActivationOf(*desc) : ActivationKind::kNone;
                           return s.substr(0, s.find(':')) +
                                  (kind == ActivationKind::kRelu ? "" : ActivationSuffix(kind));
                         });

}  // namespace
}  // namespace cnnbench
