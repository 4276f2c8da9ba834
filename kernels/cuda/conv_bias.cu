// The convolution bias kernels (conv_bias.h).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda/conv_bias.h"

namespace cnnbench::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__device__ float Load(const T* p, int64_t i);
template <>
__device__ float Load<float>(const float* p, int64_t i) {
  return p[i];
}
template <>
__device__ float Load<__half>(const __half* p, int64_t i) {
  return __half2float(p[i]);
}
template <>
__device__ float Load<__nv_bfloat16>(const __nv_bfloat16* p, int64_t i) {
  return __bfloat162float(p[i]);
}

template <typename T>
__device__ void Store(T* p, int64_t i, float v);
template <>
__device__ void Store<float>(float* p, int64_t i, float v) {
  p[i] = v;
}
template <>
__device__ void Store<__half>(__half* p, int64_t i, float v) {
  p[i] = __float2half_rn(v);
}
template <>
__device__ void Store<__nv_bfloat16>(__nv_bfloat16* p, int64_t i, float v) {
  p[i] = __float2bfloat16_rn(v);
}

// The channel of stored element i.
__host__ __device__ inline int64_t ChannelOf(int64_t i, bool nhwc, int64_t k, int64_t plane) {
  return nhwc ? i % k : (i / plane) % k;
}

// The stored index of the m-th (n, p, q) position of channel c.
__host__ __device__ inline int64_t IndexOf(int64_t m, int64_t c, bool nhwc, int64_t k,
                                           int64_t plane) {
  return nhwc ? m * k + c : ((m / plane) * k + c) * plane + m % plane;
}

template <typename T>
__global__ void Epilogue(T* y, const float* bias, ActivationKind activation, bool nhwc, int64_t k,
                         int64_t plane, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float b = bias != nullptr ? bias[ChannelOf(i, nhwc, k, plane)] : 0.0f;
    Store(y, i, ConvEpilogueValue(Load(y, i), b, activation));
  }
}

template <typename T>
__global__ void BiasGrad(const T* dy, float* dbias, bool nhwc, int64_t k, int64_t plane,
                         int64_t positions) {
  __shared__ float partial[kThreads];
  const int64_t c = blockIdx.x;
  float sum = 0;
  for (int64_t m = threadIdx.x; m < positions; m += blockDim.x)
    sum += Load(dy, IndexOf(m, c, nhwc, k, plane));
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) dbias[c] = partial[0];
}

int Blocks(int64_t count) {
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 * 8 ? (blocks > 0 ? blocks : 1) : 65535 * 8);
}

}  // namespace

cudaError_t LaunchConvEpilogue(void* y, Elem type, bool nhwc, const float* bias,
                               ActivationKind activation, int64_t n, int64_t k, int64_t plane,
                               cudaStream_t stream) {
  const int64_t count = n * k * plane;
  if (count == 0 || (bias == nullptr && activation == ActivationKind::kNone)) return cudaSuccess;
  switch (type) {
    case Elem::kF32:
      Epilogue<<<Blocks(count), kThreads, 0, stream>>>(static_cast<float*>(y), bias, activation,
                                                       nhwc, k, plane, count);
      break;
    case Elem::kF16:
      Epilogue<<<Blocks(count), kThreads, 0, stream>>>(static_cast<__half*>(y), bias, activation,
                                                       nhwc, k, plane, count);
      break;
    case Elem::kBF16:
      Epilogue<<<Blocks(count), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(y), bias,
                                                       activation, nhwc, k, plane, count);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t LaunchConvBiasGrad(const void* dy, Elem type, bool nhwc, float* dbias, int64_t n,
                               int64_t k, int64_t plane, cudaStream_t stream) {
  if (k == 0) return cudaSuccess;
  const int64_t positions = n * plane;
  const unsigned blocks = static_cast<unsigned>(k);
  switch (type) {
    case Elem::kF32:
      BiasGrad<<<blocks, kThreads, 0, stream>>>(static_cast<const float*>(dy), dbias, nhwc, k,
                                                plane, positions);
      break;
    case Elem::kF16:
      BiasGrad<<<blocks, kThreads, 0, stream>>>(static_cast<const __half*>(dy), dbias, nhwc, k,
                                                plane, positions);
      break;
    case Elem::kBF16:
      BiasGrad<<<blocks, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(dy), dbias, nhwc,
                                                k, plane, positions);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace cnnbench::cuda
