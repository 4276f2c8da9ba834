// The peak cases (see peak_cases.h). The loops are compiled for their ISA
// function by function (target attributes), so the file runs on any x86-64
// CPU and only the path this CPU has is called.
#include "bench/cases/peak/peak_cases.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bench/suite/names.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/onednn_isa.h"
#include "core/status.h"
#include "kernels/cuda/gpu_peak.h"

namespace cnnbench::bench {
namespace {

// acc = acc * kScale + kStep converges to 1 from any start: the values stay
// finite however long the loop runs, and no step can be left out.
constexpr float kScale = 0.999f;
constexpr float kStep = 0.001f;

// The sum of a register's lanes (stored and added: GCC 12's
// _mm512_reduce_add_ps reads an undefined register and warns).
__attribute__((target("avx512f"))) double SumLanes(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  double total = 0;
  for (float lane : lanes) total += lane;
  return total;
}

// 16 accumulators of 16 fp32 lanes; returns the sum of every lane.
__attribute__((target("avx512f"))) double Fp32Avx512(int64_t steps, float seed) {
  const __m512 a = _mm512_set1_ps(kScale), b = _mm512_set1_ps(kStep);
  __m512 c0 = _mm512_set1_ps(seed + 0), c1 = _mm512_set1_ps(seed + 1);
  __m512 c2 = _mm512_set1_ps(seed + 2), c3 = _mm512_set1_ps(seed + 3);
  __m512 c4 = _mm512_set1_ps(seed + 4), c5 = _mm512_set1_ps(seed + 5);
  __m512 c6 = _mm512_set1_ps(seed + 6), c7 = _mm512_set1_ps(seed + 7);
  __m512 c8 = _mm512_set1_ps(seed + 8), c9 = _mm512_set1_ps(seed + 9);
  __m512 c10 = _mm512_set1_ps(seed + 10), c11 = _mm512_set1_ps(seed + 11);
  __m512 c12 = _mm512_set1_ps(seed + 12), c13 = _mm512_set1_ps(seed + 13);
  __m512 c14 = _mm512_set1_ps(seed + 14), c15 = _mm512_set1_ps(seed + 15);
  for (int64_t i = 0; i < steps; ++i) {
    c0 = _mm512_fmadd_ps(c0, a, b);
    c1 = _mm512_fmadd_ps(c1, a, b);
    c2 = _mm512_fmadd_ps(c2, a, b);
    c3 = _mm512_fmadd_ps(c3, a, b);
    c4 = _mm512_fmadd_ps(c4, a, b);
    c5 = _mm512_fmadd_ps(c5, a, b);
    c6 = _mm512_fmadd_ps(c6, a, b);
    c7 = _mm512_fmadd_ps(c7, a, b);
    c8 = _mm512_fmadd_ps(c8, a, b);
    c9 = _mm512_fmadd_ps(c9, a, b);
    c10 = _mm512_fmadd_ps(c10, a, b);
    c11 = _mm512_fmadd_ps(c11, a, b);
    c12 = _mm512_fmadd_ps(c12, a, b);
    c13 = _mm512_fmadd_ps(c13, a, b);
    c14 = _mm512_fmadd_ps(c14, a, b);
    c15 = _mm512_fmadd_ps(c15, a, b);
  }
  const __m512 sum =
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                                  _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7))),
                    _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)),
                                  _mm512_add_ps(_mm512_add_ps(c12, c13), _mm512_add_ps(c14, c15))));
  return SumLanes(sum);
}

