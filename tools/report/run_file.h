// Reads one Google Benchmark JSON file (--benchmark_out_format=json) into
// its context and its cnnbench cases, each reduced over its repetitions.
#ifndef CNNBENCH_TOOLS_REPORT_RUN_FILE_H_
#define CNNBENCH_TOOLS_REPORT_RUN_FILE_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/report/case_name.h"

namespace cnnbench::report {

// Counter values of one run: "images_per_second", "flops",
// "bytes_per_second", "algbw", "busbw" as written (per second), and
// "seconds" (real_time converted from its time_unit). A value Google
// Benchmark wrote as NaN, Infinity or -Infinity is kept as that double.
using Counters = std::map<std::string, double>;

// One case as one file reports it.
struct FileCase {
  CaseName name;
  std::string entry;                 // the name as written, for messages
  std::vector<Counters> iterations;  // successful repetitions
  Counters mean;                     // the "mean" aggregate, if written
  int mean_repetitions = 0;          // how many repetitions that mean covers
  Counters stddev;                   // the "stddev" aggregate, if written
  std::string error;                 // error_message of a failed repetition
};

struct RunFile {
  std::string path;
  // Scalar context entries in file order; for a key written twice (Google
  // Benchmark's own "date" and a custom one) the later one counts.
  std::vector<std::pair<std::string, std::string>> context;
  std::vector<FileCase> cases;  // in file order

  // The context value, or "" when absent.
  std::string Context(absl::string_view key) const;
};

// Google Benchmark writes non-finite numbers as bare NaN, -NaN, Infinity and
// -Infinity, which JSON has no words for: turns each such token outside a
// string into a string ("NaN"), which the reader takes for that number.
std::string QuoteNonFiniteNumbers(absl::string_view text);

// nlohmann's message for the first syntax error in `text` (with its
// position), "" when `text` parses; for "not JSON" errors that say where.
std::string JsonSyntaxError(const std::string& text);

// Parses `text` (the contents of `path`). A file that is not JSON or not
// Google Benchmark output is an error naming the file; entries the report
// cannot use add a warning naming the file and the entry and are skipped.
absl::StatusOr<RunFile> ParseRunFile(absl::string_view path, absl::string_view text,
                                     std::vector<std::string>* warnings);

// Reads `path` and parses it.
absl::StatusOr<RunFile> LoadRunFile(const std::string& path, std::vector<std::string>* warnings);

// One case's `counter` reduced over its repetitions, the one order every
// reader of results uses (the report's tables, the scaling model,
// step_breakdown): the mean of the repetitions that have it when the file
// has repetitions, else the mean aggregate's value; nullopt when neither
// has it. (The report's tables weight the same two sources the same way,
// keeping the sums of squares the spread needs: results.cc.)
std::optional<double> CaseMean(const FileCase& c, const std::string& counter);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_RUN_FILE_H_
