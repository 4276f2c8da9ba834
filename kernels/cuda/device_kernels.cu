// The cuda backend's small kernels (see device_kernels.h). Grid-stride loops
// over 64-bit indices; fp16/bf16 go through fp32.
#include "kernels/cuda/device_kernels.h"
#include "kernels/cuda/elem_access.cuh"
#include "kernels/loss_scale.h"

namespace cnnbench::cuda {
namespace {

__global__ void CastKernel(const void* src, Elem from, void* dst, Elem to, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    if (from == Elem::kI32 && to == Elem::kI32) {
      static_cast<int32_t*>(dst)[i] = static_cast<const int32_t*>(src)[i];
    } else {
      StoreAs(dst, to, i, LoadAs(src, from, i));
    }
  }
}

__global__ void ScaledCastKernel(const float* src, const float* scale, void* dst, Elem to,
                                 int64_t count) {
  const float s = *scale;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x)
    StoreAs(dst, to, i, src[i] * s);
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
      StoreAs(dst, to, nhwc, LoadAs(src, from, i));
    } else {
      StoreAs(dst, to, i, LoadAs(src, from, nhwc));
    }
  }
}

// dst = f(sum of the sources) for the activation f (kNone: the sum); with
// `mask` the sum times f'(mask) first (kernels/activation.h
// ActivationBackward: for ReLU and ReLU6 the sum where f' passes, else 0).
struct SumActivations {
  ActivationKind mask = ActivationKind::kRelu;    // how `mask` gates the sum
  ActivationKind output = ActivationKind::kNone;  // f applied to the sum
};
__global__ void AddNKernel(const __grid_constant__ AddNSources srcs, int count, const void* mask,
                           SumActivations act, void* dst, Elem type, int64_t elements) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < elements;
       i += int64_t{gridDim.x} * blockDim.x) {
    float sum = 0.0f;
    for (int k = 0; k < count; ++k) sum += LoadAs(srcs.ptr[k], type, i);
    if (mask != nullptr) sum = ActivationBackward(act.mask, LoadAs(mask, type, i), sum);
    sum = ActivationForward(act.output, sum);
    StoreAs(dst, type, i, sum);
  }
}

