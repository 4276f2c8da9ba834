#include "kernels/onednn/masked_sum.h"

#include <omp.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cstring>

#include "kernels/activation.h"
#include "kernels/onednn/loop_util.h"

namespace cnnbench {
namespace onednn {
namespace {

// Up to this many parts are summed in one pass (more: the rest are added
// in further passes through dx).
constexpr int kMaxParts = 4;

// Whether dy passes at the output y of the fused activation kMask (kNone:
// unmasked): the reference's own ActivationPasses (ReLU: y > 0; ReLU6:
// 0 < y < 6; NaN masked), the kind a constant, so the loops vectorise it.
template <ActivationKind kMask>
__attribute__((always_inline)) inline bool Passes(float y) {
  return ActivationPasses(kMask, y);
}

// dx[begin, end) = p0 + ... (up to kMaxParts parts), masked by y where the
// fused activation kMask is not kNone. Inlined into each ISA clone below,
// so it is compiled for each.
template <ActivationKind kMask>
__attribute__((always_inline)) inline void SumGroupF32(const float* y, const float* const* parts,
                                                       int num_parts, float* dx, int64_t begin,
                                                       int64_t end) {
  const float* p0 = parts[0];
  const float* p1 = num_parts > 1 ? parts[1] : nullptr;
  const float* p2 = num_parts > 2 ? parts[2] : nullptr;
  const float* p3 = num_parts > 3 ? parts[3] : nullptr;
  constexpr bool kMasked = kMask != ActivationKind::kNone;
  auto keep = [y](int64_t i, float sum) { return !kMasked || Passes<kMask>(y[i]) ? sum : 0.0f; };
  switch (num_parts) {
    case 1:
      if (!kMasked && dx == p0) break;
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) dx[i] = keep(i, p0[i]);
      break;
    case 2:
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) dx[i] = keep(i, p0[i] + p1[i]);
      break;
    case 3:
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) dx[i] = keep(i, p0[i] + p1[i] + p2[i]);
      break;
    default:
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) dx[i] = keep(i, p0[i] + p1[i] + p2[i] + p3[i]);
      break;
  }
}

// bf16: a group's sum in fp32 (added in part order, as the fp32 loops do),
// then rounded once (a running sum re-enters as a bf16 part).
template <ActivationKind kMask>
__attribute__((always_inline)) inline void SumGroupBf16(const uint16_t* y,
                                                        const uint16_t* const* parts, int num_parts,
                                                        uint16_t* dx, int64_t begin, int64_t end) {
  const uint16_t* p0 = parts[0];
  const uint16_t* p1 = num_parts > 1 ? parts[1] : nullptr;
  const uint16_t* p2 = num_parts > 2 ? parts[2] : nullptr;
  const uint16_t* p3 = num_parts > 3 ? parts[3] : nullptr;
  constexpr bool kMasked = kMask != ActivationKind::kNone;
  auto store = [y, dx](int64_t i, float sum) {
    dx[i] = !kMasked || Passes<kMask>(Bf16ToFloat(y[i])) ? FloatToBf16(sum) : uint16_t{0};
  };
  switch (num_parts) {
    case 1:
      if (!kMasked && dx == p0) break;
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) store(i, Bf16ToFloat(p0[i]));
      break;
    case 2:
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) store(i, Bf16ToFloat(p0[i]) + Bf16ToFloat(p1[i]));
      break;
    case 3:
#pragma omp simd
      for (int64_t i = begin; i < end; ++i)
        store(i, Bf16ToFloat(p0[i]) + Bf16ToFloat(p1[i]) + Bf16ToFloat(p2[i]));
      break;
    default:
#pragma omp simd
      for (int64_t i = begin; i < end; ++i)
        store(i, Bf16ToFloat(p0[i]) + Bf16ToFloat(p1[i]) + Bf16ToFloat(p2[i]) + Bf16ToFloat(p3[i]));
      break;
  }
}

