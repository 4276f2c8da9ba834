// The activations (kernels/activation.h): the per-element arithmetic every
// backend's own loops share, their text forms in descriptors, the reference
// activation op on exact values, and each fused form against the op followed
// by the activation as a layer of its own.
#include "kernels/activation.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "kernels/op_traits.h"
#include "kernels/reference/reference_backend.h"
#include "tests/kernels/gradient_check.h"

namespace cnnbench {
namespace {

using kernel_test::CreateKernelUnderTest;
using kernel_test::FillDefaults;
using kernel_test::FillUniform;
using kernel_test::FromDoubles;
using kernel_test::KernelUnderTest;
using kernel_test::ToDoubles;

TEST(ActivationTest, Relu6ClipsAtZeroAndSix) {
  const ActivationKind k = ActivationKind::kRelu6;
  EXPECT_EQ(ActivationForward(k, -3.0f), 0.0f);
  EXPECT_EQ(ActivationForward(k, 0.0f), 0.0f);
  EXPECT_EQ(ActivationForward(k, 2.5f), 2.5f);
  EXPECT_EQ(ActivationForward(k, 6.0f), 6.0f);
  EXPECT_EQ(ActivationForward(k, 6.5f), 6.0f);
  EXPECT_EQ(ActivationForward(k, 1e30), 6.0);
  EXPECT_EQ(ActivationForward(k, std::numeric_limits<float>::quiet_NaN()), 0.0f);
  EXPECT_EQ(ActivationForward(ActivationKind::kRelu, 6.5f), 6.5f);
  EXPECT_EQ(ActivationForward(ActivationKind::kRelu, -1.0f), 0.0f);
  EXPECT_EQ(ActivationForward(ActivationKind::kNone, -1.0f), -1.0f);
}

// dx = dy for 0 < x < 6 only: 0 at both clips and beyond them.
TEST(ActivationTest, Relu6BackwardMasksOutsideTheOpenInterval) {
  const ActivationKind k = ActivationKind::kRelu6;
  for (double x : {-1.0, 0.0, 6.0, 7.0}) {
    EXPECT_EQ(ActivationBackward(k, x, 3.0), 0.0) << x;
    EXPECT_EQ(ActivationBackwardOfOutput(k, ActivationForward(k, x), 3.0), 0.0) << x;
  }
  for (double x : {1e-6, 3.0, 5.999}) {
    EXPECT_EQ(ActivationBackward(k, x, 3.0), 3.0) << x;
    EXPECT_EQ(ActivationBackwardOfOutput(k, ActivationForward(k, x), 3.0), 3.0) << x;
  }
  EXPECT_EQ(ActivationBackward(ActivationKind::kRelu, 7.0, 3.0), 3.0);
  EXPECT_EQ(ActivationBackward(ActivationKind::kRelu, 0.0, 3.0), 0.0);
}

// ReLU's strings are those of before kinds existed; ReLU6 is `_relu6`.
TEST(ActivationTest, TextFormsKeepReluAndNameRelu6) {
  ReluDesc relu6{{1, 2, 3, 4}, ActivationKind::kRelu6};
  EXPECT_EQ(relu6.ToString(), "relu:mb1ic2ih3iw4_relu6");
  EXPECT_EQ((ReluDesc{{1, 2, 3, 4}}.ToString()), "relu:mb1ic2ih3iw4");
  for (const char* text :
       {"relu:mb1ic2ih3iw4", "relu:mb1ic2ih3iw4_relu6", "bn:mb1ic2ih3iw4_eps0.001mom0.997_relu",
        "bn:mb1ic2ih3iw4_eps0.001mom0.997_noscale_relu6", "add:mb1ic2ih3iw4_relu",
        "add:mb1ic2ih3iw4_relu6", "conv:mb2_ic3oc4_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1_bias_relu6"}) {
    absl::StatusOr<OpDesc> op = ParseOpDesc(text);
    ASSERT_TRUE(op.ok()) << text << ": " << op.status();
    EXPECT_EQ(OpDescToString(*op), text);
  }
  EXPECT_EQ(std::get<AddDesc>(*ParseOpDesc("add:mb1ic2ih3iw4_relu6")).activation,
            ActivationKind::kRelu6);
  EXPECT_EQ(std::get<AddDesc>(*ParseOpDesc("add:mb1ic2ih3iw4_relu")).activation,
            ActivationKind::kRelu);
  // ReLU's own suffix is not canonical on the activation op; others fail.
  for (const char* bad :
       {"relu:mb1ic2ih3iw4_relu", "relu:mb1ic2ih3iw4_relu7", "add:mb1ic2ih3iw4_relu6_relu",
        "relu:mb1ic2ih3iw4_swish", "relu:mb1ic2ih3iw4_gelu_erf", "relu:mb1ic2ih3iw4_silu_relu"})
    EXPECT_FALSE(ParseOpDesc(bad).ok()) << bad;
}

// The kinds with curves, at points whose values are known in closed form
// (torch.nn's functions give the same to the printed digits).
TEST(ActivationTest, CurvedKindsAtKnownPoints) {
  using K = ActivationKind;
  struct Point {
    K kind;
    double x, y;
  };
  for (const Point& p :
       {Point{K::kSigmoid, 0, 0.5}, Point{K::kSigmoid, 2, 0.8807970779778823},
        Point{K::kSilu, 1, 0.7310585786300049}, Point{K::kSilu, -2, -0.2384058440442351},
        Point{K::kHardSigmoid, 1, 4.0 / 6}, Point{K::kHardSigmoid, -3.5, 0},
        Point{K::kHardSigmoid, 3.5, 1}, Point{K::kHardSwish, 1, 4.0 / 6},
        Point{K::kHardSwish, -4, 0}, Point{K::kHardSwish, 4, 4},
        Point{K::kGelu, 1, 0.8413447460685429}, Point{K::kGelu, -1, -0.15865525393145707},
        Point{K::kGeluTanh, 1, 0.8411919906082768}, Point{K::kGeluTanh, 0, 0}}) {
    EXPECT_NEAR(ActivationForward(p.kind, p.x), p.y, 1e-12)
        << ActivationSuffix(p.kind) << " " << p.x;
    EXPECT_NEAR(ActivationForward(p.kind, static_cast<float>(p.x)), p.y, 1e-6)
        << ActivationSuffix(p.kind) << " " << p.x << " (float)";
  }
  // Far tails: no overflow to NaN.
  EXPECT_EQ(ActivationForward(K::kSigmoid, -1000.0), 0.0);
  EXPECT_EQ(ActivationForward(K::kSilu, -1000.0f), -0.0f);
  EXPECT_EQ(ActivationForward(K::kGelu, 1000.0), 1000.0);
  EXPECT_EQ(ActivationForward(K::kGeluTanh, -1000.0f), -0.0f);
}

// f'(x) against a central difference of f, off the kinks, and dx = dy f'(x).
TEST(ActivationTest, DerivativesMatchCentralDifferences) {
  for (int k = static_cast<int>(ActivationKind::kSigmoid);
       k < static_cast<int>(ActivationKind::kCount); ++k) {
    const auto kind = static_cast<ActivationKind>(k);
    EXPECT_FALSE(ActivationMasks(kind)) << ActivationSuffix(kind);
    for (double x = -6.05; x < 6; x += 0.1) {
      const double h = 1e-6;
      const double numeric =
          (ActivationForward(kind, x + h) - ActivationForward(kind, x - h)) / (2 * h);
      EXPECT_NEAR(ActivationDerivative(kind, x), numeric, 1e-7)
          << ActivationSuffix(kind) << " " << x;
      EXPECT_NEAR(ActivationBackward(kind, x, 3.0), 3.0 * numeric, 3e-7) << ActivationSuffix(kind);
    }
  }
  // At the kinks, torch's choice: hard-swish (2x + 3) / 6 on [-3, 3].
  EXPECT_EQ(ActivationDerivative(ActivationKind::kHardSwish, 3.0), 1.5);
  EXPECT_EQ(ActivationDerivative(ActivationKind::kHardSwish, -3.0), -0.5);
  EXPECT_EQ(ActivationDerivative(ActivationKind::kHardSigmoid, 3.0), 0.0);
  EXPECT_TRUE(ActivationMasks(ActivationKind::kRelu) && ActivationMasks(ActivationKind::kRelu6));
}

TEST(ActivationTest, CurvedKindsRoundTripAsTheOpAndAsAConvEpilogue) {
  for (int k = static_cast<int>(ActivationKind::kSigmoid);
       k < static_cast<int>(ActivationKind::kCount); ++k) {
    const auto kind = static_cast<ActivationKind>(k);
    const std::string op = absl::StrCat("relu:mb1ic2ih3iw4", ActivationSuffix(kind));
    const std::string conv = absl::StrCat("conv:mb2_ic3oc4_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1_bias",
                                          ActivationSuffix(kind));
    for (const std::string& text : {op, conv}) {
      absl::StatusOr<OpDesc> parsed = ParseOpDesc(text);
      ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status();
      EXPECT_EQ(OpDescToString(*parsed), text);
    }
    EXPECT_EQ(std::get<ReluDesc>(*ParseOpDesc(op)).kind, kind);
  }
}

// The reference runs a curved kind fused in a conv or add only forward
// (inference): in training those fused forms are "unsupported" (the plan
// keeps the layer). Its batch norm fuses one in training too (its backward
// recomputes the pre-activation from x).
TEST(ActivationTest, TheReferenceFusesCurvedKindsForwardOnlyButInBatchNorm) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  KernelOptions training = KernelOptions::ForDType(DType::kF32);
  KernelOptions inference = training;
  inference.forward_only = true;
  for (const char* text :
       {"conv:mb2_ic3oc4_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1_bias_silu", "add:mb2ic3ih4iw4_gelu"}) {
    const OpDesc desc = *ParseOpDesc(text);
    const absl::Status refused = backend->Supports(desc, training);
    EXPECT_TRUE(absl::IsUnimplemented(refused)) << text << ": " << refused;
    EXPECT_TRUE(backend->Supports(desc, inference).ok()) << text;
  }
  const OpDesc bn = *ParseOpDesc("bn:mb2ic3ih4iw4_eps0.001mom0.997_hardswish");
  EXPECT_TRUE(backend->Supports(bn, training).ok());
  EXPECT_TRUE(backend->Supports(bn, inference).ok());
  EXPECT_TRUE(backend->Supports(*ParseOpDesc("relu:mb2ic3ih4iw4_silu"), training).ok());
}

TEST(ActivationTest, ReferenceRelu6OpOnExactValues) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  for (DType dtype : {DType::kF32, DType::kF64}) {
    auto k = CreateKernelUnderTest(*backend, ReluDesc{{1, 2, 1, 4}, ActivationKind::kRelu6}, dtype);
    ASSERT_TRUE(k.ok()) << k.status();
    const KernelSignature& sig = k->kernel->signature();
    ASSERT_TRUE(
        FromDoubles(sig.inputs[0], k->buffers.x[0].data(), {-2, 0, 0.5, 3, 5.5, 6, 6.5, 100}).ok());
    ASSERT_TRUE(FromDoubles(sig.output, k->buffers.dy.data(), {1, 2, 3, 4, 5, 6, 7, 8}).ok());
    KernelArgs args = k->buffers.Args();
    ASSERT_TRUE(k->kernel->Forward(args).ok());
    EXPECT_EQ(ToDoubles(sig.output, k->buffers.y.data()),
              (std::vector<double>{0, 0, 0.5, 3, 5.5, 6, 6, 6}));
    ASSERT_TRUE(k->kernel->BackwardData(args).ok());
    EXPECT_EQ(ToDoubles(sig.inputs[0], k->buffers.dx[0].data()),
              (std::vector<double>{0, 0, 3, 4, 5, 0, 0, 0}));
  }
}

