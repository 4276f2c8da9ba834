// //tools:report: Google Benchmark JSON from //bench:all -> the published
// per-platform tables (Markdown, CSV, JSON lines) or an HTML page with charts.
//   ./bazelw run //tools:report -- [--format=...] [--compare=base.json] run.json ...
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "core/crash_handler.h"
#include "core/invocation.h"
#include "tools/report/charts.h"
#include "tools/report/output_file.h"
#include "tools/report/report.h"

ABSL_FLAG(std::string, format, "markdown",
          "markdown, csv, html, jsonl, or nccl-tests (the collectives in nccl-tests' own text "
          "layout, for scripts that parse all_reduce_perf)");
ABSL_FLAG(std::vector<std::string>, compare, {},
          "base JSON file(s), comma-separated: adds this-run/base ratio tables and regressions");
ABSL_FLAG(double, regression_threshold, 0.05,
          "a ratio below 1 - threshold is a regression (0.05: more than 5% slower; a fraction in "
          "[0, 1))");
ABSL_FLAG(bool, fail_on_regression, false, "exit 1 when --compare finds a regression");
ABSL_FLAG(double, max_cv, 0.05,
          "mark cells whose coefficient of variation over repetitions is above this "
          "(0.05: 5%)");
ABSL_FLAG(std::string, output, "",
          "write the report here instead of stdout (never one of the inputs); a regular file "
          "is replaced whole, through a temporary file beside it");
ABSL_FLAG(std::string, title, "cnnbench results", "the report's title");
ABSL_FLAG(std::string, baseline_framework, "",
          "the framework \"Frameworks side by side\" divides by: its full name (\"pytorch "
          "2.15.0\") or first word (\"pytorch\"); default cnnbench");

namespace {

// `bazel run` starts the tool in its runfiles; paths on the command line
// are relative to where bazel was started (the repository root with ./bazelw).
std::string FromUserDirectory(const std::string& path) {
  const char* dir = std::getenv("BUILD_WORKING_DIRECTORY");
  if (path.empty() || path[0] == '/' || dir == nullptr || *dir == '\0') return path;
  return absl::StrCat(dir, "/", path);
}

}  // namespace

int main(int argc, char** argv) {
  cnnbench::InstallCrashHandler(argv[0]);
  cnnbench::ChangeToInvocationDirectory();  // input paths are relative to the user's folder
  absl::SetProgramUsageMessage(
      "report [--format=markdown|csv|html|jsonl|nccl-tests] [--compare=base.json] "
      "[--fail_on_regression] [--max_cv=0.05] [--baseline_framework=NAME] [--output=FILE] "
      "run1.json [run2.json ...]");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);

  cnnbench::report::ReportOptions options;
  options.format = absl::GetFlag(FLAGS_format);
  for (size_t i = 1; i < args.size(); ++i) options.inputs.push_back(FromUserDirectory(args[i]));
  for (const std::string& base : absl::GetFlag(FLAGS_compare)) {
    options.compare.push_back(FromUserDirectory(base));
  }
  options.regression_threshold = absl::GetFlag(FLAGS_regression_threshold);
  options.fail_on_regression = absl::GetFlag(FLAGS_fail_on_regression);
  options.max_cv = absl::GetFlag(FLAGS_max_cv);
  options.title = absl::GetFlag(FLAGS_title);
  options.baseline_framework = absl::GetFlag(FLAGS_baseline_framework);

  // Before anything is read: the report must never replace one of its inputs.
  const std::string output = FromUserDirectory(absl::GetFlag(FLAGS_output));
  if (!output.empty()) {
    std::vector<std::string> inputs = options.inputs;
    inputs.insert(inputs.end(), options.compare.begin(), options.compare.end());
    if (absl::Status s = cnnbench::report::CheckNotAnInput(output, inputs); !s.ok()) {
      std::fprintf(stderr, "report: error: %s\n", std::string(s.message()).c_str());
      return cnnbench::report::kExitBadInput;
    }
  }

  cnnbench::report::ReportOutput out =
      cnnbench::report::RunReport(options, cnnbench::report::RenderChartSvg);
  for (const std::string& w : out.warnings)
    std::fprintf(stderr, "report: warning: %s\n", w.c_str());
  for (const std::string& e : out.errors) std::fprintf(stderr, "report: error: %s\n", e.c_str());
  for (const std::string& r : out.regressions) {
    std::fprintf(stderr, "report: regression: %s\n", r.c_str());
  }
  for (const std::string& r : out.within_noise)
    std::fprintf(stderr, "report: below the threshold but within noise: %s\n", r.c_str());

  if (out.text.empty() && out.exit_code != cnnbench::report::kExitOk) return out.exit_code;
  const absl::Status written = output.empty() ? cnnbench::report::WriteStandardOutput(out.text)
                                              : cnnbench::report::WriteOutputFile(output, out.text);
  if (!written.ok()) {
    std::fprintf(stderr, "report: error: %s\n", std::string(written.message()).c_str());
    return cnnbench::report::kExitBadInput;
  }
  return out.exit_code;
}