// 12 accumulators of 8 fp32 lanes (with the two constants, 14 of the 16
// ymm registers: none spills).
__attribute__((target("avx2,fma"))) double Fp32Avx2(int64_t steps, float seed) {
  const __m256 a = _mm256_set1_ps(kScale), b = _mm256_set1_ps(kStep);
  __m256 c0 = _mm256_set1_ps(seed + 0), c1 = _mm256_set1_ps(seed + 1);
  __m256 c2 = _mm256_set1_ps(seed + 2), c3 = _mm256_set1_ps(seed + 3);
  __m256 c4 = _mm256_set1_ps(seed + 4), c5 = _mm256_set1_ps(seed + 5);
  __m256 c6 = _mm256_set1_ps(seed + 6), c7 = _mm256_set1_ps(seed + 7);
  __m256 c8 = _mm256_set1_ps(seed + 8), c9 = _mm256_set1_ps(seed + 9);
  __m256 c10 = _mm256_set1_ps(seed + 10), c11 = _mm256_set1_ps(seed + 11);
  for (int64_t i = 0; i < steps; ++i) {
    c0 = _mm256_fmadd_ps(c0, a, b);
    c1 = _mm256_fmadd_ps(c1, a, b);
    c2 = _mm256_fmadd_ps(c2, a, b);
    c3 = _mm256_fmadd_ps(c3, a, b);
    c4 = _mm256_fmadd_ps(c4, a, b);
    c5 = _mm256_fmadd_ps(c5, a, b);
    c6 = _mm256_fmadd_ps(c6, a, b);
    c7 = _mm256_fmadd_ps(c7, a, b);
    c8 = _mm256_fmadd_ps(c8, a, b);
    c9 = _mm256_fmadd_ps(c9, a, b);
    c10 = _mm256_fmadd_ps(c10, a, b);
    c11 = _mm256_fmadd_ps(c11, a, b);
  }
  const __m256 sum =
      _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                                  _mm256_add_ps(c4, c5)),
                    _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c6, c7), _mm256_add_ps(c8, c9)),
                                  _mm256_add_ps(c10, c11)));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  double total = 0;
  for (float v : lanes) total += v;
  return total;
}

// 16 accumulators of VDPBF16PS: each instruction adds 32 bf16 products in
// pairs to 16 fp32 lanes. The products are tiny and fixed, so a lane grows
// until an addend falls below its rounding and stays finite.
__attribute__((target("avx512f,avx512bf16"))) double Bf16Avx512(int64_t steps, float seed) {
  const __m512 small = _mm512_set1_ps(1.0f / 1024);
  const __m512bh x = _mm512_cvtne2ps_pbh(small, small);
  const __m512bh y = _mm512_cvtne2ps_pbh(small, small);
  __m512 c0 = _mm512_set1_ps(seed + 0), c1 = _mm512_set1_ps(seed + 1);
  __m512 c2 = _mm512_set1_ps(seed + 2), c3 = _mm512_set1_ps(seed + 3);
  __m512 c4 = _mm512_set1_ps(seed + 4), c5 = _mm512_set1_ps(seed + 5);
  __m512 c6 = _mm512_set1_ps(seed + 6), c7 = _mm512_set1_ps(seed + 7);
  __m512 c8 = _mm512_set1_ps(seed + 8), c9 = _mm512_set1_ps(seed + 9);
  __m512 c10 = _mm512_set1_ps(seed + 10), c11 = _mm512_set1_ps(seed + 11);
  __m512 c12 = _mm512_set1_ps(seed + 12), c13 = _mm512_set1_ps(seed + 13);
  __m512 c14 = _mm512_set1_ps(seed + 14), c15 = _mm512_set1_ps(seed + 15);
  for (int64_t i = 0; i < steps; ++i) {
    c0 = _mm512_dpbf16_ps(c0, x, y);
    c1 = _mm512_dpbf16_ps(c1, x, y);
    c2 = _mm512_dpbf16_ps(c2, x, y);
    c3 = _mm512_dpbf16_ps(c3, x, y);
    c4 = _mm512_dpbf16_ps(c4, x, y);
    c5 = _mm512_dpbf16_ps(c5, x, y);
    c6 = _mm512_dpbf16_ps(c6, x, y);
    c7 = _mm512_dpbf16_ps(c7, x, y);
    c8 = _mm512_dpbf16_ps(c8, x, y);
    c9 = _mm512_dpbf16_ps(c9, x, y);
    c10 = _mm512_dpbf16_ps(c10, x, y);
    c11 = _mm512_dpbf16_ps(c11, x, y);
    c12 = _mm512_dpbf16_ps(c12, x, y);
    c13 = _mm512_dpbf16_ps(c13, x, y);
    c14 = _mm512_dpbf16_ps(c14, x, y);
    c15 = _mm512_dpbf16_ps(c15, x, y);
  }
  const __m512 sum =
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                                  _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7))),
                    _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)),
                                  _mm512_add_ps(_mm512_add_ps(c12, c13), _mm512_add_ps(c14, c15))));
  return SumLanes(sum);
}

