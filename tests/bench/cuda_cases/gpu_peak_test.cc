// The GPU's peak cases: their arithmetic on the host (the FMA loop's value,
// the GEMM's exact integer operands in every input type), their
// registration with a GPU visible, and on a GPU each precision's peak run
// and checked (fp8 where the GPU has it). Skips what needs a GPU without one.
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "bench/harness/harness.h"
#include "bench/suite/names.h"
#include "bench/cases/peak/peak_cases.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "gtest/gtest.h"
#include "kernels/cuda/peak_math.h"
#include "tests/bench/recorder.h"

namespace cnnbench::bench {
namespace {

// e4m3 decoded: sign, 4 exponent bits (bias 7), 3 mantissa bits.
double DecodeE4m3(uint8_t b) {
  const int sign = b >> 7, exponent = (b >> 3) & 0xF, mantissa = b & 7;
  const double value =
      exponent == 0 ? std::ldexp(mantissa / 8.0, -6) : std::ldexp(1 + mantissa / 8.0, exponent - 7);
  return sign ? -value : value;
}

TEST(GpuPeakMathTest, TheOperandsAreExactIntegersAndTheLoopStaysFinite) {
  for (int v = -2; v <= 2; ++v) EXPECT_EQ(DecodeE4m3(cuda::E4m3Of(v)), v) << v;
  // The FMA chains start at 0.5, 1, ..., 4 and converge to 1 each.
  EXPECT_FLOAT_EQ(cuda::PeakFmaResult(0), 18.0f);
  const float long_run = cuda::PeakFmaResult(200000);
  EXPECT_TRUE(std::isfinite(long_run));
  EXPECT_NEAR(long_run, 8.0f, 0.01f);  // fp32 rounding stalls each chain a little above 1
  // Every dot product of the 8192^3 GEMM is an integer fp32 holds exactly,
  // and the sampled ones are not all zero (a check that could pass on zeros).
  int nonzero = 0;
  for (int64_t s = 0; s < 64; ++s) {
    const int64_t i = (s * 7919) % 8192, j = (s * 104729 + 13) % 8192;
    const int64_t d = cuda::PeakD(i, j, 8192);
    EXPECT_LT(std::llabs(d), int64_t{1} << 24);
    nonzero += d != 0;
  }
  EXPECT_GT(nonzero, 32);
}

TEST(GpuPeakCasesTest, EveryPrecisionRegistersOnCuda) {
  benchmark::ClearRegisteredBenchmarks();
  Harness harness(TimingSettings{});
  RegisterGpuPeakCases(harness);
  const std::vector<std::string>& names = harness.progress().names();
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()),
            (std::set<std::string>{"peak/fp32/cuda/fma", "peak/tf32/cuda/gemm:m8192n8192k8192",
                                   "peak/fp16/cuda/gemm:m8192n8192k8192",
                                   "peak/bf16/cuda/gemm:m8192n8192k8192",
                                   "peak/fp8/cuda/gemm:m8192n8192k8192"}));
  for (const std::string& name : names) EXPECT_TRUE(ParseCaseName(name).ok()) << name;
  benchmark::ClearRegisteredBenchmarks();
}

TEST(GpuPeakCasesTest, WithoutAGpuThePeakSkipsWithTheReason) {
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "a GPU is present";
  const absl::Status s = PrepareGpuPeakWorkload("bf16", "cuda", 1024).status();
  EXPECT_TRUE(absl::StartsWith(s.message(), "unsupported: ")) << s;
  EXPECT_EQ(PrepareGpuPeakWorkload("bf16", "cpu", 1024).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(GpuPeakCasesTest, OnAGpuEveryPrecisionRunsAndIsChecked) {
  if (CudaDeviceCount() < 1) GTEST_SKIP() << "no GPU";
  for (const char* precision : {"fp32", "tf32", "fp16", "bf16", "fp8"}) {
    TimedCase c;
    c.name = "gpu_peak_test/case";
    c.family = "peak";
    c.unit = benchmark::kMillisecond;
    c.prepare = [precision] { return PrepareGpuPeakWorkload(precision, "cuda", 2048); };
    const std::vector<BenchRun> runs =
        RunOneCase(std::move(c), TimingSettings{.repetitions = 1, .min_time = 0.05});
    ASSERT_EQ(runs.size(), 1u) << precision;
    const BenchRun& r = runs[0];
    if (r.error_occurred && absl::StartsWith(r.error_message, "unsupported: fp8")) continue;
    EXPECT_FALSE(r.error_occurred) << precision << ": " << r.error_message;
    EXPECT_TRUE(absl::StrContains(r.report_label, "result checked")) << r.report_label;
    // The tensor cores' GEMMs time random operands; the check multiplies
    // integers in a launch of its own.
    if (std::string(precision) != "fp32") {
      EXPECT_TRUE(absl::StrContains(r.report_label, "random operands timed")) << r.report_label;
    }
    if (!r.error_occurred) {
      EXPECT_GT(r.counters.at("flops").value, 0) << precision;
    }
  }
  benchmark::ClearRegisteredBenchmarks();
}

}  // namespace
}  // namespace cnnbench::bench
