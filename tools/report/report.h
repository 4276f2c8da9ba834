// tools/report end to end: reads benchmark JSON files, builds the tables for
// each platform, optionally compares with base files, and renders one format.
#ifndef CNNBENCH_TOOLS_REPORT_REPORT_H_
#define CNNBENCH_TOOLS_REPORT_REPORT_H_

#include <string>
#include <vector>

#include "tools/report/formats.h"
#include "tools/report/results.h"
#include "tools/report/table.h"

namespace cnnbench::report {

struct ReportOptions {
  std::string format = "markdown";   // markdown, csv, html, jsonl, nccl-tests (collectives only)
  std::vector<std::string> inputs;   // JSON files
  std::vector<std::string> compare;  // base JSON files; empty: no comparison
  double regression_threshold = 0.05;
  bool fail_on_regression = false;
  // A cell whose cv over repetitions is above this gets a footnote mark.
  double max_cv = 0.05;
  std::string title = "cnnbench results";
  // The framework "Frameworks side by side" divides by (a framework's full
  // name or its first word). Empty: kDefaultFramework, and no error when no
  // input has it; set: an input must have it (else kExitBadInput).
  std::string baseline_framework;
};

// Exit codes of //tools:report. kExitBadInput also covers an output that
// cannot be written; kExitNothingCompared is for --fail_on_regression when
// the base shares no platform or case with this run.
enum ExitCode {
  kExitOk = 0,
  kExitRegression = 1,
  kExitBadInput = 2,
  kExitNothingCompared = 3,
};

struct ReportOutput {
  std::string text;                   // the rendered report
  std::vector<std::string> warnings;  // entries skipped, files without train cases, ...
  std::vector<std::string> errors;    // files that could not be used at all
  std::vector<std::string> regressions;
  // Cells below the threshold that the repetitions cannot tell from noise
  // (Comparison::within_noise): said, never a regression.
  std::vector<std::string> within_noise;
  int exit_code = kExitOk;
};

// Reads files into merged per-platform results; a file that cannot be used
// adds an error and the others still count. A file named twice (by the same
// path or another: a relative path, a link) is read once, with a warning.
Results LoadResults(const std::vector<std::string>& paths, std::vector<std::string>* warnings,
                    std::vector<std::string>* errors);

// Every section of every platform (environment, training, frameworks side
// by side, kernels, spread); cells with a cv above `max_cv` are marked.
// Ratios between frameworks are against `baseline_framework` (a framework
// as PlatformResults::framework holds it).
Report BuildReport(const Results& results, const std::string& title, double max_cv,
                   const std::string& baseline_framework = kDefaultFramework);

// The whole run. `render_chart` draws HTML charts (RenderChartSvg in the tool).
ReportOutput RunReport(const ReportOptions& options, const ChartRenderer& render_chart);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_REPORT_H_