using PeakLoop = double (*)(int64_t steps, float seed);

// What this CPU runs, read from the CPU (CPUID, and whether the OS saves
// the vector registers) once.
struct CpuFeatures {
  bool avx512f = false, avx2 = false, fma = false, avx512_bf16 = false;
};
const CpuFeatures& Features() {
  static const CpuFeatures features = [] {
    __builtin_cpu_init();
    CpuFeatures f;
    f.avx512f = __builtin_cpu_supports("avx512f");
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    f.avx512_bf16 = f.avx512f && __builtin_cpu_supports("avx512bf16");
    return f;
  }();
  return features;
}

// The loops follow oneDNN's instruction set, not only the CPU's: with
// ONEDNN_MAX_CPU_ISA capping the backend, the peak a step is put against
// is the capped one.
absl::StatusOr<std::pair<PeakPath, PeakLoop>> FindLoop(absl::string_view precision) {
  const CpuFeatures& cpu = Features();
  const std::string cap = OnednnIsaCap().empty() ? "" : absl::StrCat(" (", OnednnIsaCap(), ")");
  if (precision == "fp32") {
    if (cpu.avx512f && OnednnHasAvx512())
      return std::make_pair(PeakPath{"avx512f", "fma", 16, 16 * 16 * 2.0}, &Fp32Avx512);
    if (cpu.avx2 && cpu.fma && OnednnHasAvx2())
      return std::make_pair(PeakPath{"avx2", "fma", 12, 12 * 8 * 2.0}, &Fp32Avx2);
    if (cpu.avx2 && cpu.fma)
      return absl::UnimplementedError(absl::StrCat(
          "unsupported: oneDNN is capped below AVX2", cap,
          ", and the fp32 peak loop follows the cap (it needs AVX-512F or AVX2 with FMA)"));
    return absl::UnimplementedError(
        "unsupported: the fp32 peak loop needs AVX-512F or AVX2 with FMA, which this CPU lacks");
  }
  if (precision == "bf16") {
    if (cpu.avx512_bf16 && OnednnHasBf16())
      return std::make_pair(PeakPath{"avx512_bf16", "dpbf16ps", 16, 16 * 64.0}, &Bf16Avx512);
    return absl::UnimplementedError(
        absl::StrCat("unsupported: the bf16 peak loop needs avx512_bf16 (VDPBF16PS): ",
                     cpu.avx512_bf16 ? OnednnBf16Unavailable() + ", and the loop follows the cap"
                                     : std::string("this CPU lacks it")));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("no peak loop for precision '", precision, "' (fp32, bf16)"));
}

class PeakWorkload : public Workload {
 public:
  PeakWorkload(PeakPath path, PeakLoop loop, int threads)
      : path_(std::move(path)), loop_(loop), threads_(threads) {}

  const Stream& stream() const override { return stream_; }
  absl::Status Run() override { return RunSteps(steps_); }

  // FLOPs of one iteration (every thread's).
  double flops_per_iteration() const {
    return path_.flops_per_step * static_cast<double>(steps_) * threads_;
  }

