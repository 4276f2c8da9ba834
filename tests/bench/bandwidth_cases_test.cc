// The bandwidth cases on the harness: STREAM copy and triad on the CPU count
// the bytes STREAM counts and check their result; the GPU copies skip
// without a GPU with the reason; bad kinds and devices are errors; with a
// GPU visible the family adds the device's copies beside the CPU's.
#include "bench/cases/bandwidth/bandwidth_cases.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "bench/harness/harness.h"
#include "bench/suite/names.h"
#include "bench/cases/peak/peak_cases.h"
#include "bench/suite/suite.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "gtest/gtest.h"
#include "tests/bench/recorder.h"

namespace cnnbench::bench {
namespace {

std::vector<BenchRun> RunCase(const std::string& kind, const std::string& device, int64_t bytes,
                              int threads) {
  TimedCase c;
  c.name = "bandwidth_test/case";
  c.family = "bandwidth";
  c.unit = benchmark::kMillisecond;
  c.prepare = [=] { return PrepareBandwidthWorkload(kind, device, bytes, threads); };
  return RunOneCase(std::move(c), TimingSettings{.repetitions = 2, .min_time = 0.01});
}

TEST(BandwidthCasesTest, CopyAndTriadCountWhatStreamCountsAndCheckTheirResult) {
  const int64_t bytes = int64_t{1} << 20;
  for (const auto& [kind, arrays] :
       {std::pair<std::string, double>{"copy", 2}, std::pair<std::string, double>{"triad", 3}})
    for (int threads : {1, 2}) {
      const std::vector<BenchRun> runs = RunCase(kind, "cpu", bytes, threads);
      ASSERT_EQ(runs.size(), 2u) << kind;
      for (const BenchRun& r : runs) {
        ASSERT_FALSE(r.error_occurred) << kind << ": " << r.error_message;
        // bytes/s x the time per iteration = the bytes counted per iteration.
        const double seconds = r.real_accumulated_time / r.iterations;
        EXPECT_NEAR(r.counters.at("bytes_per_second").value * seconds / (arrays * bytes), 1.0, 1e-9)
            << kind;
        EXPECT_TRUE(absl::StrContains(r.report_label, "result checked")) << r.report_label;
        EXPECT_TRUE(absl::StrContains(r.report_label, absl::StrCat(threads, " thread(s)")))
            << r.report_label;
      }
    }
  EXPECT_EQ(BandwidthBytesCounted("d2d", 100), 200);
  EXPECT_EQ(BandwidthBytesCounted("h2d", 100), 100);
  EXPECT_EQ(BandwidthBytesCounted("d2h", 100), 100);
}

TEST(BandwidthCasesTest, BadKindsDevicesAndSizesAreErrorsAndAbsentGpusSkip) {
  EXPECT_EQ(PrepareBandwidthWorkload("scale", "cpu", 1024, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PrepareBandwidthWorkload("copy", "cuda", 1024, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PrepareBandwidthWorkload("copy", "cpu", 1001, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PrepareBandwidthWorkload("d2d", "cpu", 1024, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  const absl::Status absent =
      PrepareBandwidthWorkload("d2d", absl::StrCat("cuda:", CudaDeviceCount()), 1024, 1).status();
  EXPECT_TRUE(absl::StartsWith(absent.message(), "unsupported: ")) << absent;
}

TEST(BandwidthCasesTest, TheFamilyRegistersTheCpuPerThreadCountAndTheGpuCopiesWithAGpu) {
  SuiteOptions o;
  o.bandwidth.bytes = {1 << 20};
  const std::vector<int> threads = BandwidthThreads(o);
  ASSERT_FALSE(threads.empty());
  EXPECT_EQ(threads.front(), 1);
  EXPECT_EQ(threads.back(), DefaultPeakThreads());
  for (int gpus : {0, 1}) {
    o.gpu_count = gpus;
    Harness harness(TimingSettings{});
    ASSERT_TRUE(RegisterBandwidthCases(o, harness).ok());
    std::set<std::string> names(harness.progress().names().begin(),
                                harness.progress().names().end());
    benchmark::ClearRegisteredBenchmarks();
    EXPECT_EQ(names.size(), 2 * threads.size() + (gpus > 0 ? 3 : 0));
    for (int t : threads)
      EXPECT_TRUE(names.count(CaseName::Bandwidth("triad", "cpu", 1 << 20, t).ToString()));
    EXPECT_EQ(names.count("bandwidth/d2d/cuda/bytes:1048576/threads:1"), gpus > 0 ? 1u : 0u);
    EXPECT_EQ(names.count("bandwidth/h2d/cuda/bytes:1048576/threads:1"), gpus > 0 ? 1u : 0u);
  }
}

// On a GPU: each copy's destination compared with its source.
TEST(BandwidthCasesTest, GpuCopiesAreChecked) {
  if (CudaDeviceCount() < 1) GTEST_SKIP() << "no GPU";
  for (const char* kind : {"d2d", "h2d", "d2h"}) {
    const std::vector<BenchRun> runs = RunCase(kind, "cuda", int64_t{1} << 24, 1);
    ASSERT_EQ(runs.size(), 2u) << kind;
    for (const BenchRun& r : runs) {
      EXPECT_FALSE(r.error_occurred) << kind << ": " << r.error_message;
      EXPECT_TRUE(absl::StrContains(r.report_label, "result checked")) << r.report_label;
    }
  }
}

}  // namespace
}  // namespace cnnbench::bench
