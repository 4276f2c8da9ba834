// The cuda backend's own layer kernels (see op_kernels.h). The arithmetic
// lives in op_math.h; these kernels map threads onto elements (grid-stride
// loops over 64-bit indices) and convert fp16/bf16 through fp32.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "kernels/cuda/elem_access.cuh"
#include "kernels/cuda/op_kernels.h"

namespace cnnbench::cuda {
namespace {

// fp32 elements go through double unrounded (dropout's scaling matches the
// reference's double arithmetic bit for bit).
__device__ double LoadDouble(const void* p, Elem t, int64_t i) {
  return t == Elem::kF32 ? static_cast<double>(static_cast<const float*>(p)[i])
                         : static_cast<double>(LoadAs(p, t, i));
}

__device__ void StoreDouble(void* p, Elem t, int64_t i, double v) {
  if (t == Elem::kF32) {
    static_cast<float*>(p)[i] = static_cast<float>(v);
  } else if (t == Elem::kF16) {
    static_cast<__half*>(p)[i] = __double2half(v);
  } else if (t == Elem::kBF16) {
    static_cast<__nv_bfloat16*>(p)[i] = __double2bfloat16(v);
  } else {
    StoreAs(p, t, i, static_cast<float>(v));
  }
}

#define GRID_STRIDE(i, count)                                                   \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (count); \
       i += int64_t{gridDim.x} * blockDim.x)

__global__ void PoolForwardKernel(PoolGeometry g, const void* x, void* y, int32_t* argmax,
                                  Elem type) {
  GRID_STRIDE(out, g.output.elements()) {
    int64_t n, c, p, q;
    g.output.Coordinates(out, &n, &c, &p, &q);
    int32_t winner = 0;
    const float v = PoolForwardAt(
        g, n, c, p, q, [&](int64_t at) { return LoadAs(x, type, at); }, &winner);
    StoreAs(y, type, out, v);
    if (argmax != nullptr) argmax[out] = winner;
  }
}

__global__ void PoolBackwardKernel(PoolGeometry g, const void* dy, const int32_t* argmax, void* dx,
                                   Elem type) {
  GRID_STRIDE(in, g.input.elements()) {
    int64_t n, c, y, x;
    g.input.Coordinates(in, &n, &c, &y, &x);
    const float v = PoolBackwardAt(
        g, n, c, y, x, [&](int64_t at) { return LoadAs(dy, type, at); },
        [&](int64_t at) { return argmax != nullptr ? argmax[at] : int32_t{-1}; });
    StoreAs(dx, type, in, v);
  }
}

__global__ void LrnForwardKernel(LrnGeometry g, const void* x, void* y, float* scale, Elem type) {
  GRID_STRIDE(at, g.dims.elements()) {
    int64_t n, c, h, w;
    g.dims.Coordinates(at, &n, &c, &h, &w);
    const float s = LrnScaleAt(g, n, c, h, w, [&](int64_t i) { return LoadAs(x, type, i); });
    StoreAs(y, type, at, LrnOutput(g, LoadAs(x, type, at), s));
    if (scale != nullptr) scale[at] = s;
  }
}

__global__ void LrnBackwardKernel(LrnGeometry g, const void* x, const void* dy, const float* scale,
                                  void* dx, Elem type) {
  GRID_STRIDE(at, g.dims.elements()) {
    int64_t n, c, h, w;
    g.dims.Coordinates(at, &n, &c, &h, &w);
    const float v = LrnBackwardAt(
        g, n, c, h, w, [&](int64_t i) { return LoadAs(x, type, i); },
        [&](int64_t i) { return LoadAs(dy, type, i); }, [&](int64_t i) { return scale[i]; });
    StoreAs(dx, type, at, v);
  }
}

__global__ void DropoutForwardKernel(DropoutGeometry g, uint64_t seed, uint64_t node,
                                     const uint64_t* step, uint64_t fallback_step, const void* x,
                                     void* y, uint8_t* mask, Elem type) {
  const uint64_t key = DropoutKey(seed, node, step != nullptr ? *step : fallback_step);
  GRID_STRIDE(at, g.dims.elements()) {
    const bool keep = DropoutKeepsAt(g, key, at);
    mask[at] = keep ? 1 : 0;
    StoreDouble(y, type, at, DropoutScaled(g, LoadDouble(x, type, at), keep));
  }
}

__global__ void DropoutBackwardKernel(DropoutGeometry g, const void* dy, const uint8_t* mask,
                                      void* dx, Elem type) {
  GRID_STRIDE(at, g.dims.elements()) {
    StoreDouble(dx, type, at, DropoutScaled(g, LoadDouble(dy, type, at), mask[at] != 0));
  }
}

__global__ void DropoutMaskKernel(DropoutGeometry g, uint64_t key, uint8_t* mask) {
  GRID_STRIDE(at, g.dims.elements()) { mask[at] = DropoutKeepsAt(g, key, at) ? 1 : 0; }
}

// A block-wide reduction of one float per thread (kThreads threads).
template <typename Op>
__device__ float BlockReduce(float v, float* shared, const Op& op) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      shared[threadIdx.x] = op(shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  const float result = shared[0];
  __syncthreads();
  return result;
}

// One block per row.
__global__ void SoftmaxXentRowKernel(const void* logits, Elem type, const int32_t* labels,
                                     int64_t n, int64_t classes, float* grad, float* row_loss,
                                     uint64_t* bad_label) {
  __shared__ float shared[kThreads];
  for (int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    const int64_t base = row * classes;
    const int32_t label = labels[row];
    if (label < 0 || label >= classes) {
      if (threadIdx.x == 0) {
        atomicMin(reinterpret_cast<unsigned long long*>(bad_label),
                  static_cast<unsigned long long>(PackBadLabel(row, label)));
        row_loss[row] = NAN;
      }
      for (int64_t j = threadIdx.x; j < classes; j += kThreads) grad[base + j] = NAN;
      continue;
    }
    float max = -INFINITY;
    for (int64_t j = threadIdx.x; j < classes; j += kThreads)
      max = fmaxf(max, LoadAs(logits, type, base + j));
    max = BlockReduce(max, shared, [](float a, float b) { return fmaxf(a, b); });
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < classes; j += kThreads)
      sum += expf(LoadAs(logits, type, base + j) - max);
    sum = BlockReduce(sum, shared, [](float a, float b) { return a + b; });
    const float log_sum = SoftmaxLogSum(max, sum);
    for (int64_t j = threadIdx.x; j < classes; j += kThreads)
      grad[base + j] = SoftmaxXentGradient(LoadAs(logits, type, base + j), log_sum, j == label, n);
    if (threadIdx.x == 0) row_loss[row] = log_sum - LoadAs(logits, type, base + label);
  }
}

