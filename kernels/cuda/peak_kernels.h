// The register-only FMA loop of the GPU's fp32 peak (peak_math.h's
// arithmetic): `blocks` x `threads` threads, each running `iterations` of
// kPeakChains independent fused multiply-adds and writing its chains' sum to
// out[thread]. Enqueued on `stream`; returns the launch's error.
#ifndef CNNBENCH_KERNELS_CUDA_PEAK_KERNELS_H_
#define CNNBENCH_KERNELS_CUDA_PEAK_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace cnnbench::cuda {

cudaError_t LaunchPeakFma(float* out, int64_t iterations, int blocks, int threads,
                          cudaStream_t stream);

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_PEAK_KERNELS_H_
