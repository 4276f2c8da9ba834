// Launchers of the small CUDA kernels the cuda backend needs where no library
// call fits: casts, layout transposes, gradient sums, fills of typed values,
// the fused SGD update. Host-callable; each enqueues on `stream` and returns
// the launch's error (never synchronises). Included by .cu and .cc files, so
// it uses only CUDA's and the standard library's headers and
// kernels/activation.h (host-and-device arithmetic).
#ifndef CNNBENCH_KERNELS_CUDA_DEVICE_KERNELS_H_
#define CNNBENCH_KERNELS_CUDA_DEVICE_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/activation.h"

namespace cnnbench::cuda {

// Element types the device kernels read and write.
enum class Elem { kF32, kF16, kBF16, kI32 };

// dst[i] = convert(src[i]) for i < count (round to nearest even).
cudaError_t LaunchCast(const void* src, Elem from, void* dst, Elem to, int64_t count,
                       cudaStream_t stream);
// dst[i] = convert(src[i] * *scale) from fp32 (the scaled loss gradient).
cudaError_t LaunchScaledCast(const float* src, const float* scale, void* dst, Elem to,
                             int64_t count, cudaStream_t stream);

// (N,C,H,W) <-> (N,H,W,C) with an optional type change.
cudaError_t LaunchNchwToNhwc(const void* src, Elem from, void* dst, Elem to, int64_t n, int64_t c,
                             int64_t h, int64_t w, cudaStream_t stream);
cudaError_t LaunchNhwcToNchw(const void* src, Elem from, void* dst, Elem to, int64_t n, int64_t c,
                             int64_t h, int64_t w, cudaStream_t stream);

// dst = sum of srcs[0..count) elementwise, accumulated in fp32 and rounded
// once; dst may be srcs[0]. At most kMaxAddN sources.
constexpr int kMaxAddN = 16;
struct AddNSources {
  const void* ptr[kMaxAddN];
};
cudaError_t LaunchAddN(const AddNSources& srcs, int count, void* dst, Elem type, int64_t elements,
                       cudaStream_t stream);
// The same sum with the activation `kind` after it (the fused add's
// forward): dst = f(sum) (ReLU: max(sum, 0); ReLU6: clipped to [0, 6]).
cudaError_t LaunchAddNActivation(ActivationKind kind, const AddNSources& srcs, int count,
                                 void* dst, Elem type, int64_t elements, cudaStream_t stream);
// The sum masked by the forward's output `mask` (the fused activation's
// backward: dst = sum where dy passes at y — ReLU: y > 0; ReLU6: 0 < y < 6,
// ActivationPasses — else 0). dst may be srcs[0], not mask.
cudaError_t LaunchMaskedAddN(ActivationKind kind, const AddNSources& srcs, int count,
                             const void* mask, void* dst, Elem type, int64_t elements,
                             cudaStream_t stream);

// The activation op's forward y = f(x) and backward dx = dy * f'(x), in
// `type`, each element through kernels/activation.h's arithmetic in fp32.
cudaError_t LaunchActivationForward(ActivationKind kind, const void* x, void* y, Elem type,
                                    int64_t count, cudaStream_t stream);
cudaError_t LaunchActivationBackward(ActivationKind kind, const void* x, const void* dy, void* dx,
                                     Elem type, int64_t count, cudaStream_t stream);

// The fused SGD-with-momentum update over `count` fp32 values, as the CPU
// backends compute it (each element in double): g' = g/s + wd*w;
// v = m*v + g'; w -= lr*v (m = 0: w -= lr*g', v unused). s = *loss_scale or
// 1. With `overflow`: it is set to 1 and the update skipped when any
// gradient is not finite, else set to 0. With `step`: incremented once.
// With `good_steps` (and loss_scale, overflow): then AdjustLossScale
// (kernels/loss_scale.h) in a one-thread kernel.
cudaError_t LaunchSgdUpdate(float* w, const float* g, float* v, int64_t count, double learning_rate,
                            double momentum, double weight_decay, float* loss_scale,
                            int32_t* overflow, uint64_t* step, int32_t* good_steps,
                            int32_t growth_interval, cudaStream_t stream);

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_DEVICE_KERNELS_H_
