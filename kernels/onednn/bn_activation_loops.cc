// The loops of kernels/onednn/bn_activation_loops.h. Each pass splits the
// runs into items of at most kItemElements elements (a run's positions in
// spans), the items over the OpenMP team; each thread's items run in a
// function compiled for AVX-512, AVX2 and the baseline (target_clones; the
// parallel regions stay outside them, as GCC outlines a region before it
// clones). The per-element arithmetic is templated on the kind and inlined
// into each clone; the exponential is a polynomial GCC vectorises (std::exp
// is a call it does not).
#include "kernels/onednn/bn_activation_loops.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>

#include "kernels/onednn/masked_sum.h"

namespace cnnbench {
namespace onednn {
namespace {

#define CNNBENCH_LOOP_INLINE __attribute__((always_inline)) inline

// Elements per item: a reduction's float partial sums stay short (each lane
// sums at most this many values before they are added in double).
constexpr int64_t kItemElements = 16384;

// The loops read and write fp32 (bf16 is widened into staging first,
// below).
CNNBENCH_LOOP_INLINE float Load(const float* p) { return *p; }
CNNBENCH_LOOP_INLINE void Store(float* p, float v) { *p = v; }

// exp(x): x = n ln2 + r with |r| <= ln2 / 2 (ln2 in two parts, so r is
// exact to fp32), e^r by a degree-7 polynomial (Cephes' expf
// coefficients), times 2^n built in the exponent bits. Clamped to
// [-87, 88], where 2^n stays a normal number. n is rounded by a
// conversion to int (the file is built with -ffast-math, which would fold
// the add-and-subtract rounding trick away).
CNNBENCH_LOOP_INLINE float Exp(float x) {
  x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
  const float t = x * 1.44269504088896341f;
  const int32_t i = static_cast<int32_t>(t + (t >= 0.0f ? 0.5f : -0.5f));
  const float n = static_cast<float>(i);
  float r = x - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = p * r * r + r + 1.0f;
  return e * __builtin_bit_cast(float, (i + 127) << 23);
}

CNNBENCH_LOOP_INLINE float Sigmoid(float u) { return 1.0f / (1.0f + Exp(-u)); }
CNNBENCH_LOOP_INLINE float Relu6(float v) { return v > 0.0f ? (v < 6.0f ? v : 6.0f) : 0.0f; }

// f(u) and f'(u) as kernels/activation.h defines them; GELU's two kinds
// call its (scalar) erf and tanh.
template <ActivationKind K>
CNNBENCH_LOOP_INLINE float Forward(float u) {
  if constexpr (K == ActivationKind::kSigmoid) {
    return Sigmoid(u);
  } else if constexpr (K == ActivationKind::kSilu) {
    return u * Sigmoid(u);
  } else if constexpr (K == ActivationKind::kHardSigmoid) {
    return Relu6(u + 3.0f) * (1.0f / 6.0f);
  } else if constexpr (K == ActivationKind::kHardSwish) {
    return u * Relu6(u + 3.0f) * (1.0f / 6.0f);
  } else {
    return ActivationForward(K, u);
  }
}

template <ActivationKind K>
CNNBENCH_LOOP_INLINE float Derivative(float u) {
  if constexpr (K == ActivationKind::kSigmoid) {
    const float s = Sigmoid(u);
    return s * (1.0f - s);
  } else if constexpr (K == ActivationKind::kSilu) {
    const float s = Sigmoid(u);
    return s * (1.0f + u * (1.0f - s));
  } else if constexpr (K == ActivationKind::kHardSigmoid) {
    return u > -3.0f && u < 3.0f ? 1.0f / 6.0f : 0.0f;
  } else if constexpr (K == ActivationKind::kHardSwish) {
    return u < -3.0f ? 0.0f : (u <= 3.0f ? (2.0f * u + 3.0f) * (1.0f / 6.0f) : 1.0f);
  } else {
    return ActivationDerivative(K, u);
  }
}

// Calls `kind_fn` with the kind as a compile-time constant.
template <typename F>
CNNBENCH_LOOP_INLINE void WithKind(ActivationKind kind, const F& kind_fn) {
  switch (kind) {
    case ActivationKind::kSigmoid:
      return kind_fn(std::integral_constant<ActivationKind, ActivationKind::kSigmoid>());
    case ActivationKind::kSilu:
      return kind_fn(std::integral_constant<ActivationKind, ActivationKind::kSilu>());
    case ActivationKind::kHardSigmoid:
      return kind_fn(std::integral_constant<ActivationKind, ActivationKind::kHardSigmoid>());
    case ActivationKind::kHardSwish:
      return kind_fn(std::integral_constant<ActivationKind, ActivationKind::kHardSwish>());
    case ActivationKind::kGelu:
      return kind_fn(std::integral_constant<ActivationKind, ActivationKind::kGelu>());
    case ActivationKind::kGeluTanh:
      return kind_fn(std::integral_constant<ActivationKind, ActivationKind::kGeluTanh>());
    case ActivationKind::kNone:
    case ActivationKind::kRelu:
    case ActivationKind::kRelu6:
    case ActivationKind::kCount:
      return kind_fn(std::integral_constant<ActivationKind, ActivationKind::kNone>());
  }
}

// The items of a pass: each run's positions in spans of about
// kItemElements elements.
struct Items {
  int64_t span = 1;     // positions per item
  int64_t per_run = 1;  // items per run
  int64_t count = 0;    // items in all
  explicit Items(const ChannelRuns& runs)
      : span(std::max<int64_t>(1, std::min(runs.positions, kItemElements / runs.lanes))),
        per_run((runs.positions + span - 1) / span),
        count(runs.count * per_run) {}
};

// Item i's run, first channel, element offset and positions [p0, p1).
struct Item {
  int64_t c0, start, p0, p1;
  Item(const ChannelRuns& runs, const Items& items, int64_t i) {
    const int64_t r = i / items.per_run;
    c0 = runs.FirstChannel(r);
    start = runs.Start(r);
    p0 = (i % items.per_run) * items.span;
    p1 = std::min(runs.positions, p0 + items.span);
  }
};

// Adds a thread's float partials (lanes) into its double sums at c0.
CNNBENCH_LOOP_INLINE void Flush(int64_t lanes, float* acc0, float* acc1, double* out0,
                                double* out1) {
  for (int64_t j = 0; j < lanes; ++j) {
    out0[j] += static_cast<double>(acc0[j]);
    out1[j] += static_cast<double>(acc1[j]);
    acc0[j] = acc1[j] = 0.0f;
  }
}

// ---- One thread's items of each pass. `out0`/`out1`: the thread's double
// sums (channels each); `acc0`/`acc1`: its float partials (lanes each, 0).
// Each pass's item body is templated on the lane count L: 16 or 8 (a
// blocked layout: the per-channel constants copied into registers, the
// inner loop one vector), 1 (plain NCHW: one channel's constants, the loop
// over positions), or 0 (NHWC: `lanes` at run time, a long inner loop).

// Per-lane constants of an item: L of them copied (L > 0), else a pointer.
template <int L>
struct LaneConstants {
  float v[L];
  CNNBENCH_LOOP_INLINE explicit LaneConstants(const float* from) {
    for (int j = 0; j < L; ++j) v[j] = from[j];
  }
  CNNBENCH_LOOP_INLINE float operator[](int64_t j) const { return v[j]; }
};
template <>
struct LaneConstants<0> {
  const float* v;
  CNNBENCH_LOOP_INLINE explicit LaneConstants(const float* from) : v(from) {}
  CNNBENCH_LOOP_INLINE float operator[](int64_t j) const { return v[j]; }
};

// Calls body(std::integral_constant<int, L>) with the runs' lane count as
// L where it is 16, 8 or 1, else 0.
template <typename F>
CNNBENCH_LOOP_INLINE void WithLanes(int64_t lanes, const F& body) {
  if (lanes == 16) return body(std::integral_constant<int, 16>());
  if (lanes == 8) return body(std::integral_constant<int, 8>());
  if (lanes == 1) return body(std::integral_constant<int, 1>());
  return body(std::integral_constant<int, 0>());
}

template <typename T, int L>
CNNBENCH_LOOP_INLINE void MomentsItem(const Item& it, int64_t lanes, const T* __restrict x,
                                      const float* __restrict origin, float* __restrict acc0,
                                      float* __restrict acc1) {
  const T* base = x + it.start;
  if constexpr (L == 1) {
    const float k = origin[it.c0];
    float s0 = 0.0f, s1 = 0.0f;
#pragma omp simd simdlen(16) reduction(+ : s0, s1)
    for (int64_t p = it.p0; p < it.p1; ++p) {
      const float v = Load(base + p) - k;
      s0 += v;
      s1 += v * v;
    }
    acc0[0] = s0;
    acc1[0] = s1;
  } else {
    const int64_t n = L > 0 ? L : lanes;
    const LaneConstants<L> o(origin + it.c0);
    for (int64_t p = it.p0; p < it.p1; ++p) {
      const T* row = base + p * n;
#pragma omp simd simdlen(16)
      for (int64_t j = 0; j < n; ++j) {
        const float v = Load(row + j) - o[j];
        acc0[j] += v;
        acc1[j] += v * v;
      }
    }
  }
}

template <typename T>
CNNBENCH_LOOP_INLINE void MomentsItems(const ChannelRuns& runs, const T* x, const float* origin,
                                       double* out0, double* out1, float* acc0, float* acc1,
                                       int64_t begin, int64_t end) {
  const Items items(runs);
  WithLanes(
      runs.lanes, [&](auto lanes) __attribute__((always_inline)) {
        for (int64_t i = begin; i < end; ++i) {
          const Item it(runs, items, i);
          MomentsItem<T, decltype(lanes)::value>(it, runs.lanes, x, origin, acc0, acc1);
          Flush(runs.lanes, acc0, acc1, out0 + it.c0, out1 + it.c0);
        }
      });
}

template <typename T, ActivationKind K, int L>
CNNBENCH_LOOP_INLINE void ActivateItem(const Item& it, int64_t lanes, const T* __restrict x,
                                       const float* __restrict center,
                                       const float* __restrict scale, const float* __restrict shift,
                                       const float* __restrict keep, T* __restrict z) {
  const int64_t n = L > 0 ? L : lanes;
  const LaneConstants<L> o(center + it.c0), s(scale + it.c0), b(shift + it.c0), m(keep + it.c0);
  if constexpr (L == 1) {
#pragma omp simd simdlen(16)
    for (int64_t p = it.p0; p < it.p1; ++p)
      Store(z + it.start + p, Forward<K>((Load(x + it.start + p) - o[0]) * s[0] + b[0]) * m[0]);
  } else {
    for (int64_t p = it.p0; p < it.p1; ++p) {
      const int64_t at = it.start + p * n;
#pragma omp simd simdlen(16)
      for (int64_t j = 0; j < n; ++j)
        Store(z + at + j, Forward<K>((Load(x + at + j) - o[j]) * s[j] + b[j]) * m[j]);
    }
  }
}

template <typename T, ActivationKind K>
CNNBENCH_LOOP_INLINE void ActivateItems(const ChannelRuns& runs, const T* x, const float* center,
                                        const float* scale, const float* shift, const float* keep,
                                        T* z, int64_t begin, int64_t end) {
  const Items items(runs);
  WithLanes(
      runs.lanes, [&](auto lanes) __attribute__((always_inline)) {
        for (int64_t i = begin; i < end; ++i)
          ActivateItem<T, K, decltype(lanes)::value>(Item(runs, items, i), runs.lanes, x, center,
                                                     scale, shift, keep, z);
      });
}

// g = dz f'(u) summed, and g (x - mean); g stored where `g_out` is given.
// With kTwo, dz is the sum dz + dz2 (an output read by two layers). g_out
// may be dz or dz2 (dx over dy; bf16's staging): each element is read
// before its own g is written, so the restrict holds in GCC's loops.
template <typename T, ActivationKind K, int L, bool kTwo>
CNNBENCH_LOOP_INLINE void GradientSumItem(const Item& it, int64_t lanes, const T* __restrict x,
                                          const T* __restrict dz, const T* __restrict dz2,
                                          const float* __restrict scale,
                                          const float* __restrict shift,
                                          const float* __restrict mean, T* __restrict g_out,
                                          float* __restrict acc0, float* __restrict acc1) {
  const int64_t n = L > 0 ? L : lanes;
  const LaneConstants<L> s(scale + it.c0), b(shift + it.c0), mu(mean + it.c0);
  if constexpr (L == 1) {
    float g0 = 0.0f, g1 = 0.0f;
#pragma omp simd simdlen(16) reduction(+ : g0, g1)
    for (int64_t p = it.p0; p < it.p1; ++p) {
      const float v = Load(x + it.start + p) - mu[0];
      float dzp = Load(dz + it.start + p);
      if constexpr (kTwo) dzp += Load(dz2 + it.start + p);
      const float g = dzp * Derivative<K>(v * s[0] + b[0]);
      if (g_out != nullptr) Store(g_out + it.start + p, g);
      g0 += g;
      g1 += g * v;
    }
    acc0[0] = g0;
    acc1[0] = g1;
  } else {
    for (int64_t p = it.p0; p < it.p1; ++p) {
      const int64_t at = it.start + p * n;
#pragma omp simd simdlen(16)
      for (int64_t j = 0; j < n; ++j) {
        const float v = Load(x + at + j) - mu[j];
        float dzp = Load(dz + at + j);
        if constexpr (kTwo) dzp += Load(dz2 + at + j);
        const float g = dzp * Derivative<K>(v * s[j] + b[j]);
        if (g_out != nullptr) Store(g_out + at + j, g);
        acc0[j] += g;
        acc1[j] += g * v;
      }
    }
  }
}

template <typename T, ActivationKind K, bool kTwo>
CNNBENCH_LOOP_INLINE void GradientSumItems(const ChannelRuns& runs, const T* x, const T* dz,
                                           const T* dz2, const float* scale, const float* shift,
                                           const float* mean, T* g_out, double* out0, double* out1,
                                           float* acc0, float* acc1, int64_t begin, int64_t end) {
  const Items items(runs);
  WithLanes(
      runs.lanes, [&](auto lanes) __attribute__((always_inline)) {
        for (int64_t i = begin; i < end; ++i) {
          const Item it(runs, items, i);
          // Two loops, so neither tests g_out per element.
          constexpr int kL = decltype(lanes)::value;
          if (g_out != nullptr) {
            GradientSumItem<T, K, kL, kTwo>(it, runs.lanes, x, dz, dz2, scale, shift, mean, g_out,
                                            acc0, acc1);
          } else {
            GradientSumItem<T, K, kL, kTwo>(it, runs.lanes, x, dz, dz2, scale, shift, mean,
                                            static_cast<T*>(nullptr), acc0, acc1);
          }
          Flush(runs.lanes, acc0, acc1, out0 + it.c0, out1 + it.c0);
        }
      });
}

// dx = a g + b (x - center) + d in place over g.
template <typename T, int L>
CNNBENCH_LOOP_INLINE void GradientItem(const Item& it, int64_t lanes, const T* __restrict x,
                                       const float* __restrict center, const float* __restrict a,
                                       const float* __restrict b, const float* __restrict d,
                                       T* __restrict dx) {
  const int64_t n = L > 0 ? L : lanes;
  const LaneConstants<L> o(center + it.c0), pa(a + it.c0), pb(b + it.c0), pd(d + it.c0);
  if constexpr (L == 1) {
#pragma omp simd simdlen(16)
    for (int64_t p = it.p0; p < it.p1; ++p) {
      const int64_t at = it.start + p;
      Store(dx + at, pa[0] * Load(dx + at) + pb[0] * (Load(x + at) - o[0]) + pd[0]);
    }
  } else {
    for (int64_t p = it.p0; p < it.p1; ++p) {
      const int64_t at = it.start + p * n;
#pragma omp simd simdlen(16)
      for (int64_t j = 0; j < n; ++j)
        Store(dx + at + j, pa[j] * Load(dx + at + j) + pb[j] * (Load(x + at + j) - o[j]) + pd[j]);
    }
  }
}

template <typename T>
CNNBENCH_LOOP_INLINE void GradientItems(const ChannelRuns& runs, const T* x, const float* center,
                                        const float* a, const float* b, const float* d, T* dx,
                                        int64_t begin, int64_t end) {
  const Items items(runs);
  WithLanes(
      runs.lanes, [&](auto lanes) __attribute__((always_inline)) {
        for (int64_t i = begin; i < end; ++i)
          GradientItem<T, decltype(lanes)::value>(Item(runs, items, i), runs.lanes, x, center, a, b,
                                                  d, dx);
      });
}

// ---- The clones: one function per pass and storage type (target_clones
// takes no template), the kind a switch over inlined instantiations.
#define CNNBENCH_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

#define CNNBENCH_DEFINE_PASSES(T, Suffix)                                                         \
  CNNBENCH_CLONES void Moments##Suffix(const ChannelRuns& runs, const void* x,                    \
                                       const float* origin, double* out0, double* out1,           \
                                       float* acc0, float* acc1, int64_t begin, int64_t end) {    \
    MomentsItems<T>(runs, static_cast<const T*>(x), origin, out0, out1, acc0, acc1, begin, end);  \
  }                                                                                               \
  CNNBENCH_CLONES void Activate##Suffix(ActivationKind kind, const ChannelRuns& runs,             \
                                        const void* x, const float* center, const float* scale,   \
                                        const float* shift, const float* keep, void* z,           \
                                        int64_t begin, int64_t end) {                             \
    WithKind(                                                                                     \
        kind, [&](auto k) __attribute__((always_inline)) {                                        \
          ActivateItems<T, decltype(k)::value>(runs, static_cast<const T*>(x), center, scale,     \
                                               shift, keep, static_cast<T*>(z), begin, end);      \
        });                                                                                       \
  }                                                                                               \
  CNNBENCH_CLONES void GradientSums##Suffix(                                                      \
      ActivationKind kind, const ChannelRuns& runs, const void* x, const void* dz,                \
      const void* dz2, const float* scale, const float* shift, const float* mean, void* g_out,    \
      double* out0, double* out1, float* acc0, float* acc1, int64_t begin, int64_t end) {         \
    const T *in = static_cast<const T*>(x), *d1 = static_cast<const T*>(dz);                      \
    const T* d2 = static_cast<const T*>(dz2);                                                     \
    WithKind(                                                                                     \
        kind, [&](auto k) __attribute__((always_inline)) {                                        \
          constexpr ActivationKind kK = decltype(k)::value;                                       \
          auto sums = [&](auto two) __attribute__((always_inline)) {                              \
            GradientSumItems<T, kK, decltype(two)::value>(runs, in, d1, d2, scale, shift, mean,   \
                                                          static_cast<T*>(g_out), out0, out1,     \
                                                          acc0, acc1, begin, end);                \
          };                                                                                      \
          d2 != nullptr ? sums(std::true_type{}) : sums(std::false_type{});                       \
        });                                                                                       \
  }                                                                                               \
  CNNBENCH_CLONES void Gradient##Suffix(const ChannelRuns& runs, const void* x,                   \
                                        const float* center, const float* a, const float* b,      \
                                        const float* d, void* dx, int64_t begin, int64_t end) {   \
    GradientItems<T>(runs, static_cast<const T*>(x), center, a, b, d, static_cast<T*>(dx), begin, \
                     end);                                                                        \
  }

