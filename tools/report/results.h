// All runs merged per platform: every case's mean over all its repetitions in
// all files of that platform, or why it failed.
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

struct Measurement {
  std::map<std::string, double> sum;  // per counter, over the samples that have it
  std::map<std::string, int> count;
  int samples = 0;                   // successful repetitions
  std::vector<std::string> errors;   // distinct failure messages
  std::vector<std::string> commits;  // of the files that measured it
  std::vector<std::string> dates;

  bool ok() const { return samples > 0; }
  // Failed with an out-of-memory error (the message starts with "OOM").
  bool oom() const;
  std::optional<double> Mean(absl::string_view counter) const;
};

struct PlatformResults {
  std::string name;
  std::vector<std::string> files;
  // Context keys in first-seen order with their distinct values.
  std::vector<std::pair<std::string, std::vector<std::string>>> context;
  // By family: train; the layer kernels and GEMM; allreduce; input.
  std::map<CaseName, Measurement> train;
  std::map<CaseName, Measurement> kernels;
  std::vector<CaseName> kernel_order;  // first-seen order, which follows registration
  std::map<CaseName, Measurement> allreduce;
  std::map<CaseName, Measurement> input;

  // Distinct values joined with ", "; "" when no file has the key.
  std::string Context(absl::string_view key) const;
  std::vector<std::string> ContextValues(absl::string_view key) const;
};

struct Results {
  std::vector<PlatformResults> platforms;  // in first-seen order

  const PlatformResults* Find(absl::string_view platform) const;
};

// The platform a file belongs to: its context's "platform", else its host
// name, else the file name (with a warning).
std::string PlatformOf(const RunFile& file, std::vector<std::string>* warnings);

// Merges one file into its platform.
void AddRunFile(const RunFile& file, Results& results, std::vector<std::string>* warnings);

// Adds each value to `values` unless it is already there.
void AddDistinct(const std::string& value, std::vector<std::string>& values);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_RESULTS_H_