// The op with `kind` fused equals the op then the activation op: forward,
// every input's and parameter's gradient. The inputs make the op's output
// cross both 0 and 6, so a wrong clip or mask shows.
void ExpectFusedEqualsUnfused(const OpDesc& plain, ActivationKind kind) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  const OpDesc fused_desc = *WithActivation(plain, kind, PlanUse::kTraining);
  auto fused = CreateKernelUnderTest(*backend, fused_desc, DType::kF64);
  auto op = CreateKernelUnderTest(*backend, plain, DType::kF64);
  ASSERT_TRUE(fused.ok() && op.ok()) << fused.status() << op.status();
  const KernelSignature& sig = op->kernel->signature();
  FillDefaults(fused->buffers, 5);
  for (size_t i = 0; i < sig.inputs.size(); ++i)
    FillUniform(sig.inputs[i], fused->buffers.x[i].data(), 11 + i, -4, 10);
  if (std::holds_alternative<BatchNormDesc>(plain)) {  // gamma = beta = 3: y spans [-2, 8]
    for (size_t i = 0; i < sig.params.size(); ++i) {
      std::vector<double> three(sig.params[i].shape.num_elements(), 3.0);
      ASSERT_TRUE(FromDoubles(sig.params[i], fused->buffers.params[i].data(), three).ok());
    }
  }
  FillUniform(sig.output, fused->buffers.dy.data(), 13, -1, 1);
  auto copy = [](const TensorSpec& spec, const Buffer& from, Buffer& to) {
    ASSERT_TRUE(FromDoubles(spec, to.data(), ToDoubles(spec, from.data())).ok());
  };
  for (size_t i = 0; i < sig.inputs.size(); ++i)
    copy(sig.inputs[i], fused->buffers.x[i], op->buffers.x[i]);
  for (size_t i = 0; i < sig.params.size(); ++i)
    copy(sig.params[i], fused->buffers.params[i], op->buffers.params[i]);
  for (size_t i = 0; i < sig.state.size(); ++i)
    copy(sig.state[i], fused->buffers.state[i], op->buffers.state[i]);

  KernelArgs fused_args = fused->buffers.Args();
  ASSERT_TRUE(fused->kernel->Forward(fused_args).ok());
  KernelArgs op_args = op->buffers.Args();
  ASSERT_TRUE(op->kernel->Forward(op_args).ok());
  const Shape shape = sig.output.shape;
  auto act = CreateKernelUnderTest(
      *backend, ReluDesc{{shape[0], shape[1], shape[2], shape[3]}, kind}, DType::kF64);
  ASSERT_TRUE(act.ok()) << act.status();
  copy(sig.output, op->buffers.y, act->buffers.x[0]);
  copy(sig.output, fused->buffers.dy, act->buffers.dy);
  KernelArgs act_args = act->buffers.Args();
  ASSERT_TRUE(act->kernel->Forward(act_args).ok());
  const std::vector<double> y = ToDoubles(sig.output, fused->buffers.y.data());
  EXPECT_EQ(y, ToDoubles(sig.output, act->buffers.y.data())) << OpDescToString(fused_desc);
  int below = 0, above = 0;
  for (double v : ToDoubles(sig.output, op->buffers.y.data())) {
    below += v < 0;
    above += v > 6;
  }
  EXPECT_GT(below, 0) << OpDescToString(plain);
  EXPECT_GT(above, 0) << OpDescToString(plain);

  ASSERT_TRUE(fused->kernel->BackwardData(fused_args).ok());
  ASSERT_TRUE(fused->kernel->BackwardWeights(fused_args).ok());
  ASSERT_TRUE(act->kernel->BackwardData(act_args).ok());
  copy(sig.output, act->buffers.dx[0], op->buffers.dy);
  ASSERT_TRUE(op->kernel->BackwardData(op_args).ok());
  ASSERT_TRUE(op->kernel->BackwardWeights(op_args).ok());
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    const auto a = ToDoubles(sig.inputs[i], fused->buffers.dx[i].data());
    const auto b = ToDoubles(sig.inputs[i], op->buffers.dx[i].data());
    for (size_t e = 0; e < a.size(); ++e) EXPECT_NEAR(a[e], b[e], 1e-9) << "dx" << i << "[" << e;
  }
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const auto a = ToDoubles(sig.params[i], fused->buffers.dparams[i].data());
    const auto b = ToDoubles(sig.params[i], op->buffers.dparams[i].data());
    for (size_t e = 0; e < a.size(); ++e) EXPECT_NEAR(a[e], b[e], 1e-9) << "dp" << i << "[" << e;
  }
}

