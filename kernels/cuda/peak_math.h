// The arithmetic of the GPU peak measurements, in plain C++ as well as CUDA
// (op_math.h's habit), so host tests check what the device must produce:
// the FMA loop's result and the GEMM's input patterns and exact products.
#ifndef CNNBENCH_KERNELS_CUDA_PEAK_MATH_H_
#define CNNBENCH_KERNELS_CUDA_PEAK_MATH_H_

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define CNNBENCH_PEAK_HD __host__ __device__
#else
#define CNNBENCH_PEAK_HD
#endif

namespace cnnbench::cuda {

// The FMA loop: kPeakChains independent chains x = fma(x, m, c) per
// thread, each converging to c / (1 - m) = 1, so every value stays finite.
inline constexpr int kPeakChains = 8;
inline constexpr float kPeakMul = 0.9999f;
inline constexpr float kPeakAdd = 0.0001f;
CNNBENCH_PEAK_HD inline float PeakChainStart(int chain) { return 0.5f * (chain + 1); }

// What every thread writes after `iterations`: its chains' sum, in chain
// order (fmaf rounds once, on the host as on the device).
inline float PeakFmaResult(int64_t iterations) {
  float sum = 0;
  for (int j = 0; j < kPeakChains; ++j) {
    float x = PeakChainStart(j);
    for (int64_t i = 0; i < iterations; ++i) x = std::fmaf(x, kPeakMul, kPeakAdd);
    sum += x;
  }
  return sum;
}

// The GEMM's operands, small integers exact in every input type (fp8 e4m3
// included): A(i, k) in [-2, 2] and B(k, j) in [-2, 2], so every product is
// exact and a dot product over k < 2^22 terms is an integer below 2^24,
// exact in fp32 accumulation.
CNNBENCH_PEAK_HD inline int PeakA(int64_t i, int64_t k) {
  return static_cast<int>((i + 2 * k) % 5) - 2;
}
CNNBENCH_PEAK_HD inline int PeakB(int64_t k, int64_t j) {
  return static_cast<int>((3 * k + j) % 5) - 2;
}
// D(i, j) = sum over k < n of A(i, k) B(k, j), computed plainly.
inline int64_t PeakD(int64_t i, int64_t j, int64_t n) {
  int64_t sum = 0;
  for (int64_t k = 0; k < n; ++k) sum += PeakA(i, k) * PeakB(k, j);
  return sum;
}

// fp8 e4m3 (bias 7) of the integers in [-2, 2].
inline uint8_t E4m3Of(int v) {
  switch (v) {
    case 1:
      return 0x38;
    case 2:
      return 0x40;
    case -1:
      return 0xB8;
    case -2:
      return 0xC0;
    default:
      return 0x00;
  }
}

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_PEAK_MATH_H_
