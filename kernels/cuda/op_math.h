// The per-element arithmetic of the cuda backend's own kernels (pooling,
// LRN, dropout, softmax cross-entropy, the convolution's epilogue), as
// host-and-device inline functions:
// the .cu kernels only map threads onto elements, and host tests run this
// very arithmetic against the reference backend without a GPU. Plain C++
// for host compilers (CNNBENCH_HOST_DEVICE comes from core/random.h).
#ifndef CNNBENCH_KERNELS_CUDA_OP_MATH_H_
#define CNNBENCH_KERNELS_CUDA_OP_MATH_H_

#include <cmath>
#include <cstdint>

#include "core/random.h"
#include "kernels/activation.h"

namespace cnnbench::cuda {

// One element of the convolution's epilogue (conv_bias.cu), in fp32: the
// fused activation of v + bias (ActivationForward; ReLU: max(., 0), ReLU6:
// clipped to [0, 6]; kNone: the sum).
CNNBENCH_HOST_DEVICE inline float ConvEpilogueValue(float v, float bias,
                                                   ActivationKind activation) {
  return ActivationForward(activation, v + bias);
}

// Offset of logical element (n, c, y, x) in a dense (N,C,H,W) tensor, or in
// a dense (N,H,W,C) one when `nhwc`.
struct ActivationGeometry {
  int64_t n = 1, c = 1, h = 1, w = 1;
  bool nhwc = false;
  CNNBENCH_HOST_DEVICE int64_t elements() const { return n * c * h * w; }
  CNNBENCH_HOST_DEVICE int64_t Offset(int64_t in, int64_t ic, int64_t iy, int64_t ix) const {
    return nhwc ? ((in * h + iy) * w + ix) * c + ic : ((in * c + ic) * h + iy) * w + ix;
  }
  // The logical (N,C,H,W) index of the element stored at `offset`.
  CNNBENCH_HOST_DEVICE int64_t LogicalIndex(int64_t offset) const {
    if (!nhwc) return offset;
    const int64_t ic = offset % c, ix = (offset / c) % w, iy = (offset / (c * w)) % h,
                  in = offset / (c * w * h);
    return ((in * c + ic) * h + iy) * w + ix;
  }
  // Splits a storage offset into (n, c, y, x).
  CNNBENCH_HOST_DEVICE void Coordinates(int64_t offset, int64_t* in, int64_t* ic, int64_t* iy,
                                        int64_t* ix) const {
    if (nhwc) {
      *ic = offset % c;
      *ix = (offset / c) % w;
      *iy = (offset / (c * w)) % h;
      *in = offset / (c * w * h);
    } else {
      *ix = offset % w;
      *iy = (offset / w) % h;
      *ic = (offset / (w * h)) % c;
      *in = offset / (w * h * c);
    }
  }
};

// ---- Pooling -------------------------------------------------------------

// One spatial dimension of a pooling window (explicit pads; the pad after
// only limits how many outputs there are).
struct PoolWindow {
  int64_t in = 1, out = 1, kernel = 1, stride = 1, pad_before = 0;
};

// A half-open index range.
struct IndexSpan {
  int64_t begin = 0, end = 0;
};

// The in-bounds input range of output `o`'s window.
CNNBENCH_HOST_DEVICE inline IndexSpan PoolInputsOf(const PoolWindow& d, int64_t o) {
  const int64_t start = o * d.stride - d.pad_before;
  IndexSpan span;
  span.begin = start > 0 ? start : 0;
  span.end = start + d.kernel < d.in ? start + d.kernel : d.in;
  return span;
}

// The outputs whose windows contain input `i`.
CNNBENCH_HOST_DEVICE inline IndexSpan PoolOutputsOf(const PoolWindow& d, int64_t i) {
  const int64_t lo = i + d.pad_before - (d.kernel - 1);  // smallest window start covering i
  IndexSpan span;
  span.begin = lo <= 0 ? 0 : (lo + d.stride - 1) / d.stride;
  const int64_t last = (i + d.pad_before) / d.stride + 1;
  span.end = last < d.out ? last : d.out;
  return span;
}

enum class PoolKind : int32_t { kMax, kAvg /* padding counted */, kAvgExcludePad };

struct PoolGeometry {
  PoolKind kind = PoolKind::kMax;
  ActivationGeometry input, output;  // same n, c and layout
  PoolWindow h, w;
};

// What output (p, q)'s average divides by.
CNNBENCH_HOST_DEVICE inline float PoolDivisor(const PoolGeometry& g, int64_t p, int64_t q) {
  if (g.kind == PoolKind::kAvg) return static_cast<float>(g.h.kernel * g.w.kernel);
  const IndexSpan hs = PoolInputsOf(g.h, p), ws = PoolInputsOf(g.w, q);
  return static_cast<float>((hs.end - hs.begin) * (ws.end - ws.begin));
}

// Output (n, c, p, q) from `load(storage offset of x)`. For max pooling the
// first maximum in row-major window order wins and its offset within the
// input plane (y * W + x) goes to *argmax.
template <typename Load>
CNNBENCH_HOST_DEVICE float PoolForwardAt(const PoolGeometry& g, int64_t n, int64_t c, int64_t p,
                                         int64_t q, const Load& load, int32_t* argmax) {
  const IndexSpan hs = PoolInputsOf(g.h, p), ws = PoolInputsOf(g.w, q);
  if (g.kind == PoolKind::kMax) {
    int64_t best_y = hs.begin, best_x = ws.begin;
    float best = load(g.input.Offset(n, c, best_y, best_x));
    for (int64_t y = hs.begin; y < hs.end; ++y)
      for (int64_t x = ws.begin; x < ws.end; ++x) {
        const float v = load(g.input.Offset(n, c, y, x));
        if (v > best) {
          best = v;
          best_y = y;
          best_x = x;
        }
      }
    *argmax = static_cast<int32_t>(best_y * g.input.w + best_x);
    return best;
  }
  float sum = 0.0f;
  for (int64_t y = hs.begin; y < hs.end; ++y)
    for (int64_t x = ws.begin; x < ws.end; ++x) sum += load(g.input.Offset(n, c, y, x));
  return sum / PoolDivisor(g, p, q);
}

// dx at input (n, c, y, x): the sum over the windows that read it.
// `load_dy(offset)` and `load_argmax(offset)` read at output storage offsets.
template <typename LoadDy, typename LoadArgmax>
CNNBENCH_HOST_DEVICE float PoolBackwardAt(const PoolGeometry& g, int64_t n, int64_t c, int64_t y,
                                          int64_t x, const LoadDy& load_dy,
                                          const LoadArgmax& load_argmax) {
  const IndexSpan ps = PoolOutputsOf(g.h, y), qs = PoolOutputsOf(g.w, x);
  const int32_t here = static_cast<int32_t>(y * g.input.w + x);
  float acc = 0.0f;
  for (int64_t p = ps.begin; p < ps.end; ++p)
    for (int64_t q = qs.begin; q < qs.end; ++q) {
      const int64_t out = g.output.Offset(n, c, p, q);
      if (g.kind == PoolKind::kMax) {
        if (load_argmax(out) == here) acc += load_dy(out);
      } else {
        acc += load_dy(out) / PoolDivisor(g, p, q);
      }
    }
  return acc;
}

// ---- LRN (TensorFlow's definition) --------------------------------------

struct LrnGeometry {
  ActivationGeometry dims;
  int64_t radius = 5;
  float bias = 1.0f, alpha = 1e-4f, beta = 0.75f;
};

// s = bias + alpha * sum_{|j-c|<=radius} x_j^2 at (n, c, y, x).
template <typename Load>
CNNBENCH_HOST_DEVICE float LrnScaleAt(const LrnGeometry& g, int64_t n, int64_t c, int64_t y,
                                      int64_t x, const Load& load) {
  const int64_t low = c - g.radius > 0 ? c - g.radius : 0;
  const int64_t high = c + g.radius < g.dims.c - 1 ? c + g.radius : g.dims.c - 1;
  float sum = 0.0f;
  for (int64_t j = low; j <= high; ++j) {
    const float v = load(g.dims.Offset(n, j, y, x));
    sum += v * v;
  }
  return g.bias + g.alpha * sum;
}

// y = x * s^-beta.
CNNBENCH_HOST_DEVICE inline float LrnOutput(const LrnGeometry& g, float x, float s) {
  return x * powf(s, -g.beta);
}

// dx_c = dy_c s_c^-beta - 2 alpha beta x_c sum_{|j-c|<=r} dy_j x_j s_j^(-beta-1),
// from loads of x, dy and the saved s at storage offsets.
template <typename LoadX, typename LoadDy, typename LoadS>
CNNBENCH_HOST_DEVICE float LrnBackwardAt(const LrnGeometry& g, int64_t n, int64_t c, int64_t y,
                                         int64_t x, const LoadX& load_x, const LoadDy& load_dy,
                                         const LoadS& load_s) {
  const int64_t low = c - g.radius > 0 ? c - g.radius : 0;
  const int64_t high = c + g.radius < g.dims.c - 1 ? c + g.radius : g.dims.c - 1;
  float cross = 0.0f;
  for (int64_t j = low; j <= high; ++j) {
    const int64_t at = g.dims.Offset(n, j, y, x);
    cross += load_dy(at) * load_x(at) * powf(load_s(at), -g.beta - 1.0f);
  }
  const int64_t at = g.dims.Offset(n, c, y, x);
  return load_dy(at) * powf(load_s(at), -g.beta) - 2.0f * g.alpha * g.beta * load_x(at) * cross;
}

// ---- Dropout --------------------------------------------------------------

// Inverted dropout of the element stored at `offset`: the mask bit is
// core/random.h's for its global logical index (first_index counts the
// elements of the examples before this batch). y = x / (1 - rate) in double
// rounded once, as the reference does, or 0.
struct DropoutGeometry {
  ActivationGeometry dims;
  uint64_t first_index = 0;
  double rate = 0.5;
};

CNNBENCH_HOST_DEVICE inline bool DropoutKeepsAt(const DropoutGeometry& g, uint64_t key,
                                                int64_t offset) {
  return DropoutKeeps(key, g.first_index + static_cast<uint64_t>(g.dims.LogicalIndex(offset)),
                      g.rate);
}

CNNBENCH_HOST_DEVICE inline double DropoutScaled(const DropoutGeometry& g, double x, bool keep) {
  return keep ? x * (1.0 / (1.0 - g.rate)) : 0.0;
}

// ---- Softmax cross-entropy -----------------------------------------------

// The packed record of a bad label: the smallest example index wins (a
// device-side atomicMin); kNoBadLabel when every label was in range.
constexpr uint64_t kNoBadLabel = ~uint64_t{0};
CNNBENCH_HOST_DEVICE inline uint64_t PackBadLabel(int64_t example, int32_t label) {
  return (static_cast<uint64_t>(example) << 32) | static_cast<uint32_t>(label);
}
CNNBENCH_HOST_DEVICE inline int64_t BadLabelExample(uint64_t record) {
  return static_cast<int64_t>(record >> 32);
}
CNNBENCH_HOST_DEVICE inline int32_t BadLabelValue(uint64_t record) {
  return static_cast<int32_t>(static_cast<uint32_t>(record & 0xffffffffu));
}

// The per-row results: log(sum exp(row)) with the row's max taken out first,
// and the loss of the row's label.
CNNBENCH_HOST_DEVICE inline float SoftmaxLogSum(float max, float sum_exp) {
  return max + logf(sum_exp);
}
// d loss / d logit j of one row, already divided by the batch size.
CNNBENCH_HOST_DEVICE inline float SoftmaxXentGradient(float logit, float log_sum, bool is_label,
                                                      int64_t batch) {
  return (expf(logit - log_sum) - (is_label ? 1.0f : 0.0f)) / static_cast<float>(batch);
}

// Batch norm's running statistics from one training batch of m = N*H*W
// values per channel, given the batch mean and the inverse std
// 1/sqrt(var + epsilon) a graph saved: running = momentum * running +
// (1 - momentum) * batch, with the unbiased variance var * m / (m - 1), as
// docs/kernels.md asks. Updates *running_mean and *running_var.
CNNBENCH_HOST_DEVICE inline void BatchNormRunningUpdate(float mean, float inv_std, double epsilon,
                                                        int64_t m, double momentum,
                                                        float* running_mean, float* running_var) {
  const double inv = static_cast<double>(inv_std);
  double var = 1.0 / (inv * inv) - epsilon;
  if (var < 0) var = 0;  // rounding of a constant channel
  const double unbiased = m > 1 ? var * static_cast<double>(m) / static_cast<double>(m - 1) : var;
  *running_mean =
      static_cast<float>(momentum * *running_mean + (1.0 - momentum) * static_cast<double>(mean));
  *running_var = static_cast<float>(momentum * *running_var + (1.0 - momentum) * unbiased);
}

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_OP_MATH_H_
