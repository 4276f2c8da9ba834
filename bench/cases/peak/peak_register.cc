// The peak family's part of the suite: its registration (the workloads:
// peak_cases.h).
#include "bench/cases/peak/peak_cases.h"
#include "bench/suite/suite.h"
#include "core/status.h"

namespace cnnbench::bench {

absl::Status RegisterPeakCases(const SuiteOptions& options, Harness& harness) {
  RETURN_IF_ERROR(RegisterPeakCasesFor(options.precisions, DefaultPeakThreads(), harness));
  // The GPU's ceilings, every precision (a step of any precision is read
  // against its own).
  if (options.gpu_count > 0) RegisterGpuPeakCases(harness);
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
