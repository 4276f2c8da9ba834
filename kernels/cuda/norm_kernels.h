// Launchers of the cuda layer norm kernels (arithmetic in
// kernels/layer_norm.h, host-tested). Host-callable; each enqueues on
// `stream` and returns the launch's error (never synchronises).
#ifndef CNNBENCH_KERNELS_CUDA_NORM_KERNELS_H_
#define CNNBENCH_KERNELS_CUDA_NORM_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/device_kernels.h"
#include "kernels/cuda/op_math.h"

namespace cnnbench::cuda {

// y over every position (n, h, w) of `g`, one thread per position; mean and
// rstd (N*H*W floats each, position order) receive its statistics.
cudaError_t LaunchLayerNormForward(const ActivationGeometry& g, float epsilon, const void* x,
                                   const float* gamma, const float* beta, void* y, float* mean,
                                   float* rstd, Elem type, cudaStream_t stream);
// dx, one thread per position.
cudaError_t LaunchLayerNormInputGradient(const ActivationGeometry& g, const void* x,
                                         const void* dy, const float* gamma, const float* mean,
                                         const float* rstd, void* dx, Elem type,
                                         cudaStream_t stream);
// dgamma and dbeta, one thread per channel over every position (fp32
// sums): correct, not fast.
cudaError_t LaunchLayerNormParamGradients(const ActivationGeometry& g, const void* x,
                                          const void* dy, const float* mean, const float* rstd,
                                          float* dgamma, float* dbeta, Elem type,
                                          cudaStream_t stream);

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_NORM_KERNELS_H_
