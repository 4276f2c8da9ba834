// The cuda spatial pad and drop-path kernels (see pad_drop_kernels.h): the
// arithmetic lives in pad_drop_math.h; these kernels map threads onto
// elements with grid-stride loops over 64-bit indices.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda/elem_access.cuh"
#include "kernels/cuda/pad_drop_kernels.h"

namespace cnnbench::cuda {
namespace {

#define GRID_STRIDE(i, count)                                                   \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (count); \
       i += int64_t{gridDim.x} * blockDim.x)

// Element bytes copied as they are (no conversion): a pad moves values.
template <typename T>
__global__ void ShiftedCopyKernel(ShiftGeometry g, const T* from, T* to) {
  GRID_STRIDE(at, g.to.elements()) {
    const int64_t source = ShiftSource(g, at);
    to[at] = source < 0 ? T(0) : from[source];
  }
}

__global__ void DropPathScalesKernel(int64_t examples, uint64_t first_example, double keep,
                                     int64_t ramp_steps, uint64_t seed, uint64_t node,
                                     const uint64_t* step, uint64_t fallback_step, double* scale) {
  const uint64_t s = step != nullptr ? *step : fallback_step;
  const double p = DropPathKeepAt(keep, ramp_steps, s);
  const uint64_t key = DropoutKey(seed, node, s);
  GRID_STRIDE(n, examples) {
    scale[n] = DropPathScale(key, first_example + static_cast<uint64_t>(n), p);
  }
}

// fp32 through double, as the reference rounds once; fp16/bf16 through fp32.
__global__ void DropPathApplyKernel(ActivationGeometry g, const void* in, const double* scale,
                                    void* out, Elem type) {
  GRID_STRIDE(at, g.elements()) {
    const double s = scale[ExampleAt(g, at)];
    if (type == Elem::kF32) {
      static_cast<float*>(out)[at] =
          static_cast<float>(static_cast<double>(static_cast<const float*>(in)[at]) * s);
    } else {
      StoreAs(out, type, at, LoadAs(in, type, at) * static_cast<float>(s));
    }
  }
}

__global__ void ChannelMulKernel(ActivationGeometry g, const void* in, const void* scale,
                                 void* out, Elem type) {
  GRID_STRIDE(at, g.elements()) {
    const float s = LoadAs(scale, type, ChannelMulScaleIndex(at, g.c, g.h * g.w, g.nhwc));
    StoreAs(out, type, at, LoadAs(in, type, at) * s);
  }
}

__global__ void ChannelMulScaleGradientKernel(ActivationGeometry g, const void* dy, const void* x,
                                              void* ds, Elem type) {
  GRID_STRIDE(nc, g.n * g.c) {
    const int64_t n = nc / g.c, c = nc % g.c;
    float sum = 0.0f;
    for (int64_t iy = 0; iy < g.h; ++iy)
      for (int64_t ix = 0; ix < g.w; ++ix) {
        const int64_t at = g.Offset(n, c, iy, ix);
        sum += LoadAs(dy, type, at) * LoadAs(x, type, at);
      }
    StoreAs(ds, type, nc, sum);
  }
}

}  // namespace

cudaError_t LaunchChannelMul(const ActivationGeometry& g, const void* in, const void* scale,
                             void* out, Elem type, cudaStream_t stream) {
  const int64_t count = g.elements();
  if (count <= 0) return cudaSuccess;
  ChannelMulKernel<<<BlocksFor(count), kThreads, 0, stream>>>(g, in, scale, out, type);
  return cudaGetLastError();
}

cudaError_t LaunchChannelMulScaleGradient(const ActivationGeometry& g, const void* dy,
                                          const void* x, void* ds, Elem type,
                                          cudaStream_t stream) {
  const int64_t count = g.n * g.c;
  if (count <= 0) return cudaSuccess;
  ChannelMulScaleGradientKernel<<<BlocksFor(count), kThreads, 0, stream>>>(g, dy, x, ds, type);
  return cudaGetLastError();
}

cudaError_t LaunchShiftedCopy(const ShiftGeometry& g, const void* from, void* to, Elem type,
                              cudaStream_t stream) {
  const int64_t count = g.to.elements();
  if (count <= 0) return cudaSuccess;
  if (type == Elem::kF32 || type == Elem::kI32) {
    ShiftedCopyKernel<uint32_t><<<BlocksFor(count), kThreads, 0, stream>>>(
        g, static_cast<const uint32_t*>(from), static_cast<uint32_t*>(to));
  } else {
    ShiftedCopyKernel<uint16_t><<<BlocksFor(count), kThreads, 0, stream>>>(
        g, static_cast<const uint16_t*>(from), static_cast<uint16_t*>(to));
  }
  return cudaGetLastError();
}

cudaError_t LaunchDropPathScales(int64_t examples, uint64_t first_example, double keep,
                                 int64_t ramp_steps, uint64_t seed, uint64_t node,
                                 const uint64_t* step, uint64_t fallback_step, double* scale,
                                 cudaStream_t stream) {
  if (examples <= 0) return cudaSuccess;
  DropPathScalesKernel<<<BlocksFor(examples), kThreads, 0, stream>>>(
      examples, first_example, keep, ramp_steps, seed, node, step, fallback_step, scale);
  return cudaGetLastError();
}

cudaError_t LaunchDropPathApply(const ActivationGeometry& g, const void* in, const double* scale,
                                void* out, Elem type, cudaStream_t stream) {
  const int64_t count = g.elements();
  if (count <= 0) return cudaSuccess;
  DropPathApplyKernel<<<BlocksFor(count), kThreads, 0, stream>>>(g, in, scale, out, type);
  return cudaGetLastError();
}

}  // namespace cnnbench::cuda
