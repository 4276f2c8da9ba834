// The loops of kernels/onednn/layer_norm_loops.h: each pass over a row is a
// loop over its segments and positions whose innermost loop runs across
// the lanes (8 or 16 channels, a template parameter), accumulating one
// vector per position; the sums across the lanes come once per position
// at the end. Compiled per ISA (target_clones), inlined per lane count.
#include "kernels/onednn/layer_norm_loops.h"

#include <cmath>

namespace cnnbench {
namespace onednn {
namespace {

#define CNNBENCH_ROW_INLINE __attribute__((always_inline)) inline

template <int L>
CNNBENCH_ROW_INLINE void Forward(const NormRow& r, const float* __restrict x, float* __restrict y,
                                 const float* __restrict gamma, const float* __restrict beta,
                                 float epsilon, float* __restrict mean, float* __restrict rstd,
                                 float* __restrict acc) {
  const int64_t positions = r.width * L;
  const float channels = static_cast<float>(r.blocks * L);
  for (int64_t i = 0; i < positions; ++i) acc[i] = 0.0f;
  for (int64_t cb = 0; cb < r.blocks; ++cb) {
    const float* xs = x + cb * r.x_stride;
#pragma omp simd
    for (int64_t i = 0; i < positions; ++i) acc[i] += xs[i];
  }
  for (int64_t w = 0; w < r.width; ++w) {
    float sum = 0.0f;
    for (int j = 0; j < L; ++j) sum += acc[w * L + j];
    mean[w] = sum / channels;
  }
  for (int64_t i = 0; i < positions; ++i) acc[i] = 0.0f;
  for (int64_t cb = 0; cb < r.blocks; ++cb) {
    const float* xs = x + cb * r.x_stride;
    for (int64_t w = 0; w < r.width; ++w) {
      const float m = mean[w];
#pragma omp simd
      for (int j = 0; j < L; ++j) {
        const float d = xs[w * L + j] - m;
        acc[w * L + j] += d * d;
      }
    }
  }
  for (int64_t w = 0; w < r.width; ++w) {
    float sum = 0.0f;
    for (int j = 0; j < L; ++j) sum += acc[w * L + j];
    rstd[w] = 1.0f / std::sqrt(sum / channels + epsilon);
  }
  for (int64_t cb = 0; cb < r.blocks; ++cb) {
    const float* xs = x + cb * r.x_stride;
    float* ys = y + cb * r.y_stride;
    const float* g = gamma + cb * L;
    const float* b = beta + cb * L;
    for (int64_t w = 0; w < r.width; ++w) {
      const float m = mean[w], s = rstd[w];
#pragma omp simd
      for (int j = 0; j < L; ++j) ys[w * L + j] = (xs[w * L + j] - m) * s * g[j] + b[j];
    }
  }
}

template <int L, bool kDx>
CNNBENCH_ROW_INLINE void Backward(const NormRow& r, const float* __restrict x,
                                  const float* __restrict dy, float* __restrict dx,
                                  const float* __restrict gamma, const float* __restrict mean,
                                  const float* __restrict rstd, float* __restrict dgamma,
                                  float* __restrict dbeta, float* __restrict acc) {
  const int64_t positions = r.width * L;
  const float channels = static_cast<float>(r.blocks * L);
  float* __restrict sum_g = acc;
  float* __restrict sum_gx = acc + positions;
  float* __restrict row_g = acc + 2 * positions;  // per position, after the lanes' sums
  float* __restrict row_gx = row_g + r.width;
  if constexpr (kDx)
    for (int64_t i = 0; i < 2 * positions; ++i) acc[i] = 0.0f;
  for (int64_t cb = 0; cb < r.blocks; ++cb) {
    const float* xs = x + cb * r.x_stride;
    const float* ds = dy + cb * r.x_stride;
    const float* gam = gamma + cb * L;
    float* dgam = dgamma + cb * L;
    float* dbet = dbeta + cb * L;
    for (int64_t w = 0; w < r.width; ++w) {
      const float m = mean[w], s = rstd[w];
#pragma omp simd
      for (int j = 0; j < L; ++j) {
        const float xhat = (xs[w * L + j] - m) * s;
        const float d = ds[w * L + j];
        dgam[j] += d * xhat;
        dbet[j] += d;
        if constexpr (kDx) {
          const float g = d * gam[j];
          sum_g[w * L + j] += g;
          sum_gx[w * L + j] += g * xhat;
        }
      }
    }
  }
  if constexpr (!kDx) return;
  for (int64_t w = 0; w < r.width; ++w) {
    float a = 0.0f, b = 0.0f;
    for (int j = 0; j < L; ++j) {
      a += sum_g[w * L + j];
      b += sum_gx[w * L + j];
    }
    row_g[w] = a / channels;
    row_gx[w] = b / channels;
  }
  for (int64_t cb = 0; cb < r.blocks; ++cb) {
    const float* xs = x + cb * r.x_stride;
    const float* ds = dy + cb * r.x_stride;
    float* out = dx + cb * r.y_stride;
    const float* gam = gamma + cb * L;
    for (int64_t w = 0; w < r.width; ++w) {
      const float m = mean[w], s = rstd[w], mg = row_g[w], mgx = row_gx[w];
#pragma omp simd
      for (int j = 0; j < L; ++j) {
        const float xhat = (xs[w * L + j] - m) * s;
        out[w * L + j] = s * (ds[w * L + j] * gam[j] - mg - xhat * mgx);
      }
    }
  }
}

#define CNNBENCH_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

CNNBENCH_CLONES void ForwardClone(const NormRow& r, const float* x, float* y, const float* gamma,
                                  const float* beta, float epsilon, float* mean, float* rstd,
                                  float* acc) {
  if (r.lanes == 16) {
    Forward<16>(r, x, y, gamma, beta, epsilon, mean, rstd, acc);
  } else {
    Forward<8>(r, x, y, gamma, beta, epsilon, mean, rstd, acc);
  }
}

CNNBENCH_CLONES void BackwardClone(const NormRow& r, const float* x, const float* dy, float* dx,
                                   const float* gamma, const float* mean, const float* rstd,
                                   float* dgamma, float* dbeta, float* acc) {
  if (r.lanes == 16) {
    if (dx != nullptr) {
      Backward<16, true>(r, x, dy, dx, gamma, mean, rstd, dgamma, dbeta, acc);
    } else {
      Backward<16, false>(r, x, dy, dx, gamma, mean, rstd, dgamma, dbeta, acc);
    }
  } else {
    if (dx != nullptr) {
      Backward<8, true>(r, x, dy, dx, gamma, mean, rstd, dgamma, dbeta, acc);
    } else {
      Backward<8, false>(r, x, dy, dx, gamma, mean, rstd, dgamma, dbeta, acc);
    }
  }
}

}  // namespace

int64_t NormRowAccumulators(const NormRow& row) {
  return 2 * row.width * row.lanes + 2 * row.width;
}

void LayerNormRowForward(const NormRow& row, const float* x, float* y, const float* gamma,
                         const float* beta, float epsilon, float* mean, float* rstd, float* acc) {
  ForwardClone(row, x, y, gamma, beta, epsilon, mean, rstd, acc);
}

void LayerNormRowBackward(const NormRow& row, const float* x, const float* dy, float* dx,
                          const float* gamma, const float* mean, const float* rstd, float* dgamma,
                          float* dbeta, float* acc) {
  BackwardClone(row, x, dy, dx, gamma, mean, rstd, dgamma, dbeta, acc);
}

}  // namespace onednn
}  // namespace cnnbench
