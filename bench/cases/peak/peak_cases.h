// peak/<fp32|bf16>/cpu/threads:<T>: the CPU's arithmetic peak, the ceiling
// that training steps and kernels are read against. Every thread of an
// OpenMP team of T threads runs a loop of independent fused multiply-adds
// on vector registers only (enough accumulators to hide the FMA latency),
// on the widest path this CPU has, chosen at run time: AVX-512F, else AVX2
// with FMA; bf16 runs AVX512_BF16's VDPBF16PS. A CPU without the path skips
// the case with the reason.
#ifndef CNNBENCH_BENCH_PEAK_CASES_H_
#define CNNBENCH_BENCH_PEAK_CASES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bench/harness/harness.h"

namespace cnnbench::bench {

// The loop a precision runs on this CPU.
struct PeakPath {
  std::string isa;        // "avx512f", "avx2", "avx512_bf16"
  std::string operation;  // "fma", "dpbf16ps"
  int accumulators = 0;   // independent vector registers
  // FLOPs of one step (one instruction per accumulator) on one thread:
  // fp32 2 per lane; bf16 2 per multiplied pair (64 per 512-bit instruction).
  double flops_per_step = 0;

  // "avx512f fma x16 accumulators".
  std::string Label() const;
};

// The path `precision` ("fp32" or "bf16") runs on this CPU; Unimplemented
// ("unsupported: ...") where the CPU has none; InvalidArgument for another
// precision.
absl::StatusOr<PeakPath> FindPeakPath(absl::string_view precision);

// The team size of the suite's CPU cases: OpenMP's default team
// (omp_get_max_threads(), which OMP_NUM_THREADS sets).
int DefaultPeakThreads();

struct PeakTiming {
  double warmup_seconds = 0.2;     // untimed, before the first iteration: the clock ramps up
  double iteration_seconds = 0.1;  // the length of one timed iteration
};

// A peak case's workload: finds the path, warms up, sizes an iteration to
// about `timing.iteration_seconds`. Each iteration checks that every thread
// ran and that the accumulators it consumed are finite and positive.
absl::StatusOr<std::unique_ptr<Workload>> PreparePeakWorkload(absl::string_view precision,
                                                              int threads,
                                                              const PeakTiming& timing = {});

// The peak FLOP/s of `precision` ("fp32", "bf16") on a team of `threads`,
// measured now: after the warm-up, the best of `repetitions` iterations of
// about `timing.iteration_seconds`; errors as PreparePeakWorkload's. For
// tools that read a measured rate against the ceiling in the same run
// (//tools:step_breakdown --profile).
absl::StatusOr<double> MeasurePeakFlops(absl::string_view precision, int threads,
                                        int repetitions = 5, const PeakTiming& timing = {});

// Registers peak/<precision>/cpu/threads:<threads> for each of `precisions`
// that the family has (fp32, bf16; the suite's other precisions have no
// peak case). `threads` must be >= 1.
absl::Status RegisterPeakCasesFor(const std::vector<std::string>& precisions, int threads,
                                  Harness& harness, const PeakTiming& timing = {});

// peak/<precision>/cuda/<fma|gemm:m<N>n<N>k<N>>: the GPU's ceilings
// (kernels/cuda/gpu_peak.h): fp32 on its FMA units, tf32, fp16, bf16 and
// fp8 as an n^3 tensor-core GEMM; each iteration checked after the timing.
inline constexpr int64_t kGpuPeakGemmSize = 8192;
absl::StatusOr<std::unique_ptr<Workload>> PrepareGpuPeakWorkload(absl::string_view precision,
                                                                 absl::string_view device,
                                                                 int64_t n = kGpuPeakGemmSize);
// Registers every precision's GPU peak on cuda (device 0).
void RegisterGpuPeakCases(Harness& harness, int64_t n = kGpuPeakGemmSize);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_PEAK_CASES_H_