CNNBENCH_DEFINE_PASSES(float, F32)

// The team's share of `count` items for thread t of n: contiguous.
std::pair<int64_t, int64_t> Share(int64_t count, int t, int n) {
  const int64_t per = (count + n - 1) / n;
  const int64_t begin = std::min(count, t * per);
  return {begin, std::min(count, begin + per)};
}

// ---- bf16: each item's elements (contiguous: positions [p0, p1) of one
// run) widened to fp32 in the thread's staging (three arrays of
// kItemElements floats), the fp32 clones run on them as one run of the
// item's own, and the outputs rounded back (masked_sum.h's conversions,
// AVX-512 where the CPU has it). GCC vectorises the loops on 16-bit data
// in narrow vectors; widening first keeps them at the fp32 loops' width.
struct Staged {
  ChannelRuns runs;  // one run: the item
  int64_t c0 = 0, offset = 0, count = 0;
  float* x;
  float* y;
  float* z;
  Staged(const ChannelRuns& all, const Items& items, int64_t i, float* staging) {
    const Item it(all, items, i);
    runs = {1, 1, it.p1 - it.p0, all.lanes, 0, 0, all.lanes};
    c0 = it.c0;
    offset = it.start + it.p0 * all.lanes;
    count = (it.p1 - it.p0) * all.lanes;
    x = staging;
    y = staging + kItemElements;
    z = staging + 2 * kItemElements;
  }
  void Widen(const void* from, float* to) const {
    ConvertBf16ToF32Run(static_cast<const uint16_t*>(from) + offset, to, 0, count);
  }
  void Narrow(const float* from, void* to) const {
    ConvertF32ToBf16Run(from, static_cast<uint16_t*>(to) + offset, 0, count);
  }
};

