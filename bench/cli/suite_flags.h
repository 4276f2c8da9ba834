// //bench:all's own flags and how they are read into SuiteOptions: each
// list parsed once, each count checked, every error naming its flag
// (docs/benchmarks.md). The families' flags live beside their families
// (bench/cases/collective/collective_cases.cc, bench/cases/infer/infer_cases.cc) and are applied here.
#ifndef CNNBENCH_BENCH_SUITE_FLAGS_H_
#define CNNBENCH_BENCH_SUITE_FLAGS_H_

#include "absl/flags/commandlineflag.h"
#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "bench/harness/harness.h"
#include "bench/suite/suite.h"

// Read by Main itself.
ABSL_DECLARE_FLAG(bool, list);
ABSL_DECLARE_FLAG(bool, verbose);
ABSL_DECLARE_FLAG(int, power_sample_ms);

namespace cnnbench::bench {

// Records which flags the command line names (even at their default
// values); call before Abseil parses it.
void RecordSuiteFlagsGiven(int argc, char** argv);
// Whether the command line named `flag`.
bool SuiteFlagGiven(const absl::CommandLineFlag& flag);
// The preset's options with the user's flags applied; errors name the flag.
absl::StatusOr<SuiteOptions> SuiteOptionsFromFlags(const BenchmarkTimingFlags& timing);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_SUITE_FLAGS_H_
