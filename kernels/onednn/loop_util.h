// Helpers of the loops the oneDNN backend writes itself (the masked sums,
// the optimizer): the split of a range over the OpenMP team, and bf16 <->
// fp32 conversions written branch-free so the loops using them vectorise in
// every ISA clone.
#ifndef CNNBENCH_KERNELS_ONEDNN_LOOP_UTIL_H_
#define CNNBENCH_KERNELS_ONEDNN_LOOP_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <utility>

namespace cnnbench {
namespace onednn {

// The part [begin, end) of [0, count) that thread `thread` of `threads`
// takes in the backend's own elementwise loops: whole runs of `line`
// elements (a cache line), so no two threads write one line.
inline std::pair<int64_t, int64_t> ThreadChunk(int64_t count, int64_t line, int64_t thread,
                                               int64_t threads) {
  const int64_t lines = (count + line - 1) / line;
  const int64_t per = (lines + threads - 1) / threads;
  const int64_t begin = std::min(count, thread * per * line);
  return {begin, std::min(count, begin + per * line)};
}

// bf16 bits (the upper half of an fp32) as fp32: exact.
inline float Bf16ToFloat(uint16_t bits) {
  return __builtin_bit_cast(float, static_cast<uint32_t>(bits) << 16);
}

// fp32 to bf16, rounded to nearest even; a NaN stays a NaN (made quiet),
// infinities and signed zeros stay as they are, subnormals are rounded (not
// flushed).
inline uint16_t FloatToBf16(float value) {
  const uint32_t bits = __builtin_bit_cast(uint32_t, value);
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const uint32_t quiet = (bits >> 16) | 0x40u;
  return static_cast<uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
}

}  // namespace onednn
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ONEDNN_LOOP_UTIL_H_
