// All runs merged per platform: every case's mean and spread over all its
// repetitions in all files of that platform, or why it failed. Files of one
// platform measured with different settings are kept apart as platforms of
// their own.
#ifndef CNNBENCH_TOOLS_REPORT_RESULTS_H_
#define CNNBENCH_TOOLS_REPORT_RESULTS_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "tools/report/case_name.h"
#include "tools/report/run_file.h"

namespace cnnbench::report {

// The framework a run without a `framework` context key measured: this suite.
inline constexpr const char* kDefaultFramework = "cnnbench";

struct Measurement {
  // Per counter, over the samples with a finite value: their sum, the sum of
  // their squares (rebuilt from a stddev aggregate where only aggregates
  // were written) and how many there are.
  std::map<std::string, double> sum;
  std::map<std::string, double> sum_squares;
  std::map<std::string, int> count;
  std::map<std::string, int> spread_unknown;  // samples from a mean without a stddev
  std::map<std::string, int> not_finite;      // samples written as NaN or +-Infinity
  // The first non-finite value of each counter as written: NaN, Infinity, -Infinity.
  std::map<std::string, std::string> not_finite_text;
  // Rates (IsRateCounter) of the repetitions that wrote their iterations:
  // Mean's total work over total time (RatePool).
  std::map<std::string, RatePool> rates;
  // Each counter's finite values, one per repetition the files wrote (a
  // mean aggregate of several adds none): what --compare's test reads.
  std::map<std::string, std::vector<double>> values;
  int samples = 0;                   // successful repetitions
  std::vector<std::string> errors;   // distinct failure messages, as written
  std::vector<std::string> commits;  // of the files that measured it
  std::vector<std::string> dates;

  bool ok() const { return samples > 0; }
  // The first error as written, or a note that no repetition gave a sample
  // (a case can fail to be ok without an error message).
  std::string FirstError() const {
    return errors.empty() ? "no usable sample (no repetition wrote the counter)" : errors.front();
  }
  // Failed with an out-of-memory error (the message starts with "OOM").
  bool oom() const;
  // Empty when the counter is absent or any sample of it was not finite.
  // A rate (images/s, FLOP/s, bytes/s, algbw, busbw) over repetitions is
  // total work over total time, not the mean of the repetitions' rates; a
  // mean aggregate's repetitions (a file written with
  // --benchmark_report_aggregates_only) count in that at their mean rate,
  // each with the mean iterations of the others (alone, the mean is theirs).
  std::optional<double> Mean(absl::string_view counter) const;
  // The plain mean of the samples (of rates too): what the spread is
  // measured around.
  std::optional<double> SampleMean(absl::string_view counter) const;
  // The sample standard deviation over the repetitions; empty with fewer
  // than two or when a file gave only a mean.
  std::optional<double> Stddev(absl::string_view counter) const;
  // Coefficient of variation, stddev / mean.
  std::optional<double> Cv(absl::string_view counter) const;
  // "images_per_second was NaN in 1 of 3 repetitions"; "" when all were finite.
  std::string NotFiniteText(absl::string_view counter) const;
  // The first failure message as a reader sees it (messages.h).
  std::string Error() const;
};

struct PlatformResults {
  std::string name;      // as reported: the platform, plus the settings that set it apart
  std::string platform;  // the context's platform (or its fallback)
  std::string framework = kDefaultFramework;  // what trained: FrameworkOf its files
  std::vector<std::string> files;
  // The values of SettingKeys() its files recorded, in SettingKeys() order.
  std::vector<std::pair<std::string, std::string>> settings;
  // Context keys in first-seen order with their distinct values.
  std::vector<std::pair<std::string, std::vector<std::string>>> context;
  // By family: train; the layer kernels and GEMM; the collectives (every
  // collective's family); grads; input; peak (the CPU's FMA peak).
  std::map<CaseName, Measurement> train;
  std::map<CaseName, Measurement> kernels;
  std::vector<CaseName> kernel_order;  // first-seen order, which follows registration
  std::map<CaseName, Measurement> collectives;
  std::map<CaseName, Measurement> grads;
  std::map<CaseName, Measurement> input;
  std::map<CaseName, Measurement> peak;
  std::map<CaseName, Measurement> bandwidth;  // the memory's rates (bandwidth/...)
  std::map<CaseName, Measurement> infer;      // inference (infer/...)

  // Distinct values joined with ", "; "" when no file has the key.
  std::string Context(absl::string_view key) const;
  std::vector<std::string> ContextValues(absl::string_view key) const;
};

struct Results {
  std::vector<PlatformResults> platforms;  // in first-seen order

  const PlatformResults* Find(absl::string_view platform) const;
};

// What produced a file's figures: its context's "framework" (a peer runner
// writes "pytorch 2.15.0"), else kDefaultFramework.
std::string FrameworkOf(const RunFile& file);

// Context keys whose values change a figure: runs that differ in one are
// never merged into one cell (docs/report.md lists them and says why). The
// three classes of tools/report/context_keys.h together: the measurement
// settings, the machine's identity and its environment.
const std::vector<std::string>& SettingKeys();
// The run's own record (when, where, how long, what the machine was doing):
// context_keys.h's RunRecordKeys.
const std::vector<std::string>& NonSettingKeys();

// The platform a file belongs to: its context's "platform", else its host
// name, else the file name (with a warning).
std::string PlatformOf(const RunFile& file, std::vector<std::string>* warnings);

// The name each file is reported under: its platform, or, where files of one
// platform differ in a setting, the platform with the settings that tell
// them apart ("cpu-epyc-2c (steps=5)"), with a warning naming the key.
// A setting one file does not record matches any value, except the
// framework: a file without one is kDefaultFramework's, and files of two
// frameworks never merge. A framework other than kDefaultFramework is part
// of the name ("cpu-epyc-2c (framework=pytorch 2.15.0)"), without a warning.
// A model's definition (context_keys.h) does not split a platform: its cases
// of another definition than the zoo's are named apart (AddRunFile), with a
// warning here per file and model.
std::vector<std::string> ReportedPlatforms(const std::vector<RunFile>& files,
                                           std::vector<std::string>* warnings);

// Merges one file into the platform reported as `name`. A model's cases
// whose recorded definition is not the zoo's current one go in under
// ReportedModel's name ("mobilenet (definition 1)"), so they never merge
// with the current network's.
void AddRunFile(const RunFile& file, const std::string& name, Results& results);

// Merges one file into its platform (PlatformOf).
void AddRunFile(const RunFile& file, Results& results, std::vector<std::string>* warnings);

// Adds each value to `values` unless it is already there.
void AddDistinct(const std::string& value, std::vector<std::string>& values);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_RESULTS_H_
