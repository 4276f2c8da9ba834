// The convolution's epilogue and bias gradient as two small CUDA kernels,
// outside cuDNN's graphs: y = f(y + b) over the channels (f the fused
// activation, kNone: none), and db = the sum of dy over (N,H,W). The bias
// is fp32 for every precision; y and dy are in the activation type and
// layout (NCHW or NHWC). Host-callable; each enqueues on `stream` and
// returns the launch's error.
#ifndef CNNBENCH_KERNELS_CUDA_CONV_BIAS_H_
#define CNNBENCH_KERNELS_CUDA_CONV_BIAS_H_

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/device_kernels.h"
#include "kernels/cuda/op_math.h"

namespace cnnbench::cuda {

// y(n,k,p,q) = f(y(n,k,p,q) + bias(k)) (no bias: null; f the activation,
// ConvDesc::activation, kNone: none; op_math.h's ConvEpilogueValue), in one pass; y is (N,K,P,Q) stored
// NCHW (nhwc = false) or NHWC; `plane` = P*Q. Computes in fp32 and rounds
// once.
cudaError_t LaunchConvEpilogue(void* y, Elem type, bool nhwc, const float* bias,
                               ActivationKind activation, int64_t n, int64_t k, int64_t plane,
                               cudaStream_t stream);

// dbias(k) = sum over n, p, q of dy(n,k,p,q), in fp32; deterministic (one
// block per channel, a fixed reduction order).
cudaError_t LaunchConvBiasGrad(const void* dy, Elem type, bool nhwc, float* dbias, int64_t n,
                               int64_t k, int64_t plane, cudaStream_t stream);

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_CONV_BIAS_H_