// One thread's range. Compiled for AVX-512, AVX2 and the baseline; the
// loader picks the CPU's best (the library itself is built for the baseline).
// One function per fused kind (ReLU, ReLU6): target_clones takes no template.
__attribute__((target_clones("avx512f", "avx2", "default"))) void SumF32(const float* y,
                                                                         const float* const* parts,
                                                                         int num_parts, float* dx,
                                                                         int64_t begin,
                                                                         int64_t end) {
  SumGroupF32<ActivationKind::kRelu>(y, parts, num_parts, dx, begin, end);
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void SumF32Relu6(
    const float* y, const float* const* parts, int num_parts, float* dx, int64_t begin,
    int64_t end) {
  SumGroupF32<ActivationKind::kRelu6>(y, parts, num_parts, dx, begin, end);
}

// bf16 with AVX-512F intrinsics (bf16 runs only where the CPU has
// avx512_bf16, so AVX-512F is there; GCC's own vectorisation of the loops
// above keeps 16-bit lanes in 256-bit vectors and ran them at half the fp32
// loop's rate). The same arithmetic as SumGroupBf16: parts widened exactly,
// added in order in fp32, rounded to nearest even once, NaN made quiet;
// the tail is SumGroupBf16's.
#if defined(__x86_64__)
__attribute__((target("avx512f"))) inline __m512 WidenBf16x16(const uint16_t* p) {
  const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
}

// The bf16 bits of 16 sums, each in the low half of a 32-bit lane.
__attribute__((target("avx512f"))) inline __m512i RoundBf16x16(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i high = _mm512_srli_epi32(bits, 16);
  const __m512i lsb = _mm512_and_si512(high, _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(
      _mm512_add_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0x7fff)), lsb), 16);
  const __m512i quiet = _mm512_or_si512(high, _mm512_set1_epi32(0x40));
  return _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), rounded, quiet);
}

// The lanes of 16 fp32 values where dy passes under the fused activation
// kMask (not kNone): Passes's comparisons, ordered (a NaN fails them).
template <ActivationKind kMask>
__attribute__((target("avx512f"))) inline __mmask16 PassesX16(__m512 y) {
  const __mmask16 above = _mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_GT_OQ);
  if constexpr (kMask == ActivationKind::kRelu6)
    return above & _mm512_cmp_ps_mask(y, _mm512_set1_ps(6.0f), _CMP_LT_OQ);
  return above;
}

template <ActivationKind kMask>
__attribute__((target("avx512f"))) void SumBf16Avx512(const uint16_t* y,
                                                      const uint16_t* const* parts, int num_parts,
                                                      uint16_t* dx, int64_t begin, int64_t end) {
  static_assert(kMask == ActivationKind::kNone || kMask == ActivationKind::kRelu ||
                kMask == ActivationKind::kRelu6);
  constexpr bool kMasked = kMask != ActivationKind::kNone;
  if (!kMasked && num_parts == 1 && dx == parts[0]) return;
  int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    __m512 sum = WidenBf16x16(parts[0] + i);
    for (int p = 1; p < num_parts; ++p) sum = _mm512_add_ps(sum, WidenBf16x16(parts[p] + i));
    __m512i out = RoundBf16x16(sum);
    if constexpr (kMasked) out = _mm512_maskz_mov_epi32(PassesX16<kMask>(WidenBf16x16(y + i)), out);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dx + i), _mm512_cvtepi32_epi16(out));
  }
  SumGroupBf16<kMask>(y, parts, num_parts, dx, i, end);
}

// ReLU6's forward in place on bf16: a value in (0, 6) keeps its bits, one
// at or above 6 (+inf included) becomes 6, the rest (NaN included) +0 —
// ActivationForward's clip, exact (no rounding: 0 and 6 are bf16 values).
__attribute__((target("avx512f"))) void ClipBf16Avx512(uint16_t* y, int64_t begin, int64_t end) {
  const uint16_t six = FloatToBf16(6.0f);
  int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + i));
    const __m512 v = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
    const __mmask16 high = _mm512_cmp_ps_mask(v, _mm512_set1_ps(6.0f), _CMP_GE_OQ);
    __m512i out =
        _mm512_maskz_mov_epi32(PassesX16<ActivationKind::kRelu6>(v), _mm512_cvtepu16_epi32(bits));
    out = _mm512_mask_mov_epi32(out, high, _mm512_set1_epi32(six));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm512_cvtepi32_epi16(out));
  }
  for (; i < end; ++i)
    y[i] = FloatToBf16(ActivationForward(ActivationKind::kRelu6, Bf16ToFloat(y[i])));
}