// A batch norm with a curved kind fused, in training: the same z, dx,
// dgamma and dbeta as the batch norm then the activation op.
TEST(ActivationTest, FusedCurvedBatchNormEqualsUnfusedInTheReference) {
  for (ActivationKind kind :
       {ActivationKind::kSigmoid, ActivationKind::kSilu, ActivationKind::kHardSigmoid,
        ActivationKind::kHardSwish, ActivationKind::kGelu, ActivationKind::kGeluTanh}) {
    SCOPED_TRACE(ActivationSuffix(kind));
    ExpectFusedEqualsUnfused(*ParseOpDesc("bn:mb2ic3ih4iw4_eps0.001mom0.997"), kind);
  }
}

TEST(ActivationTest, FusedRelu6EqualsUnfusedInTheReference) {
  for (ActivationKind kind : {ActivationKind::kRelu, ActivationKind::kRelu6}) {
    SCOPED_TRACE(ActivationSuffix(kind));
    ExpectFusedEqualsUnfused(*ParseOpDesc("bn:mb2ic3ih4iw4_eps0.001mom0.997"), kind);
    ExpectFusedEqualsUnfused(*ParseOpDesc("add:mb2ic3ih4iw4"), kind);
    ExpectFusedEqualsUnfused(*ParseOpDesc("conv:mb2_ic3oc4_ih6oh6kh3sh1ph1_iw6ow6kw3sw1pw1_bias"),
                             kind);
  }
}

TEST(ActivationTest, EveryFusingOpTakesEveryKindOnce) {
  for (const char* text : {"bn:mb2ic3ih4iw4_eps0.001mom0.997", "add:mb2ic3ih4iw4",
                           "conv:mb2_ic3oc4_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1"}) {
    const OpDesc op = *ParseOpDesc(text);
    auto fused = WithActivation(op, ActivationKind::kRelu6, PlanUse::kTraining);
    ASSERT_TRUE(fused.has_value()) << text;
    EXPECT_EQ(FusedActivation(*fused), ActivationKind::kRelu6);
    EXPECT_EQ(OpDescToString(*fused), absl::StrCat(text, "_relu6"));
    EXPECT_FALSE(WithActivation(*fused, ActivationKind::kRelu, PlanUse::kTraining).has_value());
  }
  EXPECT_FALSE(WithActivation(*ParseOpDesc("pool:max_mb2ic3_ih8oh4kh2sh2ph0_iw8ow4kw2sw2pw0"),
                              ActivationKind::kRelu6, PlanUse::kTraining)
                   .has_value());
}

}  // namespace
}  // namespace cnnbench
