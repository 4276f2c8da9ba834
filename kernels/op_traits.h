// Every per-op fact the layers above the kernels need, in one place per op:
// `OpTraits<T>` for each alternative of OpDesc. The primary template is
// declared and never defined, and every function below visits OpDesc
// through it, so an op added to OpDesc without its traits, or traits that
// leave a fact out, fail to compile rather than fall through at run time.
//
// Each specialisation says:
//   kKind                 the descriptor's name prefix ("conv" in "conv:...")
//   kSample               a small descriptor of the op in canonical form,
//                         which every backend creates: the tests that cover
//                         every op iterate OpDesc's samples (OpSamples())
//   Parameters(d)         the trainable tensors' logical shapes, in the
//                         kernel signature's order (kernel.h)
//   Init(d, i)            how parameter i starts (train/init.h draws it)
//   State(d)              the persistent, untrained tensors' shapes
//   StateStart(d, i)      the value state tensor i starts at
//   ForwardFlops(d)       FLOPs of one forward pass (2 per multiply-add);
//                         0 for ops measured by bytes
//   PassBytes(d, p, t)    bytes one pass moves in element type t (the
//                         memory-bound ops' bytes_per_second); 0 for the
//                         compute-bound ones
//   ActivationInput(d)    the (N,C,H,W) activation a kernel case feeds it,
//                         where it reads one
//   ReshapedInput(d)      the (N,C,H,W) it reads a plain input of the same
//                         element count as (an fc's (N,C) output), where
//                         its descriptor fixes one
//   Bench(d)              its kernel-case family (a KernelCaseFamily, none
//                         when it has no kernel cases) and the passes a
//                         training step runs
//   WithActivation(d, kind, use)
//                         the op with a following activation of that kind
//                         folded in, where it takes one in a plan of that
//                         use (train/fusion.h)
#ifndef CNNBENCH_KERNELS_OP_TRAITS_H_
#define CNNBENCH_KERNELS_OP_TRAITS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "kernels/desc.h"

