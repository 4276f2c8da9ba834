// What every .cu file of the cuda backend shares: launch geometry for
// grid-stride loops, and reading/writing one element of any Elem type
// through fp32. Device code only (included by .cu files).
#ifndef CNNBENCH_KERNELS_CUDA_ELEM_ACCESS_CUH_
#define CNNBENCH_KERNELS_CUDA_ELEM_ACCESS_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/device_kernels.h"

namespace cnnbench::cuda {

constexpr int kThreads = 256;

// Blocks for `count` elements at kThreads each, capped (the loops stride).
inline int BlocksFor(int64_t count) {
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > 65535 * 8 ? 65535 * 8 : blocks));
}

__device__ inline float LoadAs(const void* p, Elem t, int64_t i) {
  switch (t) {
    case Elem::kF32: return static_cast<const float*>(p)[i];
    case Elem::kF16: return __half2float(static_cast<const __half*>(p)[i]);
    case Elem::kBF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case Elem::kI32: return static_cast<float>(static_cast<const int32_t*>(p)[i]);
  }
  return 0.0f;
}

__device__ inline void StoreAs(void* p, Elem t, int64_t i, float v) {
  switch (t) {
    case Elem::kF32: static_cast<float*>(p)[i] = v; break;
    case Elem::kF16: static_cast<__half*>(p)[i] = __float2half_rn(v); break;
    case Elem::kBF16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v); break;
    case Elem::kI32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
  }
}

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_ELEM_ACCESS_CUH_