float* ThreadStaging(float* staging, int t) {
  return staging + static_cast<int64_t>(t) * 3 * kItemElements;
}

// Runs `reduce(out0, out1, acc0, acc1, begin, end, t)` on each thread's
// share with its own sums in `work`, then adds the threads' sums into
// sum0/sum1.
template <typename F>
void ReduceOverTeam(const ChannelRuns& runs, double* sum0, double* sum1, double* work, int threads,
                    const F& reduce) {
  const int64_t channels = runs.channels;
  const Items items(runs);
  double* partials = work;
  float* floats = reinterpret_cast<float*>(work + static_cast<int64_t>(threads) * 2 * channels);
  int used = 1;
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
#pragma omp single
    used = n;
    double* out0 = partials + static_cast<int64_t>(t) * 2 * channels;
    double* out1 = out0 + channels;
    float* acc0 = floats + static_cast<int64_t>(t) * 2 * runs.lanes;
    float* acc1 = acc0 + runs.lanes;
    std::fill(out0, out0 + 2 * channels, 0.0);
    std::fill(acc0, acc0 + 2 * runs.lanes, 0.0f);
    const auto [begin, end] = Share(items.count, t, n);
    reduce(out0, out1, acc0, acc1, begin, end, t);
  }
  for (int64_t c = 0; c < channels; ++c) {
    double s0 = 0.0, s1 = 0.0;
    for (int t = 0; t < used; ++t) {
      s0 += partials[static_cast<int64_t>(t) * 2 * channels + c];
      s1 += partials[static_cast<int64_t>(t) * 2 * channels + channels + c];
    }
    sum0[c] = s0;
    sum1[c] = s1;
  }
}

}  // namespace

