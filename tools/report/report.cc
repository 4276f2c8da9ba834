#include "tools/report/report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/report/compare.h"
#include "tools/report/environment_tables.h"
#include "tools/report/kernel_tables.h"
#include "tools/report/records.h"
#include "tools/report/run_file.h"
#include "tools/report/train_tables.h"

namespace cnnbench::report {

Results LoadResults(const std::vector<std::string>& paths, std::vector<std::string>* warnings,
                    std::vector<std::string>* errors) {
  Results results;
  for (const std::string& path : paths) {
    absl::StatusOr<RunFile> file = LoadRunFile(path, warnings);
    if (!file.ok()) {
      errors->push_back(std::string(file.status().message()));
      continue;
    }
    AddRunFile(*file, results, warnings);
  }
  return results;
}

Report BuildReport(const Results& results, const std::string& title) {
  Report report;
  report.title = title;
  for (const PlatformResults& p : results.platforms) {
    PlatformReport platform{p.name, {}};
    Section environment{"Environment", {EnvironmentTable(p)}, {}};
    if (!p.train.empty()) {
      environment.tables.push_back(OptionsTable(p));
      environment.tables.push_back(ConfigurationTable(p));
    }
    platform.sections.push_back(std::move(environment));
    for (Section& s : TrainSections(p)) platform.sections.push_back(std::move(s));
    for (Section& s : KernelSections(p)) platform.sections.push_back(std::move(s));
    report.platforms.push_back(std::move(platform));
  }
  return report;
}

ReportOutput RunReport(const ReportOptions& options, const ChartRenderer& render_chart) {
  ReportOutput out;
  if (options.format != "markdown" && options.format != "csv" && options.format != "html" &&
      options.format != "jsonl") {
    out.errors.push_back(
        absl::StrCat("unknown --format=", options.format, "; use markdown, csv, html or jsonl"));
    out.exit_code = kExitBadInput;
    return out;
  }
  if (options.inputs.empty()) {
    out.errors.push_back("no input files; usage: report [options] run1.json [run2.json ...]");
    out.exit_code = kExitBadInput;
    return out;
  }
  Results results = LoadResults(options.inputs, &out.warnings, &out.errors);
  Report report = BuildReport(results, options.title);
  std::vector<Record> records = MakeRecords(results);

  if (!options.compare.empty()) {
    std::vector<std::string> base_warnings;
    Results base = LoadResults(options.compare, &base_warnings, &out.errors);
    for (const std::string& w : base_warnings) out.warnings.push_back(absl::StrCat("base: ", w));
    Comparison comparison = Compare(results, base, options.regression_threshold);
    for (size_t i = 0; i < comparison.sections.size(); ++i) {
      report.platforms[i].sections.push_back(std::move(comparison.sections[i]));
    }
    for (const Regression& r : comparison.regressions) out.regressions.push_back(r.Describe());
  }

  if (options.format == "markdown") out.text = RenderMarkdown(report);
  if (options.format == "csv") out.text = RenderCsv(report);
  if (options.format == "jsonl") out.text = RenderJsonl(records);
  if (options.format == "html") out.text = RenderHtml(report, render_chart, &out.warnings);

  if (!out.errors.empty()) {
    out.exit_code = kExitBadInput;
  } else if (options.fail_on_regression && !out.regressions.empty()) {
    out.exit_code = kExitRegression;
  }
  return out;
}

}  // namespace cnnbench::report
