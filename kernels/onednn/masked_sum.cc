#include "kernels/onednn/masked_sum.h"

#include <omp.h>

#include <cstring>

#include "kernels/onednn/common.h"

namespace cnnbench {
namespace onednn {
namespace {

// Up to this many parts are summed in one pass (more: the rest are added
// in further passes through dx).
constexpr int kMaxParts = 4;

float Bf16ToFloat(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof(value));
  return value;
}

uint16_t FloatToBf16(float value) {  // round to nearest even; NaN stays NaN
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

// dx[begin, end) = p0 + ... (up to kMaxParts parts), masked by y > 0 when
// kMasked. Inlined into each ISA clone below, so it is compiled for each.
template <bool kMasked>
__attribute__((always_inline)) inline void SumGroupF32(const float* y, const float* const* parts,
                                                       int num_parts, float* dx, int64_t begin,
                                                       int64_t end) {
  const float* p0 = parts[0];
  const float* p1 = num_parts > 1 ? parts[1] : nullptr;
  const float* p2 = num_parts > 2 ? parts[2] : nullptr;
  const float* p3 = num_parts > 3 ? parts[3] : nullptr;
  auto keep = [y](int64_t i, float sum) { return !kMasked || y[i] > 0.0f ? sum : 0.0f; };
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

// bf16: a group's sum in fp32, then rounded (a running sum re-enters as a
// bf16 part).
template <bool kMasked>
__attribute__((always_inline)) inline void SumGroupBf16(const uint16_t* y,
                                                        const uint16_t* const* parts, int num_parts,
                                                        uint16_t* dx, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    float sum = 0.0f;
    for (int p = 0; p < num_parts; ++p) sum += Bf16ToFloat(parts[p][i]);
    dx[i] = !kMasked || Bf16ToFloat(y[i]) > 0.0f ? FloatToBf16(sum) : 0;
  }
}

// One thread's range. Compiled for AVX-512, AVX2 and the baseline; the
// loader picks the CPU's best (the library itself is built for the baseline).
__attribute__((target_clones("avx512f", "avx2", "default"))) void SumF32(const float* y,
                                                                         const float* const* parts,
                                                                         int num_parts, float* dx,
                                                                         int64_t begin,
                                                                         int64_t end) {
  SumGroupF32<true>(y, parts, num_parts, dx, begin, end);
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void SumBf16(
    const uint16_t* y, const uint16_t* const* parts, int num_parts, uint16_t* dx, int64_t begin,
    int64_t end) {
  SumGroupBf16<true>(y, parts, num_parts, dx, begin, end);
}

// Unmasked (the first part may be dx itself).
__attribute__((target_clones("avx512f", "avx2", "default"))) void PlainSumF32(
    const float*, const float* const* parts, int num_parts, float* dx, int64_t begin, int64_t end) {
  SumGroupF32<false>(nullptr, parts, num_parts, dx, begin, end);
}

void PlainSumBf16(const uint16_t*, const uint16_t* const* parts, int num_parts, uint16_t* dx,
                  int64_t begin, int64_t end) {
  SumGroupBf16<false>(nullptr, parts, num_parts, dx, begin, end);
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

void MaskedSum(DType dtype, const void* y, const void* const* parts, int num_parts, void* dx,
               int64_t count) {
  if (num_parts <= 0 || count <= 0) return;
  if (dtype == DType::kBF16) {
    Parallel<uint16_t>(y, parts, num_parts, dx, count, SumBf16);
  } else {
    Parallel<float>(y, parts, num_parts, dx, count, SumF32);
  }
}

}  // namespace onednn
}  // namespace cnnbench