namespace cnnbench {

// A pass of one layer operation through the Kernel interface.
enum class OpPass { kForward, kBackwardData, kBackwardWeights };

// What a compiled plan runs of each op: every pass (training), or the
// forward alone (inference). Some fusions fit only the second.
enum class PlanUse { kTraining, kForwardOnly };

// How a parameter starts (train/init.h): tf_cnn_benchmarks' initialisers.
enum class ParamInit {
  kZero,
  kOne,
  kGlorotUniform,        // limit sqrt(6 / (fan_in + fan_out))
  kTruncatedNormalFanIn  // stddev sqrt(f / fan_in), f = 2 before a ReLU, else 1; cut at 2 stddevs
};
struct ParamFact {
  ParamInit init = ParamInit::kZero;
  double fan_in = 0, fan_out = 0;
};

// One kernel case of an op: the benchmark name's pass part ("fwd",
// "bwd_data", "max/fwd", ...), the pass it runs, and whether the training
// step runs it only when the op's input needs a gradient.
struct BenchPassFact {
  std::string name;
  OpPass pass = OpPass::kForward;
  bool needs_input_gradient = false;
};
// The families of per-layer kernel cases. The suite's case family of each
// is bench/suite/names.h's kKernelCaseFamilies, a table keyed by this enum and
// checked complete and in order at compile time: a family added here does
// not build until the suite has its case family.
enum class KernelCaseFamily { kConv, kFc, kPool, kBatchNorm, kRelu, kCount };
inline constexpr size_t kKernelCaseFamilyCount = static_cast<size_t>(KernelCaseFamily::kCount);

struct BenchFact {
  std::optional<KernelCaseFamily> family;  // none: the op has no kernel cases
  std::vector<BenchPassFact> passes;
};

template <typename T>
struct OpTraits;  // one specialisation per OpDesc alternative, below

namespace op_traits_internal {
inline double Bytes(const Dims4& d, DType t) {
  return static_cast<double>(SizeOf(t)) * static_cast<double>(d.elements());
}
inline BenchFact TrainingPasses(KernelCaseFamily family, bool weights) {
  BenchFact f{family, {{"fwd", OpPass::kForward, false}}};
  if (weights) {
    f.passes.push_back({"bwd_data", OpPass::kBackwardData, true});
    f.passes.push_back({"bwd_filter", OpPass::kBackwardWeights, false});
  } else {
    f.passes.push_back({"bwd", OpPass::kBackwardData, true});
  }
  return f;
}
}  // namespace op_traits_internal

// Facts many ops share, which a specialisation takes by inheriting them
// (a choice it makes, not a default it gets): no parameters or state; no
// kernel cases (so no bytes to count); no activation to fold in.
template <typename T>
struct NoTrainedTensors {
  static std::vector<Shape> Parameters(const T&) { return {}; }
  static ParamFact Init(const T&, int) { return {}; }
  static std::vector<Shape> State(const T&) { return {}; }
  static float StateStart(const T&, int) { return 0; }
};
template <typename T>
struct NoKernelCases {
  static double PassBytes(const T&, OpPass, DType) { return 0; }
  static BenchFact Bench(const T&) { return {}; }
};
template <typename T>
struct NoFusedActivation {
  static std::optional<T> WithActivation(const T&, ActivationKind, PlanUse) { return std::nullopt; }
};

namespace op_traits_internal {
// The op with `kind` as its activation, when it has none yet: every op that
// fuses one fuses every kind (the backends' fused arithmetic is
// kernels/activation.h's; Backend::Supports refuses what one cannot run).
template <typename T>
std::optional<T> WithActivationField(const T& d, ActivationKind kind) {
  if (d.activation != ActivationKind::kNone || kind == ActivationKind::kNone) return std::nullopt;
  T fused = d;
  fused.activation = kind;
  return fused;
}
}  // namespace op_traits_internal

template <>
struct OpTraits<ConvDesc> {
  // No state: its parameters are all it keeps.
  static std::vector<Shape> State(const ConvDesc&) { return {}; }
  static float StateStart(const ConvDesc&, int) { return 0; }
  static constexpr absl::string_view kKind = "conv";
  static constexpr absl::string_view kSample = "conv:mb2_ic3oc4_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1";
  static std::vector<Shape> Parameters(const ConvDesc& d) {
    std::vector<Shape> p = {d.weights_shape()};
    if (d.bias) p.push_back(Shape{d.k});
    return p;
  }
  static ParamFact Init(const ConvDesc& d, int index) {
    if (index != 0) return {ParamInit::kZero};  // bias
    const double receptive = static_cast<double>(d.h.kernel * d.w.kernel);
    return {ParamInit::kGlorotUniform, receptive * static_cast<double>(d.c / d.groups),
            receptive * static_cast<double>(d.k / d.groups)};
  }
  static double ForwardFlops(const ConvDesc& d) { return d.ForwardFlops(); }
  static double PassBytes(const ConvDesc&, OpPass, DType) { return 0; }  // compute-bound
  static std::optional<Dims4> ActivationInput(const ConvDesc& d) { return d.input(); }
  static std::optional<Shape> ReshapedInput(const ConvDesc&) { return std::nullopt; }
  static BenchFact Bench(const ConvDesc&) {
    return op_traits_internal::TrainingPasses(KernelCaseFamily::kConv, /*weights=*/true);
  }
  // The ReLU as the convolution's epilogue, in every plan: in training the
  // backward masks dy once for both passes (Kernel::Backward), the traffic
  // of the ReLU layer's backward, and the forward ReLU pass is gone. A
  // backend without that backward refuses it in training (Supports with
  // KernelOptions::forward_only false), and the ReLU stays a layer.
  static std::optional<ConvDesc> WithActivation(const ConvDesc& d, ActivationKind kind, PlanUse) {
    return op_traits_internal::WithActivationField(d, kind);
  }
};

template <>
struct OpTraits<PoolDesc> : NoTrainedTensors<PoolDesc>, NoFusedActivation<PoolDesc> {
  static constexpr absl::string_view kKind = "pool";
  static constexpr absl::string_view kSample = "pool:max_mb2ic3_ih8oh4kh2sh2ph0_iw8ow4kw2sw2pw0";
  static double ForwardFlops(const PoolDesc&) { return 0; }
  // Forward reads x and writes y; backward reads x, y (or the argmax) and
  // dy, and writes dx.
  static double PassBytes(const PoolDesc& d, OpPass pass, DType t) {
    const double in = op_traits_internal::Bytes(d.input(), t);
    const double out = op_traits_internal::Bytes(d.output(), t);
    return pass == OpPass::kForward ? in + out : in + 2 * out;
  }
  static std::optional<Dims4> ActivationInput(const PoolDesc& d) { return d.input(); }
  static std::optional<Shape> ReshapedInput(const PoolDesc&) { return std::nullopt; }
  static BenchFact Bench(const PoolDesc& d) {
    const std::string alg = d.algorithm == PoolAlgorithm::kMax ? "max" : "avg";
    return {KernelCaseFamily::kPool,
            {{alg + "/fwd", OpPass::kForward, false}, {alg + "/bwd", OpPass::kBackwardData, true}}};
  }
};

template <>
struct OpTraits<FcDesc> : NoFusedActivation<FcDesc> {
  // No state: its parameters are all it keeps.
  static std::vector<Shape> State(const FcDesc&) { return {}; }
  static float StateStart(const FcDesc&, int) { return 0; }
  static constexpr absl::string_view kKind = "fc";
  static constexpr absl::string_view kSample = "fc:mb2ic12oc5";
  static std::vector<Shape> Parameters(const FcDesc& d) {
    std::vector<Shape> p = {Shape{d.oc, d.ic}};
    if (d.bias) p.push_back(Shape{d.oc});
    return p;
  }
  static ParamFact Init(const FcDesc& d, int index) {
    if (index != 0) return {ParamInit::kZero};  // bias
    return {ParamInit::kTruncatedNormalFanIn, static_cast<double>(d.ic), 0};
  }
  static double ForwardFlops(const FcDesc& d) { return d.ForwardFlops(); }
  static double PassBytes(const FcDesc&, OpPass, DType) { return 0; }  // compute-bound
  static std::optional<Dims4> ActivationInput(const FcDesc&) { return std::nullopt; }
  static std::optional<Shape> ReshapedInput(const FcDesc&) { return std::nullopt; }
  static BenchFact Bench(const FcDesc&) {
    return op_traits_internal::TrainingPasses(KernelCaseFamily::kFc, /*weights=*/true);
  }
};

template <>
struct OpTraits<BatchNormDesc> {
  static constexpr absl::string_view kKind = "bn";
  static constexpr absl::string_view kSample = "bn:mb2ic3ih4iw4_eps0.001mom0.997";
  // {gamma, beta}, or {beta} without scale.
  static std::vector<Shape> Parameters(const BatchNormDesc& d) {
    if (d.scale) return {Shape{d.dims.c}, Shape{d.dims.c}};
    return {Shape{d.dims.c}};
  }
  static ParamFact Init(const BatchNormDesc& d, int index) {
    return {d.scale && index == 0 ? ParamInit::kOne : ParamInit::kZero};
  }
  // The running mean and variance.
  static std::vector<Shape> State(const BatchNormDesc& d) {
    return {Shape{d.dims.c}, Shape{d.dims.c}};
  }
  static float StateStart(const BatchNormDesc&, int index) { return index == 1 ? 1.0f : 0.0f; }
  static double ForwardFlops(const BatchNormDesc&) { return 0; }
  // Forward: a statistics pass, then read and write; backward: x and dy
  // twice (reductions, then dx) and dx written.
  static double PassBytes(const BatchNormDesc& d, OpPass pass, DType t) {
    const double bytes = op_traits_internal::Bytes(d.dims, t);
    return pass == OpPass::kForward ? 3 * bytes : 5 * bytes;
  }
  static std::optional<Dims4> ActivationInput(const BatchNormDesc& d) { return d.dims; }
  static std::optional<Shape> ReshapedInput(const BatchNormDesc& d) { return d.dims.shape(); }
  // "bwd" runs both backward passes (dx and the parameters' gradients).
  static BenchFact Bench(const BatchNormDesc&) {
    return {KernelCaseFamily::kBatchNorm,
            {{"fwd", OpPass::kForward, false}, {"bwd", OpPass::kBackwardData, false}}};
  }
  static std::optional<BatchNormDesc> WithActivation(const BatchNormDesc& d, ActivationKind kind,
                                                     PlanUse) {
    return op_traits_internal::WithActivationField(d, kind);
  }
};

template <>
struct OpTraits<ReluDesc> : NoTrainedTensors<ReluDesc>, NoFusedActivation<ReluDesc> {
  static constexpr absl::string_view kKind = "relu";
  static constexpr absl::string_view kSample = "relu:mb2ic3ih4iw4";
  static double ForwardFlops(const ReluDesc&) { return 0; }
  // Forward reads x and writes y; backward reads x and dy and writes dx.
  static double PassBytes(const ReluDesc& d, OpPass pass, DType t) {
    const double bytes = op_traits_internal::Bytes(d.dims, t);
    return pass == OpPass::kForward ? 2 * bytes : 3 * bytes;
  }
  static std::optional<Dims4> ActivationInput(const ReluDesc& d) { return d.dims; }
  static std::optional<Shape> ReshapedInput(const ReluDesc& d) { return d.dims.shape(); }
  static BenchFact Bench(const ReluDesc&) {
    return op_traits_internal::TrainingPasses(KernelCaseFamily::kRelu, /*weights=*/false);
  }
};

template <>
struct OpTraits<LrnDesc>
    : NoTrainedTensors<LrnDesc>, NoKernelCases<LrnDesc>, NoFusedActivation<LrnDesc> {
  static constexpr absl::string_view kKind = "lrn";
  static constexpr absl::string_view kSample = "lrn:mb2ic3ih4iw4_r5k1a0.0001b0.75";
  static double ForwardFlops(const LrnDesc&) { return 0; }
  static std::optional<Dims4> ActivationInput(const LrnDesc& d) { return d.dims; }
  static std::optional<Shape> ReshapedInput(const LrnDesc& d) { return d.dims.shape(); }
};

template <>
struct OpTraits<DropoutDesc>
    : NoTrainedTensors<DropoutDesc>, NoKernelCases<DropoutDesc>, NoFusedActivation<DropoutDesc> {
  static constexpr absl::string_view kKind = "dropout";
  static constexpr absl::string_view kSample = "dropout:mb2ic3ih4iw4_p0.5";
  static double ForwardFlops(const DropoutDesc&) { return 0; }
  static std::optional<Dims4> ActivationInput(const DropoutDesc&) { return std::nullopt; }
  static std::optional<Shape> ReshapedInput(const DropoutDesc& d) { return d.dims.shape(); }
};

template <>
struct OpTraits<ConcatDesc>
    : NoTrainedTensors<ConcatDesc>, NoKernelCases<ConcatDesc>, NoFusedActivation<ConcatDesc> {
  static constexpr absl::string_view kKind = "concat";
  static constexpr absl::string_view kSample = "concat:mb2ih4iw4_ic3:5";
  static double ForwardFlops(const ConcatDesc&) { return 0; }
  static std::optional<Dims4> ActivationInput(const ConcatDesc&) { return std::nullopt; }
  static std::optional<Shape> ReshapedInput(const ConcatDesc&) { return std::nullopt; }
};

template <>
struct OpTraits<ChannelPadDesc> : NoTrainedTensors<ChannelPadDesc>,
                                  NoKernelCases<ChannelPadDesc>,
                                  NoFusedActivation<ChannelPadDesc> {
  static constexpr absl::string_view kKind = "chpad";
  static constexpr absl::string_view kSample = "chpad:mb2ic3ih4iw4_b1a2";
  static double ForwardFlops(const ChannelPadDesc&) { return 0; }
  static std::optional<Dims4> ActivationInput(const ChannelPadDesc&) { return std::nullopt; }
  static std::optional<Shape> ReshapedInput(const ChannelPadDesc&) { return std::nullopt; }
};

template <>
struct OpTraits<SpatialPadDesc> : NoTrainedTensors<SpatialPadDesc>,
                                  NoKernelCases<SpatialPadDesc>,
                                  NoFusedActivation<SpatialPadDesc> {
  static constexpr absl::string_view kKind = "spad";
  // Crops and pads on both axes, unequal sides.
  static constexpr absl::string_view kSample = "spad:mb2ic3ih5iw4_t-1b2l1r-2";
  static double ForwardFlops(const SpatialPadDesc&) { return 0; }
  static std::optional<Dims4> ActivationInput(const SpatialPadDesc&) { return std::nullopt; }
  static std::optional<Shape> ReshapedInput(const SpatialPadDesc&) { return std::nullopt; }
};

template <>
struct OpTraits<DropPathDesc>
    : NoTrainedTensors<DropPathDesc>, NoKernelCases<DropPathDesc>, NoFusedActivation<DropPathDesc> {
  static constexpr absl::string_view kKind = "droppath";
  // A fixed rate (no ramp), so every forward of a fresh kernel drops alike.
  static constexpr absl::string_view kSample = "droppath:mb6ic3ih2iw3_k0.5r0";
  static double ForwardFlops(const DropPathDesc&) { return 0; }
  static std::optional<Dims4> ActivationInput(const DropPathDesc&) { return std::nullopt; }
  static std::optional<Shape> ReshapedInput(const DropPathDesc& d) { return d.dims.shape(); }
};

template <>
struct OpTraits<ChannelMulDesc> : NoTrainedTensors<ChannelMulDesc>,
                                  NoKernelCases<ChannelMulDesc>,
                                  NoFusedActivation<ChannelMulDesc> {
  static constexpr absl::string_view kKind = "chmul";
  static constexpr absl::string_view kSample = "chmul:mb2ic3ih4iw5";
  static double ForwardFlops(const ChannelMulDesc& d) {
    return static_cast<double>(d.dims.elements());
  }
  static std::optional<Dims4> ActivationInput(const ChannelMulDesc&) { return std::nullopt; }
  // The inputs differ in shape: the kernels take x1 as (N,C,1,1) or (N,C).
  static std::optional<Shape> ReshapedInput(const ChannelMulDesc&) { return std::nullopt; }
};

template <>
struct OpTraits<LayerNormDesc> : NoKernelCases<LayerNormDesc>, NoFusedActivation<LayerNormDesc> {
  static constexpr absl::string_view kKind = "lnorm";
  static constexpr absl::string_view kSample = "lnorm:mb2ic5ih3iw4_eps1e-05";
  // {gamma, beta}, as PyTorch's LayerNorm starts them.
  static std::vector<Shape> Parameters(const LayerNormDesc& d) {
    return {Shape{d.dims.c}, Shape{d.dims.c}};
  }
  static ParamFact Init(const LayerNormDesc&, int index) {
    return {index == 0 ? ParamInit::kOne : ParamInit::kZero};
  }
  static std::vector<Shape> State(const LayerNormDesc&) { return {}; }
  static float StateStart(const LayerNormDesc&, int) { return 0; }
  // Not counted, as batch norm is not (the published figures count conv
  // and fc multiply-adds only).
  static double ForwardFlops(const LayerNormDesc&) { return 0; }
  static std::optional<Dims4> ActivationInput(const LayerNormDesc& d) { return d.dims; }
  static std::optional<Shape> ReshapedInput(const LayerNormDesc& d) { return d.dims.shape(); }
};

template <>
struct OpTraits<AddDesc> : NoTrainedTensors<AddDesc>, NoKernelCases<AddDesc> {
  static constexpr absl::string_view kKind = "add";
  static constexpr absl::string_view kSample = "add:mb2ic3ih4iw4";
  static double ForwardFlops(const AddDesc&) { return 0; }
  static std::optional<Dims4> ActivationInput(const AddDesc&) { return std::nullopt; }
  static std::optional<Shape> ReshapedInput(const AddDesc& d) { return d.dims.shape(); }
  static std::optional<AddDesc> WithActivation(const AddDesc& d, ActivationKind kind, PlanUse) {
    return op_traits_internal::WithActivationField(d, kind);
  }
};

template <>
struct OpTraits<SoftmaxXentDesc> : NoTrainedTensors<SoftmaxXentDesc>,
                                   NoKernelCases<SoftmaxXentDesc>,
                                   NoFusedActivation<SoftmaxXentDesc> {
  static constexpr absl::string_view kKind = "softmax_xent";
  static constexpr absl::string_view kSample = "softmax_xent:mb2ic5";
  static double ForwardFlops(const SoftmaxXentDesc&) { return 0; }
  static std::optional<Dims4> ActivationInput(const SoftmaxXentDesc&) { return std::nullopt; }
  static std::optional<Shape> ReshapedInput(const SoftmaxXentDesc&) { return std::nullopt; }
};

// A GEMM as an op: its cases are the gemm family's own sweep
// (bench/cases/kernel/gemm_cases.cc), not layer kernel cases.
template <>
struct OpTraits<GemmDesc> : NoTrainedTensors<GemmDesc>, NoFusedActivation<GemmDesc> {
  static constexpr absl::string_view kKind = "gemm";
  static constexpr absl::string_view kSample = "gemm:m4n5k6";
  static double ForwardFlops(const GemmDesc& d) { return d.Flops(); }
  static double PassBytes(const GemmDesc&, OpPass, DType) { return 0; }  // compute-bound
  static BenchFact Bench(const GemmDesc&) { return {}; }  // the gemm family's own sweep
  static std::optional<Dims4> ActivationInput(const GemmDesc&) { return std::nullopt; }
  static std::optional<Shape> ReshapedInput(const GemmDesc&) { return std::nullopt; }
};

// Samples beyond each op's kSample, in OpSamples() after them: every
// activation kind but ReLU as the activation op, and fused where one fuses
// in training (ReLU6 in bn, add and the conv epilogue; SiLU, hard-swish and
// sigmoid in batch norm, whose backward recomputes the pre-activation from
// x; the other ops fuse those kinds in forward-only kernels alone, tested
// apart), so the tests that iterate OpSamples() cover each kind's
// arithmetic.
inline constexpr std::array<absl::string_view, 13> kActivationSamples = {
    "relu:mb2ic3ih4iw4_relu6",
    "bn:mb2ic3ih4iw4_eps0.001mom0.997_relu6",
    "add:mb2ic3ih4iw4_relu6",
    "conv:mb2_ic3oc4_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1_relu6",
    "relu:mb2ic3ih4iw4_sigmoid",
    "relu:mb2ic3ih4iw4_silu",
    "relu:mb2ic3ih4iw4_hardsigmoid",
    "relu:mb2ic3ih4iw4_hardswish",
    "relu:mb2ic3ih4iw4_gelu",
    "relu:mb2ic3ih4iw4_gelu_tanh",
    "bn:mb2ic3ih4iw4_eps0.001mom0.997_silu",
    "bn:mb2ic3ih4iw4_eps0.001mom0.997_hardswish",
    "bn:mb2ic3ih4iw4_eps0.001mom0.997_sigmoid",
};

// ---- The facts of any op, each one visit through its traits. A templated
// form takes a descriptor type of its own (tests add a toy op this way).

template <typename T>
int64_t ParameterCountOf(const T& d) {
  int64_t count = 0;
  for (const Shape& shape : OpTraits<T>::Parameters(d)) count += shape.num_elements();
  return count;
}

template <typename F>
decltype(auto) VisitOpTraits(const OpDesc& op, F&& f) {
  return std::visit(
      [&](const auto& d) -> decltype(auto) {
        using T = std::decay_t<decltype(d)>;
        return f(d, OpTraits<T>{});
      },
      op);
}

// The kinds of a variant of descriptors, in its order, and parsing by kind
// (ParseOpDesc is ParseOpOf<OpDesc>): the alternative whose kKind is the
// text's prefix parses it; an unknown kind is an error listing the known.
template <typename Variant, size_t... I>
std::vector<absl::string_view> OpKindsOf(std::index_sequence<I...>) {
  return {OpTraits<std::variant_alternative_t<I, Variant>>::kKind...};
}
template <typename Variant>
std::vector<absl::string_view> OpKindsOf() {
  return OpKindsOf<Variant>(std::make_index_sequence<std::variant_size_v<Variant>>());
}

// Each alternative's kSample, in the variant's order (OpSamples() is
// OpSamplesOf<OpDesc>()).
template <typename Variant, size_t... I>
std::vector<absl::string_view> OpSamplesOf(std::index_sequence<I...>) {
  return {OpTraits<std::variant_alternative_t<I, Variant>>::kSample...};
}
template <typename Variant>
std::vector<absl::string_view> OpSamplesOf() {
  return OpSamplesOf<Variant>(std::make_index_sequence<std::variant_size_v<Variant>>());
}

template <typename Variant, size_t I = 0>
absl::StatusOr<Variant> ParseOpOf(absl::string_view text) {
  const absl::string_view kind = text.substr(0, text.find(':'));
  if constexpr (I == std::variant_size_v<Variant>) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad descriptor '", text, "': unknown op '", kind,
                     "' (known: ", absl::StrJoin(OpKindsOf<Variant>(), ", "), ")"));
  } else {
    using T = std::variant_alternative_t<I, Variant>;
    if (kind != OpTraits<T>::kKind) return ParseOpOf<Variant, I + 1>(text);
    absl::StatusOr<T> desc = T::Parse(text);
    if (!desc.ok()) return desc.status();
    return Variant(*std::move(desc));
  }
}

std::vector<Shape> ParameterShapes(const OpDesc& op);
int64_t ParameterCount(const OpDesc& op);
ParamFact ParameterInit(const OpDesc& op, int index);
std::vector<Shape> StateShapes(const OpDesc& op);
float StateStart(const OpDesc& op, int index);
double ForwardFlops(const OpDesc& op);
double PassBytes(const OpDesc& op, OpPass pass, DType dtype);
std::optional<Dims4> ActivationInput(const OpDesc& op);
std::optional<Shape> ReshapedInput(const OpDesc& op);
BenchFact BenchFacts(const OpDesc& op);
std::optional<OpDesc> WithActivation(const OpDesc& op, ActivationKind kind, PlanUse use);

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_OP_TRAITS_H_