// One block: the mean of the row losses in a fixed order.
__global__ void MeanKernel(const float* values, int64_t n, float* mean) {
  __shared__ float shared[kThreads];
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) sum += values[i];
  sum = BlockReduce(sum, shared, [](float a, float b) { return a + b; });
  if (threadIdx.x == 0) *mean = sum / static_cast<float>(n);
}

__global__ void BatchNormFrozenStatsKernel(const float* running_mean, const float* running_var,
                                           double epsilon, float* mean, float* inv_std,
                                           int64_t channels) {
  GRID_STRIDE(c, channels) {
    mean[c] = running_mean[c];
    inv_std[c] = static_cast<float>(1.0 / sqrt(static_cast<double>(running_var[c]) + epsilon));
  }
}

__global__ void BatchNormRunningStatsKernel(const float* mean, const float* inv_std, double epsilon,
                                            int64_t m, double momentum, float* running_mean,
                                            float* running_var, int64_t channels) {
  GRID_STRIDE(c, channels) {
    BatchNormRunningUpdate(mean[c], inv_std[c], epsilon, m, momentum, &running_mean[c],
                           &running_var[c]);
  }
}

__global__ void BatchNormFrozenBackwardKernel(ActivationGeometry g, const void* dy,
                                              const float* gamma, const float* inv_std, void* dx,
                                              Elem type) {
  GRID_STRIDE(at, g.elements()) {
    int64_t n, c, h, w;
    g.Coordinates(at, &n, &c, &h, &w);
    const float scale = (gamma != nullptr ? gamma[c] : 1.0f) * inv_std[c];
    StoreAs(dx, type, at, LoadAs(dy, type, at) * scale);
  }
}

}  // namespace

cudaError_t LaunchPoolForward(const PoolGeometry& g, const void* x, void* y, int32_t* argmax,
                              Elem type, cudaStream_t stream) {
  const int64_t count = g.output.elements();
  if (count <= 0) return cudaSuccess;
  PoolForwardKernel<<<BlocksFor(count), kThreads, 0, stream>>>(g, x, y, argmax, type);
  return cudaGetLastError();
}

cudaError_t LaunchPoolBackward(const PoolGeometry& g, const void* dy, const int32_t* argmax,
                               void* dx, Elem type, cudaStream_t stream) {
  const int64_t count = g.input.elements();
  if (count <= 0) return cudaSuccess;
  if (g.kind == PoolKind::kMax && argmax == nullptr) return cudaErrorInvalidValue;
  PoolBackwardKernel<<<BlocksFor(count), kThreads, 0, stream>>>(g, dy, argmax, dx, type);
  return cudaGetLastError();
}

