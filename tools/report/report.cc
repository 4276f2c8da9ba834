#include "tools/report/report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/report/collective_tables.h"
#include "tools/report/compare.h"
#include "tools/report/energy_tables.h"
#include "tools/report/environment_tables.h"
#include "tools/report/framework_tables.h"
#include "tools/report/host_tables.h"
#include "tools/report/infer_tables.h"
#include "tools/report/kernel_tables.h"
#include "tools/report/output_file.h"
#include "tools/report/records.h"
#include "tools/report/run_file.h"
#include "tools/report/spread.h"
#include "tools/report/train_tables.h"

namespace cnnbench::report {

Results LoadResults(const std::vector<std::string>& paths, std::vector<std::string>* warnings,
                    std::vector<std::string>* errors) {
  std::vector<RunFile> files;
  std::vector<std::pair<FileId, std::string>> seen;
  for (const std::string& path : paths) {
    if (const std::optional<FileId> id = IdentifyFile(path)) {
      auto same =
          std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == *id; });
      if (same != seen.end()) {
        warnings->push_back(same->second == path ? absl::StrCat(path, ": given twice; read once")
                                                 : absl::StrCat(path, ": the same file as ",
                                                                same->second, "; read once"));
        continue;
      }
      seen.emplace_back(*id, path);
    }
    absl::StatusOr<RunFile> file = LoadRunFile(path, warnings);
    if (!file.ok()) {
      errors->push_back(std::string(file.status().message()));
      continue;
    }
    files.push_back(*std::move(file));
  }
  Results results;
  const std::vector<std::string> names = ReportedPlatforms(files, warnings);
  for (size_t i = 0; i < files.size(); ++i) AddRunFile(files[i], names[i], results);
  return results;
}

Report BuildReport(const Results& results, const std::string& title, double max_cv,
                   const std::string& baseline_framework) {
  Report report;
  report.title = title;
  std::map<size_t, Section> frameworks = FrameworkSections(results, baseline_framework, max_cv);
  for (size_t i = 0; i < results.platforms.size(); ++i) {
    const PlatformResults& p = results.platforms[i];
    PlatformReport platform{p.name, {}};
    Section environment{"Environment", {EnvironmentTable(p)}, {}};
    if (!p.train.empty()) {
      environment.tables.push_back(OptionsTable(p));
      environment.tables.push_back(ConfigurationTable(p));
    }
    platform.sections.push_back(std::move(environment));
    for (Section& s : TrainSections(p, max_cv)) platform.sections.push_back(std::move(s));
    if (std::optional<Section> hosts = HostSection(p))
      platform.sections.push_back(*std::move(hosts));
    if (std::optional<Table> accuracy = TrainAccuracyTable(p))
      platform.sections.push_back(Section{"Training accuracy", {*std::move(accuracy)}, {}});
    if (std::optional<Section> infer = InferSection(p, max_cv))
      platform.sections.push_back(*std::move(infer));
    if (std::optional<Section> energy = EnergySection(p))
      platform.sections.push_back(*std::move(energy));
    if (auto it = frameworks.find(i); it != frameworks.end())
      platform.sections.push_back(std::move(it->second));
    for (Section& s : KernelSections(p, max_cv)) platform.sections.push_back(std::move(s));
    Section spread{"Spread over repetitions", {}, {}};
    for (Table& t : TrainSpreadTables(p)) spread.tables.push_back(std::move(t));
    for (Table& t : KernelSpreadTables(p)) spread.tables.push_back(std::move(t));
    if (!spread.tables.empty()) {
      spread.tables.front().notes.push_back(SpreadNote());
      platform.sections.push_back(std::move(spread));
    }
    report.platforms.push_back(std::move(platform));
  }
  return report;
}

