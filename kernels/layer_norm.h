// Layer normalisation's arithmetic (LayerNormDesc), in one place for every
// backend: one position's statistics over the channels, its outputs, and
// the gradient reaching its inputs, each over accessors `x(c)`, `dy(c)`
// and `gamma(c)` so a backend reads its own layout. Host-and-device inline:
// the cuda kernels run the very arithmetic the host tests check. `T` is
// the accumulation type (double in the reference, float elsewhere).
#ifndef CNNBENCH_KERNELS_LAYER_NORM_H_
#define CNNBENCH_KERNELS_LAYER_NORM_H_

#include <cmath>
#include <cstdint>

#include "core/random.h"  // CNNBENCH_HOST_DEVICE

namespace cnnbench {
namespace layer_norm_math {
template <typename T>
CNNBENCH_HOST_DEVICE inline T Sqrt(T v) {
#if defined(__CUDA_ARCH__)
  return sqrt(v);
#else
  return std::sqrt(v);
#endif
}
}  // namespace layer_norm_math

// The mean over the `channels` values x(0..C-1) and 1/sqrt(var + epsilon)
// with the biased variance, in two passes (no cancellation).
template <typename T, typename X>
CNNBENCH_HOST_DEVICE inline void LayerNormStatistics(int64_t channels, T epsilon, const X& x,
                                                     T* mean, T* rstd) {
  T sum = 0;
  for (int64_t c = 0; c < channels; ++c) sum += static_cast<T>(x(c));
  const T m = sum / static_cast<T>(channels);
  T squares = 0;
  for (int64_t c = 0; c < channels; ++c) {
    const T deviation = static_cast<T>(x(c)) - m;
    squares += deviation * deviation;
  }
  *mean = m;
  *rstd = T(1) / layer_norm_math::Sqrt(squares / static_cast<T>(channels) + epsilon);
}

// y(c) = (x(c) - mean) * rstd * gamma(c) + beta(c).
template <typename T>
CNNBENCH_HOST_DEVICE inline T LayerNormOutput(T x, T mean, T rstd, T gamma, T beta) {
  return (x - mean) * rstd * gamma + beta;
}

// The two sums over the channels that dx needs, with g = dy * gamma and
// xhat = (x - mean) * rstd: the sum of g and the sum of g * xhat.
template <typename T, typename X, typename Dy, typename Gamma>
CNNBENCH_HOST_DEVICE inline void LayerNormGradientSums(int64_t channels, T mean, T rstd,
                                                       const X& x, const Dy& dy,
                                                       const Gamma& gamma, T* sum_g,
                                                       T* sum_g_xhat) {
  T a = 0, b = 0;
  for (int64_t c = 0; c < channels; ++c) {
    const T g = static_cast<T>(dy(c)) * static_cast<T>(gamma(c));
    a += g;
    b += g * (static_cast<T>(x(c)) - mean) * rstd;
  }
  *sum_g = a;
  *sum_g_xhat = b;
}

// dx(c) = rstd * (g - mean of g - xhat * mean of g * xhat).
template <typename T>
CNNBENCH_HOST_DEVICE inline T LayerNormInputGradient(int64_t channels, T x, T dy, T gamma, T mean,
                                                     T rstd, T sum_g, T sum_g_xhat) {
  const T xhat = (x - mean) * rstd;
  const T n = static_cast<T>(channels);
  return rstd * (dy * gamma - sum_g / n - xhat * sum_g_xhat / n);
}

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_LAYER_NORM_H_