cudaError_t LaunchLrnForward(const LrnGeometry& g, const void* x, void* y, float* scale, Elem type,
                             cudaStream_t stream) {
  const int64_t count = g.dims.elements();
  if (count <= 0) return cudaSuccess;
  LrnForwardKernel<<<BlocksFor(count), kThreads, 0, stream>>>(g, x, y, scale, type);
  return cudaGetLastError();
}

cudaError_t LaunchLrnBackward(const LrnGeometry& g, const void* x, const void* dy,
                              const float* scale, void* dx, Elem type, cudaStream_t stream) {
  const int64_t count = g.dims.elements();
  if (count <= 0) return cudaSuccess;
  LrnBackwardKernel<<<BlocksFor(count), kThreads, 0, stream>>>(g, x, dy, scale, dx, type);
  return cudaGetLastError();
}

cudaError_t LaunchDropoutForward(const DropoutGeometry& g, uint64_t seed, uint64_t node,
                                 const uint64_t* step, uint64_t fallback_step, const void* x,
                                 void* y, uint8_t* mask, Elem type, cudaStream_t stream) {
  const int64_t count = g.dims.elements();
  if (count <= 0) return cudaSuccess;
  DropoutForwardKernel<<<BlocksFor(count), kThreads, 0, stream>>>(g, seed, node, step,
                                                                  fallback_step, x, y, mask, type);
  return cudaGetLastError();
}

cudaError_t LaunchDropoutBackward(const DropoutGeometry& g, const void* dy, const uint8_t* mask,
                                  void* dx, Elem type, cudaStream_t stream) {
  const int64_t count = g.dims.elements();
  if (count <= 0) return cudaSuccess;
  DropoutBackwardKernel<<<BlocksFor(count), kThreads, 0, stream>>>(g, dy, mask, dx, type);
  return cudaGetLastError();
}

cudaError_t LaunchDropoutMask(const DropoutGeometry& g, uint64_t key, uint8_t* mask,
                              cudaStream_t stream) {
  const int64_t count = g.dims.elements();
  if (count <= 0) return cudaSuccess;
  DropoutMaskKernel<<<BlocksFor(count), kThreads, 0, stream>>>(g, key, mask);
  return cudaGetLastError();
}

cudaError_t LaunchSoftmaxXentForward(const void* logits, Elem type, const int32_t* labels,
                                     int64_t n, int64_t classes, float* grad, float* row_loss,
                                     float* loss, uint64_t* bad_label, cudaStream_t stream) {
  if (n <= 0 || classes <= 0) return cudaErrorInvalidValue;
  const int blocks = static_cast<int>(n < 65535 * 8 ? n : 65535 * 8);
  SoftmaxXentRowKernel<<<blocks, kThreads, 0, stream>>>(logits, type, labels, n, classes, grad,
                                                        row_loss, bad_label);
  if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  MeanKernel<<<1, kThreads, 0, stream>>>(row_loss, n, loss);
  return cudaGetLastError();
}

cudaError_t LaunchBatchNormFrozenStats(const float* running_mean, const float* running_var,
                                       double epsilon, float* mean, float* inv_std,
                                       int64_t channels, cudaStream_t stream) {
  if (channels <= 0) return cudaSuccess;
  BatchNormFrozenStatsKernel<<<BlocksFor(channels), kThreads, 0, stream>>>(
      running_mean, running_var, epsilon, mean, inv_std, channels);
  return cudaGetLastError();
}

cudaError_t LaunchBatchNormRunningStats(const float* mean, const float* inv_std, double epsilon,
                                        int64_t m, double momentum, float* running_mean,
                                        float* running_var, int64_t channels, cudaStream_t stream) {
  if (channels <= 0) return cudaSuccess;
  BatchNormRunningStatsKernel<<<BlocksFor(channels), kThreads, 0, stream>>>(
      mean, inv_std, epsilon, m, momentum, running_mean, running_var, channels);
  return cudaGetLastError();
}

cudaError_t LaunchBatchNormFrozenBackward(const ActivationGeometry& g, const void* dy,
                                          const float* gamma, const float* inv_std, void* dx,
                                          Elem type, cudaStream_t stream) {
  const int64_t count = g.elements();
  if (count <= 0) return cudaSuccess;
  BatchNormFrozenBackwardKernel<<<BlocksFor(count), kThreads, 0, stream>>>(g, dy, gamma, inv_std,
                                                                           dx, type);
  return cudaGetLastError();
}

}  // namespace cnnbench::cuda
