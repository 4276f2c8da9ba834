#include "tests/core/vector_add.h"

#include <cuda_runtime.h>

#include <string>

namespace cnnbench::testing {
namespace {
__global__ void VectorAddKernel(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
}  // namespace

absl::Status VectorAdd(const float* a, const float* b, float* c, int n) {
  VectorAddKernel<<<(n + 255) / 256, 256>>>(a, b, c, n);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess)
    return absl::InternalError(std::string("VectorAddKernel: ") + cudaGetErrorString(err));
  return absl::OkStatus();
}

}  // namespace cnnbench::testing
