// The peak cases on the timing harness: they register under their names,
// run, and report a positive, finite FLOP/s with the ISA path as the label,
// or are skipped with the reason where the CPU lacks the path. No figure is
// asserted: this machine is shared.
#include "bench/cases/peak/peak_cases.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "bench/harness/harness.h"
#include "benchmark/benchmark.h"
#include "gtest/gtest.h"
#include "tests/bench/recorder.h"

namespace cnnbench::bench {
namespace {

// Short enough for a test; the suite's defaults are longer.
constexpr PeakTiming kShort{.warmup_seconds = 0.02, .iteration_seconds = 0.01};

class PeakCasesTest : public ::testing::Test {
 protected:
  void SetUp() override { benchmark::ClearRegisteredBenchmarks(); }
  void TearDown() override { benchmark::ClearRegisteredBenchmarks(); }
};

TEST_F(PeakCasesTest, PathsCountTheirFlopsPerStep) {
  absl::StatusOr<PeakPath> fp32 = FindPeakPath("fp32");
  if (!fp32.ok()) {
    EXPECT_TRUE(absl::StartsWith(SkipMessage(fp32.status()), "unsupported: ")) << fp32.status();
  } else if (fp32->isa == "avx512f") {
    // 16 lanes, 2 FLOPs each, per accumulator.
    EXPECT_EQ(fp32->flops_per_step, fp32->accumulators * 16 * 2);
    EXPECT_EQ(fp32->Label(), "avx512f fma x16 accumulators");
  } else {
    EXPECT_EQ(fp32->isa, "avx2");
    EXPECT_EQ(fp32->flops_per_step, fp32->accumulators * 8 * 2);
    EXPECT_EQ(fp32->Label(), "avx2 fma x12 accumulators");
  }
  absl::StatusOr<PeakPath> bf16 = FindPeakPath("bf16");
  if (bf16.ok()) {
    // VDPBF16PS: 32 bf16 products added in pairs to 16 lanes, 64 FLOPs.
    EXPECT_EQ(bf16->flops_per_step, bf16->accumulators * 64);
    EXPECT_EQ(bf16->Label(), "avx512_bf16 dpbf16ps x16 accumulators");
  } else {
    // As the user reads it: the file:line trail left out, the kind first.
    EXPECT_TRUE(absl::StartsWith(SkipMessage(bf16.status()), "unsupported: ")) << bf16.status();
    EXPECT_TRUE(absl::StrContains(bf16.status().message(), "avx512_bf16")) << bf16.status();
  }
  absl::StatusOr<PeakPath> fp16 = FindPeakPath("fp16");
  ASSERT_FALSE(fp16.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(fp16.status())) << fp16.status();
  EXPECT_GE(DefaultPeakThreads(), 1);
}

TEST_F(PeakCasesTest, RunsAndReportsAPositiveFiniteRate) {
  Harness harness(TimingSettings{.repetitions = 2, .min_time = 0.01});
  ASSERT_TRUE(RegisterPeakCasesFor({"fp32", "fp16", "bf16", "tf32"}, 2, harness, kShort).ok());
  // Only the family's precisions have a case.
  EXPECT_EQ(harness.progress().names(),
            (std::vector<std::string>{"peak/fp32/cpu/threads:2", "peak/bf16/cpu/threads:2"}));
  Recorder recorder;
  benchmark::RunSpecifiedBenchmarks(&recorder, "peak/");
  harness.Release();
  ASSERT_EQ(recorder.iterations.size(), 4u);  // two cases, two repetitions each
  int measured = 0;
  for (const BenchRun& r : recorder.iterations) {
    const std::string name = r.run_name.str();
    const std::string precision = absl::StrContains(name, "/bf16/") ? "bf16" : "fp32";
    absl::StatusOr<PeakPath> path = FindPeakPath(precision);
    if (!path.ok()) {
      // Skipped with the reason, as the suite reports what a CPU cannot run.
      EXPECT_TRUE(r.error_occurred) << name;
      EXPECT_TRUE(absl::StartsWith(r.error_message, "unsupported: ")) << r.error_message;
      continue;
    }
    ASSERT_FALSE(r.error_occurred) << name << ": " << r.error_message;
    ++measured;
    EXPECT_EQ(r.report_label, path->Label()) << name;
    ASSERT_TRUE(r.counters.count("flops")) << name;
    const double flops = r.counters.at("flops");
    EXPECT_TRUE(std::isfinite(flops)) << name << ": " << flops;
    EXPECT_GT(flops, 0) << name;
  }
  if (measured == 0) GTEST_SKIP() << "this CPU has neither AVX-512F nor AVX2 with FMA";
}

TEST_F(PeakCasesTest, TheWorkloadRunsOnTheTeamItNames) {
  if (!FindPeakPath("fp32").ok()) GTEST_SKIP() << FindPeakPath("fp32").status();
  for (int threads : {1, 3}) {
    absl::StatusOr<std::unique_ptr<Workload>> w = PreparePeakWorkload("fp32", threads, kShort);
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_TRUE((*w)->Run().ok());
    EXPECT_TRUE((*w)->RunIterations(2).ok());
  }
}

TEST_F(PeakCasesTest, BadArgumentsAreErrors) {
  Harness harness(TimingSettings{});
  absl::Status s = RegisterPeakCasesFor({"fp32"}, 0, harness);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "threads:0")) << s;
  EXPECT_EQ(harness.case_count(), 0);
  absl::StatusOr<std::unique_ptr<Workload>> w = PreparePeakWorkload("fp32", -1, kShort);
  ASSERT_FALSE(w.ok());
  EXPECT_TRUE(absl::StrContains(w.status().message(), "threads:-1")) << w.status();
  w = PreparePeakWorkload("int8", 1, kShort);
  ASSERT_FALSE(w.ok());
  EXPECT_TRUE(absl::StrContains(w.status().message(), "'int8'")) << w.status();
}

}  // namespace
}  // namespace cnnbench::bench
