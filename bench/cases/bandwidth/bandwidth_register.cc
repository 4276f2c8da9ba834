// The bandwidth family's part of the suite: its flag, its options and its
// registration (the workloads: bandwidth_cases.h).
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "bench/cases/bandwidth/bandwidth_cases.h"
#include "bench/cases/peak/peak_cases.h"
#include "bench/cli/flag_read.h"
#include "bench/suite/names.h"
#include "bench/suite/suite.h"
#include "core/status.h"

ABSL_FLAG(std::string, bandwidth_bytes, "",
          "array sizes of the bandwidth cases in bytes, e.g. 67108864 (default: the preset's; "
          "STREAM asks for arrays of at least 4x the last-level cache)");

namespace cnnbench::bench {

absl::Status ApplyBandwidthFlags(SuiteOptions& o) {
  RETURN_IF_ERROR_AS_IS(ReadList(FLAGS_bandwidth_bytes, &o.bandwidth.bytes, int64_t{8}));
  for (int64_t bytes : o.bandwidth.bytes)
    if (bytes % 8 != 0)
      return absl::InvalidArgumentError(
          absl::StrCat(FlagWhere(absl::GetFlagReflectionHandle(FLAGS_bandwidth_bytes)), "'",
                       bytes, "' is not a multiple of 8 bytes"));
  return absl::OkStatus();
}

std::vector<int> BandwidthThreads(const SuiteOptions& o) {
  if (!o.bandwidth.threads.empty()) return o.bandwidth.threads;
  // 1, 2, 4, ... and the default team: how the rate grows with threads.
  const int most = DefaultPeakThreads();
  std::vector<int> threads;
  for (int t = 1; t < most; t *= 2) threads.push_back(t);
  threads.push_back(most);
  return threads;
}

absl::Status RegisterBandwidthCases(const SuiteOptions& options, Harness& harness) {
  auto add = [&](const std::string& kind, const std::string& device, int64_t bytes, int threads) {
    TimedCase timed;
    timed.name = CaseName::Bandwidth(kind, device, bytes, threads).ToString();
    timed.family = FamilyName(Family::kBandwidth);
    timed.unit = benchmark::kMillisecond;
    timed.prepare = [kind, device, bytes, threads] {
      return PrepareBandwidthWorkload(kind, device, bytes, threads);
    };
    harness.Register(std::move(timed));
  };
  for (int64_t bytes : options.bandwidth.bytes) {
    for (const char* kind : {"copy", "triad"})
      for (int threads : BandwidthThreads(options)) add(kind, "cpu", bytes, threads);
    if (options.gpu_count > 0)
      for (const char* kind : {"d2d", "h2d", "d2h"}) add(kind, "cuda", bytes, 1);
  }
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