int64_t ReductionWorkDoubles(const ChannelRuns& runs, int threads) {
  return static_cast<int64_t>(threads) * 2 * (runs.channels + runs.lanes);
}

int64_t StagingFloats(int threads) { return static_cast<int64_t>(threads) * 3 * kItemElements; }

void ChannelMoments(DType dtype, const ChannelRuns& runs, const void* x, const float* origin,
                    double* sum, double* sum_sq, double* work, float* staging, int threads) {
  const Items items(runs);
  ReduceOverTeam(runs, sum, sum_sq, work, threads,
                 [&](double* o0, double* o1, float* a0, float* a1, int64_t b, int64_t e, int t) {
                   if (dtype != DType::kBF16)
                     return MomentsF32(runs, x, origin, o0, o1, a0, a1, b, e);
                   for (int64_t i = b; i < e; ++i) {
                     const Staged s(runs, items, i, ThreadStaging(staging, t));
                     s.Widen(x, s.x);
                     MomentsF32(s.runs, s.x, origin + s.c0, o0 + s.c0, o1 + s.c0, a0, a1, 0, 1);
                   }
                 });
}

void NormActivate(DType dtype, ActivationKind kind, const ChannelRuns& runs, const void* x,
                  const float* center, const float* scale, const float* shift, const float* keep,
                  void* z, float* staging, int threads) {
  const Items items(runs);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const auto [b, e] = Share(items.count, t, omp_get_num_threads());
    if (dtype != DType::kBF16) {
      ActivateF32(kind, runs, x, center, scale, shift, keep, z, b, e);
    } else {
      for (int64_t i = b; i < e; ++i) {
        const Staged s(runs, items, i, ThreadStaging(staging, t));
        s.Widen(x, s.x);
        ActivateF32(kind, s.runs, s.x, center + s.c0, scale + s.c0, shift + s.c0, keep + s.c0, s.z,
                    0, 1);
        s.Narrow(s.z, z);
      }
    }
  }
}

