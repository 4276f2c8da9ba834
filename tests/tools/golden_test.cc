// Fixtures in Google Benchmark's real format -> exactly the expected
// Markdown, CSV and JSON lines (testdata/golden/; regenerate.sh rewrites them).
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/tools/report_testing.h"
#include "tools/report/report.h"

namespace cnnbench::report {
namespace {

using testing::kData;
using testing::NoCharts;
using testing::ReadFile;

// Compares line by line so a failure shows the first differing line.
void ExpectGolden(const std::string& actual, const std::string& golden_name) {
  const std::string expected = ReadFile(kData + "golden/" + golden_name);
  std::vector<std::string> a = absl::StrSplit(actual, '\n'), e = absl::StrSplit(expected, '\n');
  for (size_t i = 0; i < std::min(a.size(), e.size()); ++i) {
    ASSERT_EQ(a[i], e[i]) << golden_name << " line " << i + 1
                          << " differs (if intended, run tests/tools/testdata/regenerate.sh)";
  }
  ASSERT_EQ(a.size(), e.size()) << golden_name << ": line count differs";
}

ReportOutput RunTwoPlatforms(const std::string& format) {
  ReportOptions options;
  options.format = format;
  options.inputs = {kData + "gpu_box.json", kData + "cpu_box.json", kData + "cpu_box_more.json"};
  return RunReport(options, NoCharts);
}

TEST(GoldenTest, Markdown) {
  ReportOutput out = RunTwoPlatforms("markdown");
  EXPECT_EQ(out.exit_code, kExitOk);
  EXPECT_TRUE(out.errors.empty());
  ExpectGolden(out.text, "two_platforms.md");
}

TEST(GoldenTest, Csv) { ExpectGolden(RunTwoPlatforms("csv").text, "two_platforms.csv"); }

TEST(GoldenTest, Jsonl) { ExpectGolden(RunTwoPlatforms("jsonl").text, "two_platforms.jsonl"); }

TEST(GoldenTest, JsonlRecordsHaveTheDashboardFields) {
  std::istringstream lines(RunTwoPlatforms("jsonl").text);
  std::string line;
  int train = 0;
  while (std::getline(lines, line)) {
    nlohmann::json record = nlohmann::json::parse(line);
    if (record["kind"] != "train") continue;
    ++train;
    for (const char* field :
         {"platform", "model", "precision", "data", "batch", "gpus", "replicas", "ranks",
          "images_per_second", "repetitions", "cv", "commit", "date"}) {
      EXPECT_TRUE(record.contains(field)) << field << " missing in " << line;
    }
  }
  EXPECT_EQ(train, 18);  // 12 on h200x2, 6 on cpu-epyc-2c (5 + 1 from the second file)
}

TEST(GoldenTest, CompareFlagsRegressionsAndFailsOnRequest) {
  ReportOptions options;
  options.inputs = {kData + "gpu_box.json"};
  options.compare = {kData + "gpu_box_base.json"};
  ReportOutput out = RunReport(options, NoCharts);
  EXPECT_EQ(out.exit_code, kExitOk);  // regressions fail only with fail_on_regression
  ExpectGolden(out.text, "compare.md");
  ASSERT_EQ(out.regressions.size(), 3u);
  EXPECT_EQ(
      out.regressions[0],
      "h200x2 train/resnet50/fp16/synthetic/batch:256/gpus:2: 6500 -> 5830 images/sec (0.90); "
      "99% intervals apart");
  EXPECT_EQ(out.regressions[1],
            "h200x2 train/resnet50/fp16/real/batch:256/gpus:2: 5610 images/sec in base, failed "
            "or not run now");

  options.fail_on_regression = true;
  EXPECT_EQ(RunReport(options, NoCharts).exit_code, kExitRegression);
  // A looser threshold lets the 10% and 13% drops pass; the failed case still counts.
  options.regression_threshold = 0.2;
  ReportOutput loose = RunReport(options, NoCharts);
  EXPECT_EQ(loose.regressions.size(), 1u);
  // Against itself nothing regresses.
  options.compare = {kData + "gpu_box.json"};
  EXPECT_EQ(RunReport(options, NoCharts).exit_code, kExitOk);
}

}  // namespace
}  // namespace cnnbench::report
