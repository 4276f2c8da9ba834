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
// "seconds" (real_time converted from its time_unit), and a repetition's
// timed iterations (kIterationsCounter; not an aggregate's, which counts
// the repetitions). A value Google Benchmark wrote as NaN, Infinity or
// -Infinity is kept as that double.
using Counters = std::map<std::string, double>;
inline constexpr const char* kIterationsCounter = "iterations";

// One case as one file reports it.
struct FileCase {
  CaseName name;
  std::string entry;                 // the name as written, for messages
  std::vector<Counters> iterations;  // successful repetitions
  // Per successful repetition (aligned with `iterations`), its other
  // numbers as written: counters the tables do not read and Google
  // Benchmark's own fields (cpu_time, repetition_index, ...). What the
  // history keeps beside the counters, so that no counter is lost.
  std::vector<Counters> other;
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

// A counter that is a rate of work over the timed time (images/s, FLOP/s,
// bytes/s, algbw, busbw, in place or not): over repetitions it is reduced
// as total work over total time (each repetition's work per iteration is
// the same, so that is the iteration-weighted harmonic mean of the
// repetitions' rates), never as the mean of rates, which one fast
// repetition pulls up.
bool IsRateCounter(absl::string_view counter);

// Repetitions of one rate reduced as total work over total time: the sum
// of their iterations over the sum of each one's iterations / rate.
class RatePool {
 public:
  // One repetition of `iterations` timed iterations at `rate`; false, and
  // nothing added, unless both are finite and above 0.
  bool Add(double rate, double iterations);
  int samples() const { return samples_; }
  double sum_of_rates() const { return sum_of_rates_; }
  // Total work over total time (exactly the rate when all were the same).
  double Rate() const;
  // The same with `others` more repetitions at `mean` (a mean aggregate's
  // repetitions, whose own iterations and rates are not written), each
  // taken to have this pool's mean iterations; nullopt when the pool is
  // empty or `mean` is not above 0.
  std::optional<double> RateWith(int others, double mean) const;

 private:
  double reference_ = 0;   // the first rate: keeps equal rates exact
  double iterations_ = 0;  // sum of iterations
  double weighted_ = 0;    // sum of iterations * reference_ / rate
  double sum_of_rates_ = 0;
  int samples_ = 0;
};

// One case's `counter` reduced over its repetitions, the one order every
// reader of results uses (the report's tables, the scaling model,
// step_breakdown): over the repetitions that have it when the file has
// repetitions (a rate as total work over total time when every one of
// them wrote its iterations: IsRateCounter, RatePool; else their mean),
// else the mean aggregate's value (for a rate, Google Benchmark's mean of
// the repetitions' rates: ParseRunFile warns of such files); nullopt when
// neither has it. (The report's tables weight the same two sources the
// same way, keeping the sums of squares the spread needs: results.cc.)
std::optional<double> CaseMean(const FileCase& c, const std::string& counter);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_RUN_FILE_H_
