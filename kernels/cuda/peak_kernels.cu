#include "kernels/cuda/peak_kernels.h"

#include "kernels/cuda/peak_math.h"

namespace cnnbench::cuda {
namespace {

__global__ void PeakFma(float* out, int64_t iterations) {
  float x[kPeakChains];
#pragma unroll
  for (int j = 0; j < kPeakChains; ++j) x[j] = PeakChainStart(j);
  // Unrolled by 4 as well: the loop's own compare and branch would
  // otherwise take issue slots from the FMAs.
#pragma unroll 4
  for (int64_t i = 0; i < iterations; ++i) {
#pragma unroll
    for (int j = 0; j < kPeakChains; ++j) x[j] = fmaf(x[j], kPeakMul, kPeakAdd);
  }
  float sum = 0;
#pragma unroll
  for (int j = 0; j < kPeakChains; ++j) sum += x[j];
  out[static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x] = sum;
}

}  // namespace

cudaError_t LaunchPeakFma(float* out, int64_t iterations, int blocks, int threads,
                          cudaStream_t stream) {
  PeakFma<<<blocks, threads, 0, stream>>>(out, iterations);
  return cudaGetLastError();
}

}  // namespace cnnbench::cuda
