// A fixture built from the published DGX-1 tables (the numbers as if
// measured) reproduces those tables' rows and columns exactly.
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tools/report/report.h"

namespace cnnbench::report {
namespace {

const std::string kData = "tests/tools/testdata/";

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// dgx1_published.tsv: "table <data> <main|batch>" then tab-separated rows.
std::map<std::string, std::vector<std::string>> PublishedTables() {
  std::map<std::string, std::vector<std::string>> tables;
  std::string current;
  for (const std::string& line : Lines(kData + "dgx1_published.tsv")) {
    if (line.empty() || line[0] == '#') continue;
    if (absl::StartsWith(line, "table ")) {
      current = line.substr(6);
      continue;
    }
    tables[current].push_back(line);
  }
  return tables;
}

// The report's Markdown tables by heading, as tab-separated rows with
// footnote markers ("N/A[1]") dropped.
std::map<std::string, std::vector<std::string>> ReportTables(const std::string& markdown) {
  std::map<std::string, std::vector<std::string>> tables;
  std::string heading;
  for (absl::string_view line : absl::StrSplit(markdown, '\n')) {
    if (absl::ConsumePrefix(&line, "#### ")) {
      heading = std::string(line);
    } else if (absl::StartsWith(line, "| ") && !absl::StartsWith(line, "| ---")) {
      line.remove_prefix(2);
      line.remove_suffix(2);
      std::vector<std::string> cells = absl::StrSplit(line, " | ");
      for (std::string& cell : cells) {
        if (size_t bracket = cell.find('['); bracket != std::string::npos) cell.resize(bracket);
      }
      tables[heading].push_back(absl::StrJoin(cells, "\t"));
    }
  }
  return tables;
}

TEST(Dgx1Test, ReproducesThePublishedTables) {
  ReportOptions options;
  options.inputs = {kData + "dgx1.json"};
  ReportOutput out = RunReport(options, nullptr);
  ASSERT_EQ(out.exit_code, kExitOk);
  auto published = PublishedTables();
  auto report = ReportTables(out.text);
  const std::map<std::string, std::string> headings = {
      {"synthetic main", "Training synthetic data, fp32, batch size per GPU as in Options"},
      {"real main", "Training real data, fp32, batch size per GPU as in Options"},
      {"synthetic 32", "Other results: training synthetic data, fp32, batch size 32 per GPU"},
      {"real 32", "Other results: training real data, fp32, batch size 32 per GPU"},
  };
  ASSERT_EQ(published.size(), 4u);
  for (const auto& [key, heading] : headings) {
    ASSERT_TRUE(report.count(heading)) << "no table '" << heading << "' in:\n" << out.text;
    EXPECT_EQ(report[heading], published[key]) << heading;
  }
  // The published options table: batch size per GPU per model.
  EXPECT_EQ(report["Options"][1], "Batch size per GPU\t64\t64\t64\t512\t64");
  // The excluded case says why.
  EXPECT_NE(out.text.find("[1] skipped: input pipeline saturated"), std::string::npos);
}

}  // namespace
}  // namespace cnnbench::report
