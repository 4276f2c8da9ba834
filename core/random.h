// Counter-based random numbers that every layer may use (backends, input/,
// the executor): the same numbers on every platform and device, with no
// stored generator state, so a mask or a crop is reproducible from its key.
#ifndef CNNBENCH_CORE_RANDOM_H_
#define CNNBENCH_CORE_RANDOM_H_

#include <cstdint>

// Marks the functions below callable from CUDA device code too (nvcc sees
// __host__ __device__); host compilers see plain inline functions.
#ifndef CNNBENCH_HOST_DEVICE
#ifdef __CUDACC__
#define CNNBENCH_HOST_DEVICE __host__ __device__
#else
#define CNNBENCH_HOST_DEVICE
#endif
#endif

namespace cnnbench {

// SplitMix64's finaliser: a bijective mix of 64 bits.
CNNBENCH_HOST_DEVICE inline uint64_t MixBits64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A uniform double in [0, 1) from 64 random bits.
CNNBENCH_HOST_DEVICE inline double BitsToUniform(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

// SplitMix64 generator: the standard library's distributions are not
// specified bit for bit, this is.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    const uint64_t z = state_;
    state_ += 0x9e3779b97f4a7c15ull;
    return MixBits64(z);
  }
  double Uniform() { return BitsToUniform(Next()); }  // [0, 1)
  double Normal();                                    // standard normal (Box-Muller)

 private:
  uint64_t state_;
};

// The key of one dropout mask: the run's seed, the layer (graph node) and
// the training step. Two layers, two steps or two seeds draw different masks.
CNNBENCH_HOST_DEVICE inline uint64_t DropoutKey(uint64_t seed, uint64_t node, uint64_t step) {
  return MixBits64(MixBits64(MixBits64(seed) ^ node) ^ step);
}

// True when element `index` survives the dropout keyed by `key` with drop
// probability `rate`. `index` is the element's global logical (N,C,H,W)
// index, counting every example of the global batch, so data-parallel
// replicas draw exactly the mask one replica of the whole batch would.
CNNBENCH_HOST_DEVICE inline bool DropoutKeeps(uint64_t key, uint64_t index, double rate) {
  return BitsToUniform(MixBits64(key ^ MixBits64(index))) >= rate;
}

}  // namespace cnnbench

#endif  // CNNBENCH_CORE_RANDOM_H_
