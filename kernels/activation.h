// The activations: their kinds, their text form in descriptors, and the
// per-element forward and backward arithmetic every backend's own loops use
// (reference, the cuda kernels and their host tests), host-and-device inline.
// oneDNN runs its own eltwise algorithms for them (kernels/onednn/common.h
// ActivationAlgorithm), checked against these by every_op_test.
#ifndef CNNBENCH_KERNELS_ACTIVATION_H_
#define CNNBENCH_KERNELS_ACTIVATION_H_

#include "core/random.h"  // CNNBENCH_HOST_DEVICE

namespace cnnbench {

// kNone: no activation (a fused op without one). A new kind is added here,
// in the switches below (a missing case does not compile with -Werror=switch
// in the host and device builds) and in each backend (docs/architecture.md
// "Adding an activation").
enum class ActivationKind { kNone, kRelu, kRelu6, kCount };

// The kind's suffix in a descriptor string: "" (none), "_relu", "_relu6".
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
  }
  return "";
}

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
      return x > T(0) ? (x < T(6) ? x : T(6)) : T(0);
  }
  return x;
}

// Whether dy passes through at input x: f'(x) is 1 or 0 for the kinds so far
// (ReLU: x > 0; ReLU6: 0 < x < 6, so 0 at both clips).
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
  }
  return true;
}

// dx = dy * f'(x).
template <typename T>
CNNBENCH_HOST_DEVICE inline T ActivationBackward(ActivationKind kind, T x, T dy) {
  return ActivationPasses(kind, x) ? dy : T(0);
}

// dx = dy * f'(x) from the output y = f(x): what a fused op keeps. For ReLU
// and ReLU6 the mask is the same on y as on x (y in (0, 6) exactly when x
// is); a kind whose derivative is not a function of y (SiLU, GELU) must keep
// x instead, and fails the fused-equals-unfused tests until it does.
template <typename T>
CNNBENCH_HOST_DEVICE inline T ActivationBackwardOfOutput(ActivationKind kind, T y, T dy) {
  return ActivationPasses(kind, y) ? dy : T(0);
}

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ACTIVATION_H_