const bool kHasAvx512 = __builtin_cpu_supports("avx512f");

__attribute__((target("avx512f"))) void F32ToBf16Avx512(const float* src, uint16_t* dst,
                                                        int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 16 <= end; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm512_cvtepi32_epi16(RoundBf16x16(_mm512_loadu_ps(src + i))));
  for (; i < end; ++i) dst[i] = FloatToBf16(src[i]);
}

__attribute__((target("avx512f"))) void ScaleBf16Avx512(const uint16_t* src, float scale,
                                                        uint16_t* dst, int64_t begin, int64_t end) {
  const __m512 factor = _mm512_set1_ps(scale);
  int64_t i = begin;
  for (; i + 16 <= end; i += 16)
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(dst + i),
        _mm512_cvtepi32_epi16(RoundBf16x16(_mm512_mul_ps(WidenBf16x16(src + i), factor))));
  for (; i < end; ++i) dst[i] = FloatToBf16(Bf16ToFloat(src[i]) * scale);
}

__attribute__((target("avx512f"))) void Bf16ToF32Avx512(const uint16_t* src, float* dst,
                                                        int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 16 <= end; i += 16) _mm512_storeu_ps(dst + i, WidenBf16x16(src + i));
  for (; i < end; ++i) dst[i] = Bf16ToFloat(src[i]);
}
#endif

__attribute__((target_clones("avx2", "default"))) void F32ToBf16Generic(const float* src,
                                                                        uint16_t* dst,
                                                                        int64_t begin,
                                                                        int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) dst[i] = FloatToBf16(src[i]);
}

__attribute__((target_clones("avx2", "default"))) void Bf16ToF32Generic(const uint16_t* src,
                                                                        float* dst, int64_t begin,
                                                                        int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) dst[i] = Bf16ToFloat(src[i]);
}

__attribute__((target_clones("avx2", "default"))) void SumBf16Generic(const uint16_t* y,
                                                                      const uint16_t* const* parts,
                                                                      int num_parts, uint16_t* dx,
                                                                      int64_t begin, int64_t end) {
  SumGroupBf16<ActivationKind::kRelu>(y, parts, num_parts, dx, begin, end);
}

__attribute__((target_clones("avx2", "default"))) void SumBf16Relu6Generic(
    const uint16_t* y, const uint16_t* const* parts, int num_parts, uint16_t* dx, int64_t begin,
    int64_t end) {
  SumGroupBf16<ActivationKind::kRelu6>(y, parts, num_parts, dx, begin, end);
}

// dst = src * scale (fp32 arithmetic; bf16 rounded once).
__attribute__((target_clones("avx512f", "avx2", "default"))) void ScaleF32(const float* src,
                                                                           float scale, float* dst,
                                                                           int64_t begin,
                                                                           int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) dst[i] = src[i] * scale;
}

__attribute__((target_clones("avx2", "default"))) void ScaleBf16Generic(const uint16_t* src,
                                                                        float scale, uint16_t* dst,
                                                                        int64_t begin,
                                                                        int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) dst[i] = FloatToBf16(Bf16ToFloat(src[i]) * scale);
}

// ReLU6's forward in place (ActivationForward), fp32 and bf16.
__attribute__((target_clones("avx512f", "avx2", "default"))) void ClipF32(float* y, int64_t begin,
                                                                          int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) y[i] = ActivationForward(ActivationKind::kRelu6, y[i]);
}

