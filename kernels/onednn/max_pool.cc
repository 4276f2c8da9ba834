// Max pooling over channel blocks (see max_pool.h). Each (image, channel
// block) plane is one task; a block's channels are one vector (GCC's vector
// extension, 8 or 16 floats), so the same code serves both block sizes on
// any ISA, and target_clones compiles it for AVX-512, AVX2 and the baseline.
#include "kernels/onednn/max_pool.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

namespace cnnbench {
namespace onednn {
namespace {

template <int B>
struct Vec {
  typedef float F __attribute__((vector_size(B * sizeof(float))));
  typedef int32_t I __attribute__((vector_size(B * sizeof(int32_t))));
};

template <int B>
inline typename Vec<B>::F Load(const float* p) {
  typename Vec<B>::F v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

template <int B>
inline void Store(float* p, typename Vec<B>::F v) {
  std::memcpy(p, &v, sizeof(v));
}

// The window of output row/column o along one axis: [begin, end) of kernel
// positions that land inside the input, and the input index of position 0.
struct Window {
  int origin, begin, end;
};
inline Window WindowOf(int o, int stride, int pad, int kernel, int in) {
  const int origin = o * stride - pad;
  return {origin, std::max(0, -origin), std::min(kernel, in - origin)};
}

template <int B>
__attribute__((always_inline)) inline void ForwardPlane(const BlockedMaxPool& p, const float* x,
                                                        float* y, uint8_t* argmax) {
  using F = typename Vec<B>::F;
  using I = typename Vec<B>::I;
  for (int oh = 0; oh < p.out_h; ++oh) {
    const Window wh = WindowOf(oh, p.stride_h, p.pad_top, p.kernel_h, p.in_h);
    for (int ow = 0; ow < p.out_w; ++ow) {
      const Window ww = WindowOf(ow, p.stride_w, p.pad_left, p.kernel_w, p.in_w);
      // The first element inside the input starts the maximum, so padded
      // positions never win and a window of equal values picks it.
      F best = Load<B>(x + ((wh.origin + wh.begin) * p.in_w + ww.origin + ww.begin) * B);
      I where = I{} + (wh.begin * p.kernel_w + ww.begin);
      for (int kh = wh.begin; kh < wh.end; ++kh) {
        // The window's first column inside the input (origin may be negative).
        const float* row = x + ((wh.origin + kh) * p.in_w + ww.origin + ww.begin) * B;
        for (int kw = ww.begin; kw < ww.end; ++kw) {
          const F v = Load<B>(row + (kw - ww.begin) * B);
          const I greater = v > best;
          best = greater ? v : best;
          where = greater ? (I{} + (kh * p.kernel_w + kw)) : where;
        }
      }
      const int64_t out = (static_cast<int64_t>(oh) * p.out_w + ow) * B;
      Store<B>(y + out, best);
      for (int c = 0; c < B; ++c) argmax[out + c] = static_cast<uint8_t>(where[c]);
    }
  }
}

template <int B>
__attribute__((always_inline)) inline void BackwardPlane(const BlockedMaxPool& p, const float* dy,
                                                         const uint8_t* argmax, float* dx) {
  using F = typename Vec<B>::F;
  using I = typename Vec<B>::I;
  std::memset(dx, 0, sizeof(float) * B * p.in_h * p.in_w);
  for (int oh = 0; oh < p.out_h; ++oh) {
    const Window wh = WindowOf(oh, p.stride_h, p.pad_top, p.kernel_h, p.in_h);
    for (int ow = 0; ow < p.out_w; ++ow) {
      const Window ww = WindowOf(ow, p.stride_w, p.pad_left, p.kernel_w, p.in_w);
      const int64_t out = (static_cast<int64_t>(oh) * p.out_w + ow) * B;
      const F g = Load<B>(dy + out);
      I where{};
      for (int c = 0; c < B; ++c) where[c] = argmax[out + c];
      // Each window position takes the lanes whose maximum it held.
      for (int kh = wh.begin; kh < wh.end; ++kh) {
        float* row = dx + ((wh.origin + kh) * p.in_w + ww.origin + ww.begin) * B;
        for (int kw = ww.begin; kw < ww.end; ++kw) {
          const I chosen = where == (I{} + (kh * p.kernel_w + kw));
          float* at = row + (kw - ww.begin) * B;
          Store<B>(at, Load<B>(at) + (chosen ? g : F{}));
        }
      }
    }
  }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void Forward8(const BlockedMaxPool& p,
                                                                           const float* x, float* y,
                                                                           uint8_t* argmax) {
  ForwardPlane<8>(p, x, y, argmax);
}
__attribute__((target_clones("avx512f", "avx2", "default"))) void Forward16(const BlockedMaxPool& p,
                                                                            const float* x,
                                                                            float* y,
                                                                            uint8_t* argmax) {
  ForwardPlane<16>(p, x, y, argmax);
}
__attribute__((target_clones("avx512f", "avx2", "default"))) void Backward8(const BlockedMaxPool& p,
                                                                            const float* dy,
                                                                            const uint8_t* argmax,
                                                                            float* dx) {
  BackwardPlane<8>(p, dy, argmax, dx);
}
__attribute__((target_clones("avx512f", "avx2", "default"))) void Backward16(
    const BlockedMaxPool& p, const float* dy, const uint8_t* argmax, float* dx) {
  BackwardPlane<16>(p, dy, argmax, dx);
}

}  // namespace

bool BlockedMaxPool::Valid() const {
  if ((block != 8 && block != 16) || batch <= 0 || channel_blocks <= 0) return false;
  if (in_h <= 0 || in_w <= 0 || out_h <= 0 || out_w <= 0) return false;
  if (kernel_h <= 0 || kernel_w <= 0 || kernel_h * kernel_w > 255) return false;
  if (stride_h <= 0 || stride_w <= 0 || pad_top < 0 || pad_left < 0) return false;
  // The first and last windows of each axis reach into the input (the ones
  // between do too, the windows moving monotonically).
  auto reaches = [](int out, int stride, int pad, int kernel, int in) {
    const Window first = WindowOf(0, stride, pad, kernel, in);
    const Window last = WindowOf(out - 1, stride, pad, kernel, in);
    return first.begin < first.end && last.begin < last.end;
  };
  return reaches(out_h, stride_h, pad_top, kernel_h, in_h) &&
         reaches(out_w, stride_w, pad_left, kernel_w, in_w);
}

namespace {

// run(in_offset, out_offset) for every (image, channel block) plane, on the
// OpenMP team.
template <typename Run>
void ForEachPlane(const BlockedMaxPool& p, Run run) {
  const int64_t planes = p.batch * p.channel_blocks;
  const int64_t in_plane = static_cast<int64_t>(p.block) * p.in_h * p.in_w;
  const int64_t out_plane = static_cast<int64_t>(p.block) * p.out_h * p.out_w;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < planes; ++i) run(i * in_plane, i * out_plane);
}

}  // namespace

void MaxPoolForward(const BlockedMaxPool& p, const float* x, float* y, uint8_t* argmax) {
  auto* forward = p.block == 8 ? Forward8 : Forward16;
  ForEachPlane(p, [&](int64_t in, int64_t out) { forward(p, x + in, y + out, argmax + out); });
}

void MaxPoolBackward(const BlockedMaxPool& p, const float* dy, const uint8_t* argmax, float* dx) {
  auto* backward = p.block == 8 ? Backward8 : Backward16;
  ForEachPlane(p, [&](int64_t in, int64_t out) { backward(p, dy + out, argmax + out, dx + in); });
}

}  // namespace onednn
}  // namespace cnnbench
