// //bench:all's own flags and how they are read into SuiteOptions: each
// read once, when given (bench/cli/flag_read.h), every error naming its
// flag (docs/benchmarks.md). The families' flags live beside their families
// (Apply<Family>Flags: collective, infer, input, bandwidth) and are applied
// here.
#ifndef CNNBENCH_BENCH_SUITE_FLAGS_H_
#define CNNBENCH_BENCH_SUITE_FLAGS_H_

#include <string>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "bench/harness/harness.h"
#include "bench/suite/suite.h"

// How Main runs (not options of the cases): read by Main itself.
ABSL_DECLARE_FLAG(bool, list);
ABSL_DECLARE_FLAG(bool, verbose);
ABSL_DECLARE_FLAG(std::string, store);

namespace cnnbench::bench {

// The preset's options in `options` with the user's flags applied: each
// flag is read once, and only when the command line names it (flag_read.h),
// so a preset may set any option and an explicit flag overrides it. Sets
// nothing outside `options`. Errors name the flag.
absl::Status ApplySuiteFlags(const BenchmarkTimingFlags& timing, SuiteOptions& options);

// The preset's options (--preset, else this machine's default) with the
// user's flags applied (ApplySuiteFlags), and the process-wide settings
// they hold put in place (the compile deadline, the NVRTC build budget, the
// plan choices file).
absl::StatusOr<SuiteOptions> SuiteOptionsFromFlags(const BenchmarkTimingFlags& timing);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_SUITE_FLAGS_H_