__attribute__((target_clones("avx2", "default"))) void ClipBf16Generic(uint16_t* y, int64_t begin,
                                                                       int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i)
    y[i] = FloatToBf16(ActivationForward(ActivationKind::kRelu6, Bf16ToFloat(y[i])));
}

__attribute__((target_clones("avx2", "default"))) void PlainSumBf16Generic(
    const uint16_t*, const uint16_t* const* parts, int num_parts, uint16_t* dx, int64_t begin,
    int64_t end) {
  SumGroupBf16<ActivationKind::kNone>(nullptr, parts, num_parts, dx, begin, end);
}

void SumBf16(const uint16_t* y, const uint16_t* const* parts, int num_parts, uint16_t* dx,
             int64_t begin, int64_t end) {
#if defined(__x86_64__)
  if (kHasAvx512) return SumBf16Avx512<ActivationKind::kRelu>(y, parts, num_parts, dx, begin, end);
#endif
  SumBf16Generic(y, parts, num_parts, dx, begin, end);
}

void SumBf16Relu6(const uint16_t* y, const uint16_t* const* parts, int num_parts, uint16_t* dx,
                  int64_t begin, int64_t end) {
#if defined(__x86_64__)
  if (kHasAvx512) return SumBf16Avx512<ActivationKind::kRelu6>(y, parts, num_parts, dx, begin, end);
#endif
  SumBf16Relu6Generic(y, parts, num_parts, dx, begin, end);
}

void ClipBf16(uint16_t* y, int64_t begin, int64_t end) {
#if defined(__x86_64__)
  if (kHasAvx512) return ClipBf16Avx512(y, begin, end);
#endif
  ClipBf16Generic(y, begin, end);
}

void PlainSumBf16(const uint16_t* y, const uint16_t* const* parts, int num_parts, uint16_t* dx,
                  int64_t begin, int64_t end) {
#if defined(__x86_64__)
  if (kHasAvx512) return SumBf16Avx512<ActivationKind::kNone>(y, parts, num_parts, dx, begin, end);
#endif
  PlainSumBf16Generic(y, parts, num_parts, dx, begin, end);
}

// Unmasked (the first part may be dx itself).
__attribute__((target_clones("avx512f", "avx2", "default"))) void PlainSumF32(
    const float*, const float* const* parts, int num_parts, float* dx, int64_t begin, int64_t end) {
  SumGroupF32<ActivationKind::kNone>(nullptr, parts, num_parts, dx, begin, end);
}

// dx[begin, end) = the sum of the parts (each read from `offset` on), by
// `group_sum` (masked by y > 0 where it masks) in groups of up to kMaxParts:
// after the first group dx holds the sum so far and re-enters as a part.
template <typename T, typename Group>
void Grouped(const void* y, const void* const* parts, int num_parts, int64_t offset, void* dx,
             int64_t begin, int64_t end, Group group_sum) {
  T* out = static_cast<T*>(dx);
  int first = 0;
  while (first < num_parts) {
    const T* group[kMaxParts];
    int n = 0;
    if (first > 0) group[n++] = out;
    while (n < kMaxParts && first < num_parts)
      group[n++] = static_cast<const T*>(parts[first++]) + offset;
    group_sum(static_cast<const T*>(y), group, n, out, begin, end);
  }
}

// Grouped over [0, count), split over the OpenMP team (ThreadChunk).
template <typename T, typename Group>
void Parallel(const void* y, const void* const* parts, int num_parts, void* dx, int64_t count,
              Group group_sum) {
#pragma omp parallel
  {
    const auto [begin, end] = ThreadChunk(count, 64 / static_cast<int64_t>(sizeof(T)),
                                          omp_get_thread_num(), omp_get_num_threads());
    if (begin < end) Grouped<T>(y, parts, num_parts, 0, dx, begin, end, group_sum);
  }
}