  absl::Status Report(benchmark::State& state) override {
    state.counters["flops"] =
        benchmark::Counter(flops_per_iteration(), benchmark::Counter::kIsIterationInvariantRate);
    state.SetLabel(path_.Label());
    return absl::OkStatus();
  }

  // Warms up for `timing.warmup_seconds` (at least), then sizes an
  // iteration to about `timing.iteration_seconds`.
  absl::Status Calibrate(const PeakTiming& timing) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    int64_t steps = 1024;
    double seconds = 0;
    for (;;) {
      const auto t0 = Clock::now();
      RETURN_IF_ERROR(RunSteps(steps));
      seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      const double total = std::chrono::duration<double>(Clock::now() - start).count();
      if (seconds >= 0.02 && total >= timing.warmup_seconds) break;
      if (seconds < 0.02) steps *= 2;
      if (steps > (int64_t{1} << 40))
        return absl::InternalError(absl::StrCat(path_.Label(), ": 2^40 steps took ", seconds,
                                                " s; the loop did not run as written"));
    }
    steps_ = std::max<int64_t>(
        1, static_cast<int64_t>(static_cast<double>(steps) * timing.iteration_seconds / seconds));
    return absl::OkStatus();
  }

 private:
  // `steps` of every accumulator on each thread of the team; checks that the
  // team had every thread and that every thread's sum is finite and positive.
  absl::Status RunSteps(int64_t steps) {
    int ran = 0, bad = 0;
    double total = 0;
    const PeakLoop loop = loop_;
#pragma omp parallel num_threads(threads_) reduction(+ : ran, bad, total)
    {
      const double sum = loop(steps, 1.0f + static_cast<float>(omp_get_thread_num()));
      ran += 1;
      bad += std::isfinite(sum) && sum > 0 ? 0 : 1;
      total += sum;
    }
    if (ran != threads_)
      return absl::FailedPreconditionError(
          absl::StrCat("the OpenMP team had ", ran, " thread(s), not the ", threads_,
                       " the case names (OMP_THREAD_LIMIT or OMP_DYNAMIC?)"));
    if (bad > 0 || !(total > 0))
      return absl::InternalError(absl::StrCat(path_.Label(), ": ", bad,
                                              " thread(s) ended with a sum that is not finite "
                                              "and positive; the loop did not run as written"));
    return absl::OkStatus();
  }

  PeakPath path_;
  PeakLoop loop_;
  int threads_;
  int64_t steps_ = 1;
  Stream stream_ = Stream::Cpu();
};

}  // namespace

std::string PeakPath::Label() const {
  return absl::StrCat(isa, " ", operation, " x", accumulators, " accumulators");
}

absl::StatusOr<PeakPath> FindPeakPath(absl::string_view precision) {
  ASSIGN_OR_RETURN(auto found, FindLoop(precision));
  return found.first;
}

int DefaultPeakThreads() { return std::max(1, omp_get_max_threads()); }

absl::StatusOr<std::unique_ptr<Workload>> PreparePeakWorkload(absl::string_view precision,
                                                              int threads,
                                                              const PeakTiming& timing) {
  if (threads < 1)
    return absl::InvalidArgumentError(absl::StrCat("peak: threads:", threads, " (must be >= 1)"));
  absl::StatusOr<std::pair<PeakPath, PeakLoop>> found = FindLoop(precision);
  if (!found.ok()) return found.status();  // as it is: "unsupported: ..." is the skip reason
  auto w = std::make_unique<PeakWorkload>(found->first, found->second, threads);
  RETURN_IF_ERROR(w->Calibrate(timing));
  return std::unique_ptr<Workload>(std::move(w));
}