void NormActivateGradientSums(DType dtype, ActivationKind kind, const ChannelRuns& runs,
                              const void* x, const void* dz, const void* dz2, const float* scale,
                              const float* shift, const float* mean, void* g_out, double* sum_g,
                              double* sum_gx, double* work, float* staging, int threads) {
  const Items items(runs);
  ReduceOverTeam(runs, sum_g, sum_gx, work, threads,
                 [&](double* o0, double* o1, float* a0, float* a1, int64_t b, int64_t e, int t) {
                   if (dtype != DType::kBF16)
                     return GradientSumsF32(kind, runs, x, dz, dz2, scale, shift, mean, g_out, o0,
                                            o1, a0, a1, b, e);
                   for (int64_t i = b; i < e; ++i) {
                     const Staged s(runs, items, i, ThreadStaging(staging, t));
                     s.Widen(x, s.x);
                     s.Widen(dz, s.y);
                     if (dz2 != nullptr) s.Widen(dz2, s.z);  // g over it: read first
                     GradientSumsF32(kind, s.runs, s.x, s.y, dz2 != nullptr ? s.z : nullptr,
                                     scale + s.c0, shift + s.c0,
                                     mean + s.c0, g_out != nullptr ? s.z : nullptr, o0 + s.c0,
                                     o1 + s.c0, a0, a1, 0, 1);
                     if (g_out != nullptr) s.Narrow(s.z, g_out);
                   }
                 });
}

