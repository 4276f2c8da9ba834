// The activations: their kinds, their text form in descriptors, and the
// per-element forward and backward arithmetic every backend's own loops use
// (reference, the cuda kernels and their host tests), host-and-device inline.
// oneDNN runs its own eltwise algorithms for them (kernels/onednn/common.h
// ActivationAlgorithm), checked against these by every_op_test.
#ifndef CNNBENCH_KERNELS_ACTIVATION_H_
#define CNNBENCH_KERNELS_ACTIVATION_H_

#include <cmath>

#include "core/random.h"  // CNNBENCH_HOST_DEVICE

namespace cnnbench {

// kNone: no activation (a fused op without one). A new kind is added here,
// in the switches below (a missing case does not compile with -Werror=switch
// in the host and device builds) and in each backend (docs/architecture.md
// "Adding an activation").
//
// kSigmoid 1 / (1 + e^-x); kSilu x * sigmoid(x) (swish); kHardSigmoid
// relu6(x + 3) / 6 and kHardSwish x * relu6(x + 3) / 6 (MobileNetV3's, as
// torch.nn.Hardsigmoid/Hardswish); kGelu x * Phi(x) with the normal CDF
// (erf), kGeluTanh its tanh approximation (torch's approximate='tanh').
enum class ActivationKind {
  kNone,
  kRelu,
  kRelu6,
  kSigmoid,
  kSilu,
  kHardSigmoid,
  kHardSwish,
  kGelu,
  kGeluTanh,
  kCount
};

// The kind's suffix in a descriptor string: "" (none), "_relu", "_relu6",
// "_sigmoid", "_silu", "_hardsigmoid", "_hardswish", "_gelu", "_gelu_tanh".
// A fused op prints it after its other fields; the standalone activation op
// (relu:...) prints nothing for ReLU, so every ReLU string is unchanged.
constexpr const char* ActivationSuffix(ActivationKind kind) {
  switch (kind) {
    case ActivationKind::kNone:
    case ActivationKind::kCount:
      return "";
    case ActivationKind::kRelu:
      return "_relu";
    case ActivationKind::kRelu6:
      return "_relu6";
    case ActivationKind::kSigmoid:
      return "_sigmoid";
    case ActivationKind::kSilu:
      return "_silu";
    case ActivationKind::kHardSigmoid:
      return "_hardsigmoid";
    case ActivationKind::kHardSwish:
      return "_hardswish";
    case ActivationKind::kGelu:
      return "_gelu";
    case ActivationKind::kGeluTanh:
      return "_gelu_tanh";
  }
  return "";
}

// Whether f' is 0 or 1 everywhere and the same function of y as of x (ReLU,
// ReLU6): a fused op may keep y and mask dy by it (ActivationPasses,
// ActivationBackwardOfOutput). The other kinds' gradient needs x; their
// fused forms run forward only (a backend's Supports refuses them in
// training, so plans keep them as layers there).
CNNBENCH_HOST_DEVICE constexpr bool ActivationMasks(ActivationKind kind) {
  return kind == ActivationKind::kNone || kind == ActivationKind::kRelu ||
         kind == ActivationKind::kRelu6;
}

namespace activation_math {
// exp, erf and tanh on the host (std::) and in device code (CUDA's
// overloads), for float and double.
template <typename T>
CNNBENCH_HOST_DEVICE inline T Exp(T x) {
#if defined(__CUDA_ARCH__)
  return exp(x);
#else
  return std::exp(x);
#endif
}
template <typename T>
CNNBENCH_HOST_DEVICE inline T Erf(T x) {
#if defined(__CUDA_ARCH__)
  return erf(x);
#else
  return std::erf(x);
#endif
}
template <typename T>
CNNBENCH_HOST_DEVICE inline T Tanh(T x) {
#if defined(__CUDA_ARCH__)
  return tanh(x);
#else
  return std::tanh(x);
#endif
}
template <typename T>
CNNBENCH_HOST_DEVICE inline T Sigmoid(T x) {
  return T(1) / (T(1) + Exp(-x));
}
template <typename T>
CNNBENCH_HOST_DEVICE inline T Relu6(T x) {
  return x > T(0) ? (x < T(6) ? x : T(6)) : T(0);
}
// The normal density and distribution at x (GELU's Phi and its derivative).
template <typename T>
CNNBENCH_HOST_DEVICE inline T NormalPdf(T x) {
  return T(0.3989422804014327) * Exp(T(-0.5) * x * x);
}
template <typename T>
CNNBENCH_HOST_DEVICE inline T NormalCdf(T x) {
  return T(0.5) * (T(1) + Erf(x * T(0.7071067811865476)));
}
// GELU's tanh approximation: u = sqrt(2 / pi) * (x + 0.044715 x^3).
constexpr double kGeluTanhScale = 0.7978845608028654;
constexpr double kGeluTanhCubic = 0.044715;
}  // namespace activation_math

// y = f(x). NaN maps to 0, as max(x, 0) in the reference always did.
template <typename T>
CNNBENCH_HOST_DEVICE inline T ActivationForward(ActivationKind kind, T x) {
  switch (kind) {
    case ActivationKind::kNone:
    case ActivationKind::kCount:
      return x;
    case ActivationKind::kRelu:
      return x > T(0) ? x : T(0);
    case ActivationKind::kRelu6:
      return activation_math::Relu6(x);
    case ActivationKind::kSigmoid:
      return activation_math::Sigmoid(x);
    case ActivationKind::kSilu:
      return x * activation_math::Sigmoid(x);
    case ActivationKind::kHardSigmoid:
      return activation_math::Relu6(x + T(3)) / T(6);
    case ActivationKind::kHardSwish:
      return x * activation_math::Relu6(x + T(3)) / T(6);
    case ActivationKind::kGelu:
      return x * activation_math::NormalCdf(x);
    case ActivationKind::kGeluTanh: {
      const T u =
          T(activation_math::kGeluTanhScale) * (x + T(activation_math::kGeluTanhCubic) * x * x * x);
      return T(0.5) * x * (T(1) + activation_math::Tanh(u));
    }
  }
  return x;
}

// f'(x) for every kind (ReLU and ReLU6: 1 where ActivationPasses, else 0),
// at the kinks as torch's backward: hard-sigmoid 1/6 for -3 < x < 3, else
// 0; hard-swish 0 below -3, (2x + 3) / 6 on [-3, 3], 1 above.
template <typename T>
CNNBENCH_HOST_DEVICE inline T ActivationDerivative(ActivationKind kind, T x) {
  switch (kind) {
    case ActivationKind::kNone:
    case ActivationKind::kCount:
      return T(1);
    case ActivationKind::kRelu:
      return x > T(0) ? T(1) : T(0);
    case ActivationKind::kRelu6:
      return x > T(0) && x < T(6) ? T(1) : T(0);
    case ActivationKind::kSigmoid: {
      const T s = activation_math::Sigmoid(x);
      return s * (T(1) - s);
    }
    case ActivationKind::kSilu: {
      const T s = activation_math::Sigmoid(x);
      return s * (T(1) + x * (T(1) - s));
    }
    case ActivationKind::kHardSigmoid:
      return x > T(-3) && x < T(3) ? T(1) / T(6) : T(0);
    case ActivationKind::kHardSwish:
      return x < T(-3) ? T(0) : (x <= T(3) ? (T(2) * x + T(3)) / T(6) : T(1));
    case ActivationKind::kGelu:
      return activation_math::NormalCdf(x) + x * activation_math::NormalPdf(x);
    case ActivationKind::kGeluTanh: {
      const T x2 = x * x;
      const T u =
          T(activation_math::kGeluTanhScale) * (x + T(activation_math::kGeluTanhCubic) * x2 * x);
      const T t = activation_math::Tanh(u);
      const T du =
          T(activation_math::kGeluTanhScale) * (T(1) + T(3 * activation_math::kGeluTanhCubic) * x2);
      return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * du;
    }
  }
  return T(1);
}

// Whether dy passes through at input x: for the masking kinds f'(x) is 1
// (ReLU: x > 0; ReLU6: 0 < x < 6, so 0 at both clips); for the others,
// whether f'(x) is not 0 (their gradient is ActivationBackward's product).
template <typename T>
CNNBENCH_HOST_DEVICE inline bool ActivationPasses(ActivationKind kind, T x) {
  switch (kind) {
    case ActivationKind::kNone:
    case ActivationKind::kCount:
      return true;
    case ActivationKind::kRelu:
      return x > T(0);
    case ActivationKind::kRelu6:
      return x > T(0) && x < T(6);
    case ActivationKind::kSigmoid:
    case ActivationKind::kSilu:
    case ActivationKind::kHardSigmoid:
    case ActivationKind::kHardSwish:
    case ActivationKind::kGelu:
    case ActivationKind::kGeluTanh:
      return ActivationDerivative(kind, x) != T(0);
  }
  return true;
}

// dx = dy * f'(x) (a masking kind: dy or 0, so a masked NaN gives 0).
template <typename T>
CNNBENCH_HOST_DEVICE inline T ActivationBackward(ActivationKind kind, T x, T dy) {
  if (ActivationMasks(kind)) return ActivationPasses(kind, x) ? dy : T(0);
  return dy * ActivationDerivative(kind, x);
}

// dx = dy * f'(x) from the output y = f(x): what a fused op keeps, for the
// masking kinds only (ActivationMasks): for ReLU and ReLU6 the mask is the
// same on y as on x (y in (0, 6) exactly when x is). The other kinds'
// fused forms are not run in training.
template <typename T>
CNNBENCH_HOST_DEVICE inline T ActivationBackwardOfOutput(ActivationKind kind, T y, T dy) {
  return ActivationPasses(kind, y) ? dy : T(0);
}

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ACTIVATION_H_
