// The cuda layer norm kernels (norm_kernels.h): kernels/layer_norm.h's
// arithmetic per position, over fp32 NCHW or fp16/bf16 NHWC through fp32.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda/elem_access.cuh"
#include "kernels/cuda/norm_kernels.h"
#include "kernels/layer_norm.h"

namespace cnnbench::cuda {
namespace {

#define GRID_STRIDE(i, count)                                                   \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (count); \
       i += int64_t{gridDim.x} * blockDim.x)

__global__ void LayerNormForwardKernel(ActivationGeometry g, float epsilon, const void* x,
                                       const float* gamma, const float* beta, void* y,
                                       float* mean_out, float* rstd_out, Elem type) {
  const int64_t plane = g.h * g.w;
  GRID_STRIDE(p, g.n * plane) {
    const int64_t n = p / plane, iy = (p % plane) / g.w, ix = p % g.w;
    auto value = [&](int64_t c) { return LoadAs(x, type, g.Offset(n, c, iy, ix)); };
    float mean, rstd;
    LayerNormStatistics<float>(g.c, epsilon, value, &mean, &rstd);
    for (int64_t c = 0; c < g.c; ++c)
      StoreAs(y, type, g.Offset(n, c, iy, ix),
              LayerNormOutput(value(c), mean, rstd, gamma[c], beta[c]));
    mean_out[p] = mean;
    rstd_out[p] = rstd;
  }
}

__global__ void LayerNormInputGradientKernel(ActivationGeometry g, const void* x, const void* dy,
                                             const float* gamma, const float* mean,
                                             const float* rstd, void* dx, Elem type) {
  const int64_t plane = g.h * g.w;
  GRID_STRIDE(p, g.n * plane) {
    const int64_t n = p / plane, iy = (p % plane) / g.w, ix = p % g.w;
    auto xv = [&](int64_t c) { return LoadAs(x, type, g.Offset(n, c, iy, ix)); };
    auto dyv = [&](int64_t c) { return LoadAs(dy, type, g.Offset(n, c, iy, ix)); };
    auto gv = [&](int64_t c) { return gamma[c]; };
    float sum_g, sum_g_xhat;
    LayerNormGradientSums<float>(g.c, mean[p], rstd[p], xv, dyv, gv, &sum_g, &sum_g_xhat);
    for (int64_t c = 0; c < g.c; ++c)
      StoreAs(dx, type, g.Offset(n, c, iy, ix),
              LayerNormInputGradient(g.c, xv(c), dyv(c), gamma[c], mean[p], rstd[p], sum_g,
                                     sum_g_xhat));
  }
}

__global__ void LayerNormParamGradientsKernel(ActivationGeometry g, const void* x, const void* dy,
                                              const float* mean, const float* rstd,
                                              float* dgamma, float* dbeta, Elem type) {
  const int64_t plane = g.h * g.w;
  GRID_STRIDE(c, g.c) {
    float sum_xhat = 0.0f, sum = 0.0f;
    for (int64_t p = 0; p < g.n * plane; ++p) {
      const int64_t at = g.Offset(p / plane, c, (p % plane) / g.w, p % g.w);
      const float d = LoadAs(dy, type, at);
      sum_xhat += d * (LoadAs(x, type, at) - mean[p]) * rstd[p];
      sum += d;
    }
    dgamma[c] = sum_xhat;
    dbeta[c] = sum;
  }
}

}  // namespace

cudaError_t LaunchLayerNormForward(const ActivationGeometry& g, float epsilon, const void* x,
                                   const float* gamma, const float* beta, void* y, float* mean,
                                   float* rstd, Elem type, cudaStream_t stream) {
  const int64_t positions = g.n * g.h * g.w;
  if (positions <= 0) return cudaSuccess;
  LayerNormForwardKernel<<<BlocksFor(positions), kThreads, 0, stream>>>(g, epsilon, x, gamma,
                                                                         beta, y, mean, rstd, type);
  return cudaGetLastError();
}

cudaError_t LaunchLayerNormInputGradient(const ActivationGeometry& g, const void* x,
                                         const void* dy, const float* gamma, const float* mean,
                                         const float* rstd, void* dx, Elem type,
                                         cudaStream_t stream) {
  const int64_t positions = g.n * g.h * g.w;
  if (positions <= 0) return cudaSuccess;
  LayerNormInputGradientKernel<<<BlocksFor(positions), kThreads, 0, stream>>>(
      g, x, dy, gamma, mean, rstd, dx, type);
  return cudaGetLastError();
}

cudaError_t LaunchLayerNormParamGradients(const ActivationGeometry& g, const void* x,
                                          const void* dy, const float* mean, const float* rstd,
                                          float* dgamma, float* dbeta, Elem type,
                                          cudaStream_t stream) {
  if (g.c <= 0) return cudaSuccess;
  LayerNormParamGradientsKernel<<<BlocksFor(g.c), kThreads, 0, stream>>>(g, x, dy, mean, rstd,
                                                                          dgamma, dbeta, type);
  return cudaGetLastError();
}

}  // namespace cnnbench::cuda