// fn(begin, end) on each thread's part of [0, count) (ThreadChunk in runs
// of 32 elements: whole cache lines of fp32 and of bf16).
template <typename Fn>
void OnTeam(int64_t count, Fn fn) {
  if (count <= 0) return;
#pragma omp parallel
  {
    const auto [begin, end] = ThreadChunk(count, 32, omp_get_thread_num(), omp_get_num_threads());
    if (begin < end) fn(begin, end);
  }
}

}  // namespace

void SumRun(DType dtype, const void* const* parts, int num_parts, int64_t offset, void* dx,
            int64_t count) {
  if (num_parts <= 0 || count <= 0) return;
  if (dtype == DType::kBF16) {
    Grouped<uint16_t>(nullptr, parts, num_parts, offset, dx, 0, count, PlainSumBf16);
  } else {
    Grouped<float>(nullptr, parts, num_parts, offset, dx, 0, count, PlainSumF32);
  }
}

void ParallelSum(DType dtype, const void* const* parts, int num_parts, void* dx, int64_t count) {
  if (num_parts <= 0 || count <= 0) return;
  if (dtype == DType::kBF16) {
    Parallel<uint16_t>(nullptr, parts, num_parts, dx, count, PlainSumBf16);
  } else {
    Parallel<float>(nullptr, parts, num_parts, dx, count, PlainSumF32);
  }
}

void ConvertF32ToBf16Run(const float* src, uint16_t* dst, int64_t begin, int64_t end) {
  if (begin >= end) return;
#if defined(__x86_64__)
  if (kHasAvx512) return F32ToBf16Avx512(src, dst, begin, end);
#endif
  F32ToBf16Generic(src, dst, begin, end);
}

void ScaleRun(DType dtype, const void* src, float scale, void* dst, int64_t begin, int64_t end) {
  if (begin >= end) return;
  if (dtype != DType::kBF16)
    return ScaleF32(static_cast<const float*>(src), scale, static_cast<float*>(dst), begin, end);
  const uint16_t* in = static_cast<const uint16_t*>(src);
  uint16_t* out = static_cast<uint16_t*>(dst);
#if defined(__x86_64__)
  if (kHasAvx512) return ScaleBf16Avx512(in, scale, out, begin, end);
#endif
  ScaleBf16Generic(in, scale, out, begin, end);
}

void ConvertF32ToBf16(const float* src, uint16_t* dst, int64_t count) {
  OnTeam(count,
         [src, dst](int64_t begin, int64_t end) { ConvertF32ToBf16Run(src, dst, begin, end); });
}

void ConvertBf16ToF32Run(const uint16_t* src, float* dst, int64_t begin, int64_t end) {
  if (begin >= end) return;
#if defined(__x86_64__)
  if (kHasAvx512) return Bf16ToF32Avx512(src, dst, begin, end);
#endif
  Bf16ToF32Generic(src, dst, begin, end);
}

void ConvertBf16ToF32(const uint16_t* src, float* dst, int64_t count) {
  OnTeam(count,
         [src, dst](int64_t begin, int64_t end) { ConvertBf16ToF32Run(src, dst, begin, end); });
}

void MaskedSum(DType dtype, ActivationKind kind, const void* y, const void* const* parts,
               int num_parts, void* dx, int64_t count) {
  if (num_parts <= 0 || count <= 0) return;
  const bool relu6 = kind == ActivationKind::kRelu6;
  if (dtype == DType::kBF16) {
    Parallel<uint16_t>(y, parts, num_parts, dx, count, relu6 ? SumBf16Relu6 : SumBf16);
  } else {
    Parallel<float>(y, parts, num_parts, dx, count, relu6 ? SumF32Relu6 : SumF32);
  }
}

void ClipRelu6InPlace(DType dtype, void* y, int64_t count) {
  if (dtype == DType::kBF16) {
    OnTeam(count,
           [y](int64_t begin, int64_t end) { ClipBf16(static_cast<uint16_t*>(y), begin, end); });
  } else {
    OnTeam(count, [y](int64_t begin, int64_t end) { ClipF32(static_cast<float*>(y), begin, end); });
  }
}

}  // namespace onednn
}  // namespace cnnbench
