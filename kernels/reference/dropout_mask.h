// The dropout keep mask: a counter-based generator (SplitMix64 finaliser)
// keyed by the kernel's training-call count and the element index, so a
// mask is reproducible without stored random state and any backend can
// draw the same one.
#ifndef CNNBENCH_KERNELS_REFERENCE_DROPOUT_MASK_H_
#define CNNBENCH_KERNELS_REFERENCE_DROPOUT_MASK_H_

#include <cstdint>

namespace cnnbench {

inline uint64_t MixBits64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// True when element `index` survives training call `call` (0, 1, ...) of a
// dropout with drop probability `rate`.
inline bool DropoutKeeps(uint64_t call, uint64_t index, double rate) {
  const uint64_t bits = MixBits64(MixBits64(call) ^ index);
  const double uniform = static_cast<double>(bits >> 11) * 0x1.0p-53;  // [0, 1)
  return uniform >= rate;
}

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_REFERENCE_DROPOUT_MASK_H_
