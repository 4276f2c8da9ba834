// How a default run (no --benchmark_out) ends: its JSON goes to a results
// folder under a name of the platform and the time, and the console's last
// screen is the report's headline tables for what ran, the file's path and
// the command that makes the full report (docs/benchmarks.md, "Where a
// default run writes").
#ifndef CNNBENCH_BENCH_RUN_SUMMARY_H_
#define CNNBENCH_BENCH_RUN_SUMMARY_H_

#include <ctime>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cnnbench::bench {

// "<folder>/<platform>-<YYYYmmdd-HHMMSS>.json" for the UTC time `when`
// (characters outside [A-Za-z0-9._-] in the platform made '_'), its folder
// made when missing; absolute (AbsolutePath), so that every line naming it
// works from any folder. An error says why the folder cannot be used.
absl::StatusOr<std::string> DefaultResultsPath(absl::string_view folder,
                                               absl::string_view platform, std::time_t when);

// The sections of a report's Markdown that a newcomer came for: the
// training tables ("### Results"), the step against the machine's peak,
// and inference ("### Inference"), in the report's order; "" when it has
// none of them.
std::string HeadlineSections(absl::string_view markdown);

// `path` made absolute against the current folder (unchanged when it is
// absolute already, or when the current folder cannot be read): the
// closing hint's `./bazelw run` reads relative paths at the repository
// root, not where the suite ran.
std::string AbsolutePath(const std::string& path);

// The last lines of a default run: where the file is and the command for
// the full report, both with the file's absolute path.
std::string ClosingLines(const std::string& json_path);

// The headline tables of the run in `json_path` (the report library on the
// file), then ClosingLines.
absl::StatusOr<std::string> EndOfRunSummary(const std::string& json_path);

// A default run's last screen (an interrupted one's too: what finished):
// EndOfRunSummary on stdout, or the file and why there are no tables.
void PrintSummary(const std::string& json_path);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_RUN_SUMMARY_H_
