// The cuda backend's small kernels (see device_kernels.h). Grid-stride loops
// over 64-bit indices; fp16/bf16 go through fp32.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda/device_kernels.h"

namespace cnnbench::cuda {
namespace {

constexpr int kThreads = 256;

int BlocksFor(int64_t count) {
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > 65535 * 8 ? 65535 * 8 : blocks));
}

__device__ float Load(const void* p, Elem t, int64_t i) {
  switch (t) {
    case Elem::kF32: return static_cast<const float*>(p)[i];
    case Elem::kF16: return __half2float(static_cast<const __half*>(p)[i]);
    case Elem::kBF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case Elem::kI32: return static_cast<float>(static_cast<const int32_t*>(p)[i]);
  }
  return 0.0f;
}

__device__ void Store(void* p, Elem t, int64_t i, float v) {
  switch (t) {
    case Elem::kF32: static_cast<float*>(p)[i] = v; break;
    case Elem::kF16: static_cast<__half*>(p)[i] = __float2half_rn(v); break;
    case Elem::kBF16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v); break;
    case Elem::kI32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
  }
}

__global__ void CastKernel(const void* src, Elem from, void* dst, Elem to, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    if (from == Elem::kI32 && to == Elem::kI32) {
      static_cast<int32_t*>(dst)[i] = static_cast<const int32_t*>(src)[i];
    } else {
      Store(dst, to, i, Load(src, from, i));
    }
  }
}

// One element per thread of the destination; `to_nhwc` says which way.
__global__ void TransposeKernel(const void* src, Elem from, void* dst, Elem to, int64_t n,
                                int64_t c, int64_t h, int64_t w, bool to_nhwc) {
  const int64_t count = n * c * h * w;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    // i indexes NCHW order.
    const int64_t x = i % w, y = (i / w) % h, ch = (i / (w * h)) % c, b = i / (w * h * c);
    const int64_t nhwc = ((b * h + y) * w + x) * c + ch;
    if (to_nhwc) {
      Store(dst, to, nhwc, Load(src, from, i));
    } else {
      Store(dst, to, i, Load(src, from, nhwc));
    }
  }
}

__global__ void AddNKernel(AddNSources srcs, int count, void* dst, Elem type, int64_t elements) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < elements;
       i += int64_t{gridDim.x} * blockDim.x) {
    float sum = 0.0f;
    for (int k = 0; k < count; ++k) sum += Load(srcs.ptr[k], type, i);
    Store(dst, type, i, sum);
  }
}

__global__ void ReluForwardKernel(const void* x, void* y, Elem type, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float v = Load(x, type, i);
    Store(y, type, i, v > 0.0f ? v : 0.0f);
  }
}

__global__ void ReluBackwardKernel(const void* x, const void* dy, void* dx, Elem type,
                                   int64_t count) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x)
    Store(dx, type, i, Load(x, type, i) > 0.0f ? Load(dy, type, i) : 0.0f);
}

__global__ void CheckFiniteKernel(const float* g, int64_t count, int32_t* overflow) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x)
    if (!isfinite(g[i])) *overflow = 1;  // racing writers all write 1
}

__global__ void SgdKernel(float* w, const float* g, float* v, int64_t count, double lr, double m,
                          double wd, const float* loss_scale, const int32_t* overflow) {
  if (overflow != nullptr && *overflow != 0) return;
  const double inverse_scale = loss_scale != nullptr ? 1.0 / static_cast<double>(*loss_scale) : 1.0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const double wi = w[i];
    const double gi = static_cast<double>(g[i]) * inverse_scale + wd * wi;
    double step = gi;
    if (m != 0.0) {
      step = m * static_cast<double>(v[i]) + gi;
      v[i] = static_cast<float>(step);
    }
    w[i] = static_cast<float>(wi - lr * step);
  }
}

__global__ void IncrementKernel(uint64_t* counter) { ++*counter; }

}  // namespace

cudaError_t LaunchCast(const void* src, Elem from, void* dst, Elem to, int64_t count,
                       cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  CastKernel<<<BlocksFor(count), kThreads, 0, stream>>>(src, from, dst, to, count);
  return cudaGetLastError();
}

cudaError_t LaunchNchwToNhwc(const void* src, Elem from, void* dst, Elem to, int64_t n,
                             int64_t c, int64_t h, int64_t w, cudaStream_t stream) {
  const int64_t count = n * c * h * w;
  if (count <= 0) return cudaSuccess;
  TransposeKernel<<<BlocksFor(count), kThreads, 0, stream>>>(src, from, dst, to, n, c, h, w,
                                                               true);
  return cudaGetLastError();
}

cudaError_t LaunchNhwcToNchw(const void* src, Elem from, void* dst, Elem to, int64_t n,
                             int64_t c, int64_t h, int64_t w, cudaStream_t stream) {
  const int64_t count = n * c * h * w;
  if (count <= 0) return cudaSuccess;
  TransposeKernel<<<BlocksFor(count), kThreads, 0, stream>>>(src, from, dst, to, n, c, h, w,
                                                               false);
  return cudaGetLastError();
}

cudaError_t LaunchAddN(const AddNSources& srcs, int count, void* dst, Elem type,
                       int64_t elements, cudaStream_t stream) {
  if (count < 1 || count > kMaxAddN) return cudaErrorInvalidValue;
  if (elements <= 0) return cudaSuccess;
  AddNKernel<<<BlocksFor(elements), kThreads, 0, stream>>>(srcs, count, dst, type, elements);
  return cudaGetLastError();
}

cudaError_t LaunchReluForward(const void* x, void* y, Elem type, int64_t count,
                              cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  ReluForwardKernel<<<BlocksFor(count), kThreads, 0, stream>>>(x, y, type, count);
  return cudaGetLastError();
}

cudaError_t LaunchReluBackward(const void* x, const void* dy, void* dx, Elem type,
                               int64_t count, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  ReluBackwardKernel<<<BlocksFor(count), kThreads, 0, stream>>>(x, dy, dx, type, count);
  return cudaGetLastError();
}

cudaError_t LaunchSgdUpdate(float* w, const float* g, float* v, int64_t count,
                            double learning_rate, double momentum, double weight_decay,
                            const float* loss_scale, int32_t* overflow, uint64_t* step,
                            cudaStream_t stream) {
  if (step != nullptr) {
    IncrementKernel<<<1, 1, 0, stream>>>(step);
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  }
  if (count <= 0) return cudaSuccess;
  if (overflow != nullptr) {
    if (cudaError_t err = cudaMemsetAsync(overflow, 0, sizeof(int32_t), stream);
        err != cudaSuccess)
      return err;
    CheckFiniteKernel<<<BlocksFor(count), kThreads, 0, stream>>>(g, count, overflow);
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  }
  SgdKernel<<<BlocksFor(count), kThreads, 0, stream>>>(w, g, v, count, learning_rate, momentum,
                                                       weight_decay, loss_scale, overflow);
  return cudaGetLastError();
}

}  // namespace cnnbench::cuda