namespace {

// The options' own errors (format, inputs, thresholds), or "".
std::string OptionsError(const ReportOptions& options) {
  if (options.format != "markdown" && options.format != "csv" && options.format != "html" &&
      options.format != "jsonl" && options.format != "nccl-tests")
    return absl::StrCat("unknown --format=", options.format,
                        "; use markdown, csv, html, jsonl or nccl-tests");
  if (options.inputs.empty())
    return "no input files; usage: report [options] run1.json [run2.json ...]";
  if (!(options.max_cv >= 0) || !std::isfinite(options.max_cv))
    return absl::StrCat("--max_cv=", options.max_cv, " must be a fraction >= 0 (0.05: 5%)");
  // A threshold below 0 flags a file compared with itself; 1 or more never
  // flags anything; NaN compares false everywhere.
  if (!(options.regression_threshold >= 0 && options.regression_threshold < 1))
    return absl::StrCat("--regression_threshold=", options.regression_threshold,
                        " must be a fraction in [0, 1) (0.05: more than 5% slower)");
  return "";
}

// --compare: each platform's comparison section, the regressions and the
// warnings into `out`; returns why no case was compared, when none was.
std::string CompareWithBase(const ReportOptions& options, const Results& results, Report& report,
                            ReportOutput& out) {
  std::vector<std::string> base_warnings;
  Results base = LoadResults(options.compare, &base_warnings, &out.errors);
  for (const std::string& w : base_warnings) out.warnings.push_back(absl::StrCat("base: ", w));
  Comparison comparison = Compare(results, base, options.regression_threshold);
  for (size_t i = 0; i < comparison.sections.size(); ++i) {
    report.platforms[i].sections.push_back(std::move(comparison.sections[i]));
  }
  for (const Regression& r : comparison.regressions) out.regressions.push_back(r.Describe());
  for (const Regression& r : comparison.within_noise) out.within_noise.push_back(r.Describe());
  for (std::string& w : comparison.warnings) out.warnings.push_back(std::move(w));
  if (comparison.compared > 0 || !out.errors.empty()) return "";
  std::string nothing_compared =
      "nothing compared: no platform of this run has a case in the base files";
  if (!options.fail_on_regression) out.warnings.push_back(nothing_compared);
  return nothing_compared;
}

// The report in the options' format.
void Render(const ReportOptions& options, const Results& results, const Report& report,
            const ChartRenderer& render_chart, ReportOutput& out) {
  if (options.format == "markdown") out.text = RenderMarkdown(report);
  if (options.format == "csv") out.text = RenderCsv(report);
  if (options.format == "jsonl") out.text = RenderJsonl(MakeRecords(results));
  if (options.format == "nccl-tests") {
    out.text = RenderNcclTests(results);
    if (out.text.empty())
      out.errors.push_back(
          "--format=nccl-tests: the inputs hold no collective case (it prints only those)");
  }
  if (options.format == "html") out.text = RenderHtml(report, render_chart, &out.warnings);
}

}  // namespace

ReportOutput RunReport(const ReportOptions& options, const ChartRenderer& render_chart) {
  ReportOutput out;
  if (std::string error = OptionsError(options); !error.empty()) {
    out.errors.push_back(std::move(error));
    out.exit_code = kExitBadInput;
    return out;
  }
  Results results = LoadResults(options.inputs, &out.warnings, &out.errors);
  // No input could be read: the errors say why, and no report (not even
  // its title) is written.
  if (results.platforms.empty() && !out.errors.empty()) {
    out.exit_code = kExitBadInput;
    return out;
  }
  std::string baseline = kDefaultFramework;
  if (!options.baseline_framework.empty()) {
    absl::StatusOr<std::string> resolved =
        ResolveBaselineFramework(results, options.baseline_framework);
    if (!resolved.ok()) {
      out.errors.push_back(std::string(resolved.status().message()));
      out.exit_code = kExitBadInput;
      return out;
    }
    baseline = *resolved;
  }
  Report report = BuildReport(results, options.title, options.max_cv, baseline);
  const std::string nothing_compared =
      options.compare.empty() ? "" : CompareWithBase(options, results, report, out);
  Render(options, results, report, render_chart, out);
  if (!out.errors.empty()) {
    out.exit_code = kExitBadInput;
  } else if (options.fail_on_regression && !nothing_compared.empty()) {
    // A gate that checked nothing must not pass.
    out.errors.push_back(absl::StrCat(nothing_compared, "; --fail_on_regression cannot pass"));
    out.exit_code = kExitNothingCompared;
  } else if (options.fail_on_regression && !out.regressions.empty()) {
    out.exit_code = kExitRegression;
  }
  return out;
}

}  // namespace cnnbench::report