absl::StatusOr<double> MeasurePeakFlops(absl::string_view precision, int threads,
                                        int repetitions, const PeakTiming& timing) {
  if (threads < 1)
    return absl::InvalidArgumentError(absl::StrCat("peak: threads:", threads, " (must be >= 1)"));
  absl::StatusOr<std::pair<PeakPath, PeakLoop>> found = FindLoop(precision);
  if (!found.ok()) return found.status();
  PeakWorkload w(found->first, found->second, threads);
  RETURN_IF_ERROR(w.Calibrate(timing));
  double best = 0;
  for (int i = 0; i < std::max(1, repetitions); ++i) {
    const auto start = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(w.Run());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds > 0) best = std::max(best, w.flops_per_iteration() / seconds);
  }
  return best;
}

absl::Status RegisterPeakCasesFor(const std::vector<std::string>& precisions, int threads,
                                  Harness& harness, const PeakTiming& timing) {
  if (threads < 1)
    return absl::InvalidArgumentError(absl::StrCat("peak: threads:", threads, " (must be >= 1)"));
  for (const std::string& precision : precisions) {
    if (precision != "fp32" && precision != "bf16") continue;
    TimedCase timed;
    timed.name = CaseName::Peak(precision, threads).ToString();
    timed.family = FamilyName(Family::kPeak);
    timed.unit = benchmark::kMillisecond;
    timed.prepare = [precision, threads, timing] {
      return PreparePeakWorkload(precision, threads, timing);
    };
    harness.Register(std::move(timed));
  }
  return absl::OkStatus();
}

namespace {

class GpuPeakWorkload : public Workload {
 public:
  explicit GpuPeakWorkload(Stream stream) : stream_(std::move(stream)) {}
  absl::Status Init(const Device& device, absl::string_view precision, int64_t n) {
    ASSIGN_OR_RETURN(peak_, CreateGpuPeak(device, precision, n, stream_));
    return absl::OkStatus();
  }
  const Stream& stream() const override { return stream_; }
  absl::Status Run() override { return peak_->Run(); }
  absl::Status Report(benchmark::State& state) override {
    RETURN_IF_ERROR(peak_->Check());
    state.counters["flops"] =
        benchmark::Counter(peak_->flops(), benchmark::Counter::kIsIterationInvariantRate);
    state.SetLabel(absl::StrCat(peak_->label(), ", result checked"));
    return absl::OkStatus();
  }

 private:
  Stream stream_;  // before peak_, which keeps a reference to it
  std::unique_ptr<GpuPeak> peak_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Workload>> PrepareGpuPeakWorkload(absl::string_view precision,
                                                                 absl::string_view device,
                                                                 int64_t n) {
  ASSIGN_OR_RETURN(const Device d, Device::Parse(device));
  if (!d.is_cuda())
    return absl::InvalidArgumentError(absl::StrCat("a GPU peak on ", device, ", not a GPU"));
  if (d.ordinal >= CudaDeviceCount())
    return absl::UnimplementedError(absl::StrCat("unsupported: ", d.ToString(), " is not present (",
                                                 CudaDeviceCount(), " GPU(s) visible)"));
  ASSIGN_OR_RETURN(Stream stream, Stream::Create(d));
  auto w = std::make_unique<GpuPeakWorkload>(std::move(stream));
  RETURN_IF_ERROR(w->Init(d, precision, n));
  return std::unique_ptr<Workload>(std::move(w));
}

void RegisterGpuPeakCases(Harness& harness, int64_t n) {
  for (const char* precision : {"fp32", "tf32", "fp16", "bf16", "fp8"}) {
    const std::string how =
        std::string(precision) == "fp32" ? "fma" : absl::StrCat("gemm:m", n, "n", n, "k", n);
    TimedCase timed;
    timed.name = CaseName::GpuPeak(precision, "cuda", how).ToString();
    timed.family = FamilyName(Family::kPeak);
    timed.unit = benchmark::kMillisecond;
    timed.prepare = [precision = std::string(precision), n] {
      return PrepareGpuPeakWorkload(precision, "cuda", n);
    };
    harness.Register(std::move(timed));
  }
}

}  // namespace cnnbench::bench
