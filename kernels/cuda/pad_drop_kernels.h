// Launchers of the cuda spatial pad and drop-path kernels (arithmetic in
// pad_drop_math.h). Host-callable; each enqueues on `stream` and returns the
// launch's error (never synchronises).
#ifndef CNNBENCH_KERNELS_CUDA_PAD_DROP_KERNELS_H_
#define CNNBENCH_KERNELS_CUDA_PAD_DROP_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/device_kernels.h"
#include "kernels/channel_mul.h"
#include "kernels/cuda/pad_drop_math.h"

namespace cnnbench::cuda {

// Every element of `to` from `from` (ShiftSource), zeros outside.
cudaError_t LaunchShiftedCopy(const ShiftGeometry& g, const void* from, void* to, Elem type,
                              cudaStream_t stream);

// scale[n] for the `examples` examples: DropPathScale under the key
// DropoutKey(seed, node, step) and p = DropPathKeepAt(keep, ramp_steps,
// step), with step = *step, or `fallback_step` when `step` is null.
cudaError_t LaunchDropPathScales(int64_t examples, uint64_t first_example, double keep,
                                 int64_t ramp_steps, uint64_t seed, uint64_t node,
                                 const uint64_t* step, uint64_t fallback_step, double* scale,
                                 cudaStream_t stream);
// out = in * scale[example] over every stored element of `g`.
cudaError_t LaunchDropPathApply(const ActivationGeometry& g, const void* in, const double* scale,
                                void* out, Elem type, cudaStream_t stream);

// The channel multiply: out = in * scale[ChannelMulScaleIndex] over every
// element of `g` (scale: N*C values of `type`).
cudaError_t LaunchChannelMul(const ActivationGeometry& g, const void* in, const void* scale,
                             void* out, Elem type, cudaStream_t stream);
// ds[n * C + c] = the sum over (h, w) of dy * x (fp32 accumulation), one
// thread per (n, c).
cudaError_t LaunchChannelMulScaleGradient(const ActivationGeometry& g, const void* dy,
                                          const void* x, void* ds, Elem type,
                                          cudaStream_t stream);

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_PAD_DROP_KERNELS_H_