// The same arithmetic on 16 bytes per thread and access (kN elements of
// T, converted through fp32), over `vectors` whole vectors; the last
// elements - vectors * kN are done one by one by the first thread.
template <typename T>
__device__ inline float ToFloat(T v) {
  return static_cast<float>(v);
}
template <>
__device__ inline float ToFloat(__half v) {
  return __half2float(v);
}
template <>
__device__ inline float ToFloat(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <typename T>
__device__ inline T FromFloat(float v) {
  return static_cast<T>(v);
}
template <>
__device__ inline __half FromFloat(float v) {
  return __float2half_rn(v);
}
template <>
__device__ inline __nv_bfloat16 FromFloat(float v) {
  return __float2bfloat16_rn(v);
}

template <typename T>
__device__ inline float SumAt(const AddNSources& srcs, int count, const T* mask, SumActivations act,
                              int64_t i) {
  float sum = 0.0f;
  for (int k = 0; k < count; ++k) sum += ToFloat(static_cast<const T*>(srcs.ptr[k])[i]);
  if (mask != nullptr) sum = ActivationBackward(act.mask, ToFloat(mask[i]), sum);
  return ActivationForward(act.output, sum);
}

template <typename T>
__global__ void AddNVectorKernel(const __grid_constant__ AddNSources srcs, int count, const T* mask,
                                 SumActivations act, T* dst, int64_t vectors, int64_t elements) {
  constexpr int kN = 16 / sizeof(T);
  union Pack {
    uint4 raw;
    T v[kN];
  };
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < vectors;
       i += int64_t{gridDim.x} * blockDim.x) {
    float sum[kN];
    Pack m;
    if (mask != nullptr) m.raw = reinterpret_cast<const uint4*>(mask)[i];
#pragma unroll
    for (int j = 0; j < kN; ++j) sum[j] = 0.0f;
    for (int k = 0; k < count; ++k) {
      Pack p;
      p.raw = reinterpret_cast<const uint4*>(srcs.ptr[k])[i];
#pragma unroll
      for (int j = 0; j < kN; ++j) sum[j] += ToFloat(p.v[j]);
    }
    Pack out;
#pragma unroll
    for (int j = 0; j < kN; ++j) {
      const float gated =
          mask != nullptr ? ActivationBackward(act.mask, ToFloat(m.v[j]), sum[j]) : sum[j];
      out.v[j] = FromFloat<T>(ActivationForward(act.output, gated));
    }
    reinterpret_cast<uint4*>(dst)[i] = out.raw;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (int64_t e = vectors * kN; e < elements; ++e)
      dst[e] = FromFloat<T>(SumAt(srcs, count, mask, act, e));
}

bool Aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <typename T>
void LaunchVector(const AddNSources& srcs, int count, const void* mask, SumActivations act,
                  void* dst, int64_t elements, cudaStream_t stream) {
  const int64_t vectors = elements / (16 / static_cast<int64_t>(sizeof(T)));
  AddNVectorKernel<T><<<BlocksFor(vectors > 0 ? vectors : 1), kThreads, 0, stream>>>(
      srcs, count, static_cast<const T*>(mask), act, static_cast<T*>(dst), vectors, elements);
}

cudaError_t LaunchSum(const AddNSources& srcs, int count, const void* mask, SumActivations act,
                      void* dst, Elem type, int64_t elements, cudaStream_t stream) {
  if (count < 1 || count > kMaxAddN) return cudaErrorInvalidValue;
  if (elements <= 0) return cudaSuccess;
  // 16-byte accesses when every pointer allows them (the executor's buffers
  // are 256-byte aligned); one element per access otherwise.
  bool aligned = Aligned16(dst) && (mask == nullptr || Aligned16(mask));
  for (int k = 0; k < count; ++k) aligned = aligned && Aligned16(srcs.ptr[k]);
  if (aligned && type == Elem::kF32) {
    LaunchVector<float>(srcs, count, mask, act, dst, elements, stream);
  } else if (aligned && type == Elem::kF16) {
    LaunchVector<__half>(srcs, count, mask, act, dst, elements, stream);
  } else if (aligned && type == Elem::kBF16) {
    LaunchVector<__nv_bfloat16>(srcs, count, mask, act, dst, elements, stream);
  } else {
    AddNKernel<<<BlocksFor(elements), kThreads, 0, stream>>>(srcs, count, mask, act, dst, type,
                                                             elements);
  }
  return cudaGetLastError();
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

__global__ void LossScaleKernel(const int32_t* overflow, int32_t growth_interval, float* scale,
                                int32_t* good_steps) {
  AdjustLossScale(*overflow != 0, growth_interval, scale, good_steps);
}

}  // namespace

cudaError_t LaunchCast(const void* src, Elem from, void* dst, Elem to, int64_t count,
                       cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  CastKernel<<<BlocksFor(count), kThreads, 0, stream>>>(src, from, dst, to, count);
  return cudaGetLastError();
}

cudaError_t LaunchNchwToNhwc(const void* src, Elem from, void* dst, Elem to, int64_t n, int64_t c,
                             int64_t h, int64_t w, cudaStream_t stream) {
  const int64_t count = n * c * h * w;
  if (count <= 0) return cudaSuccess;
  TransposeKernel<<<BlocksFor(count), kThreads, 0, stream>>>(src, from, dst, to, n, c, h, w, true);
  return cudaGetLastError();
}

cudaError_t LaunchNhwcToNchw(const void* src, Elem from, void* dst, Elem to, int64_t n, int64_t c,
                             int64_t h, int64_t w, cudaStream_t stream) {
  const int64_t count = n * c * h * w;
  if (count <= 0) return cudaSuccess;
  TransposeKernel<<<BlocksFor(count), kThreads, 0, stream>>>(src, from, dst, to, n, c, h, w, false);
  return cudaGetLastError();
}

cudaError_t LaunchAddN(const AddNSources& srcs, int count, void* dst, Elem type, int64_t elements,
                       cudaStream_t stream) {
  return LaunchSum(srcs, count, nullptr, {}, dst, type, elements, stream);
}

cudaError_t LaunchAddNActivation(ActivationKind kind, const AddNSources& srcs, int count, void* dst,
                                 Elem type, int64_t elements, cudaStream_t stream) {
  return LaunchSum(srcs, count, nullptr, {kind, kind}, dst, type, elements, stream);
}

cudaError_t LaunchMaskedAddN(ActivationKind kind, const AddNSources& srcs, int count,
                             const void* mask, void* dst, Elem type, int64_t elements,
                             cudaStream_t stream) {
  if (mask == nullptr || mask == dst) return cudaErrorInvalidValue;
  return LaunchSum(srcs, count, mask, {kind, ActivationKind::kNone}, dst, type, elements, stream);
}

cudaError_t LaunchActivationForward(ActivationKind kind, const void* x, void* y, Elem type,
                                    int64_t count, cudaStream_t stream) {
  AddNSources one{};
  one.ptr[0] = x;
  return LaunchSum(one, 1, nullptr, {kind, kind}, y, type, count, stream);
}

cudaError_t LaunchActivationBackward(ActivationKind kind, const void* x, const void* dy, void* dx,
                                     Elem type, int64_t count, cudaStream_t stream) {
  AddNSources one{};
  one.ptr[0] = dy;
  return LaunchSum(one, 1, x, {kind, ActivationKind::kNone}, dx, type, count, stream);
}

cudaError_t LaunchSgdUpdate(float* w, const float* g, float* v, int64_t count, double learning_rate,
                            double momentum, double weight_decay, float* loss_scale,
                            int32_t* overflow, uint64_t* step, int32_t* good_steps,
                            int32_t growth_interval, cudaStream_t stream) {
  if (step != nullptr) {
    IncrementKernel<<<1, 1, 0, stream>>>(step);
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  }
  if (count <= 0) return cudaSuccess;
  if (overflow != nullptr) {
    if (cudaError_t err = cudaMemsetAsync(overflow, 0, sizeof(int32_t), stream); err != cudaSuccess)
      return err;
    CheckFiniteKernel<<<BlocksFor(count), kThreads, 0, stream>>>(g, count, overflow);
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  }
  SgdKernel<<<BlocksFor(count), kThreads, 0, stream>>>(w, g, v, count, learning_rate, momentum,
                                                       weight_decay, loss_scale, overflow);
  if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  if (good_steps == nullptr || loss_scale == nullptr || overflow == nullptr) return cudaSuccess;
  LossScaleKernel<<<1, 1, 0, stream>>>(overflow, growth_interval, loss_scale, good_steps);
  return cudaGetLastError();
}

cudaError_t LaunchScaledCast(const float* src, const float* scale, void* dst, Elem to,
                             int64_t count, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  ScaledCastKernel<<<BlocksFor(count), kThreads, 0, stream>>>(src, scale, dst, to, count);
  return cudaGetLastError();
}

}  // namespace cnnbench::cuda