void NormGradientInPlace(DType dtype, const ChannelRuns& runs, const void* x, const float* center,
                         const float* a, const float* b, const float* d, void* dx, float* staging,
                         int threads) {
  const Items items(runs);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const auto [begin, end] = Share(items.count, t, omp_get_num_threads());
    if (dtype != DType::kBF16) {
      GradientF32(runs, x, center, a, b, d, dx, begin, end);
    } else {
      for (int64_t i = begin; i < end; ++i) {
        const Staged s(runs, items, i, ThreadStaging(staging, t));
        s.Widen(x, s.x);
        s.Widen(dx, s.y);
        GradientF32(s.runs, s.x, center + s.c0, a + s.c0, b + s.c0, d + s.c0, s.y, 0, 1);
        s.Narrow(s.y, dx);
      }
    }
  }
}

float LoopExp(float x) { return Exp(x); }

float LoopActivation(ActivationKind kind, float u) {
  float out = 0.0f;
  WithKind(kind, [&](auto k) { out = Forward<decltype(k)::value>(u); });
  return out;
}

float LoopActivationDerivative(ActivationKind kind, float u) {
  float out = 0.0f;
  WithKind(kind, [&](auto k) { out = Derivative<decltype(k)::value>(u); });
  return out;
}

}  // namespace onednn
}  // namespace cnnbench
