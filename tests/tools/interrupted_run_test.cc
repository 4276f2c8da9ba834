// A run stopped by a signal (its context's "interrupted", written by
// //bench:all) is marked in the report's Environment table; a complete run
// is not.
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/tools/report_testing.h"
#include "tools/report/report.h"

namespace cnnbench::report {
namespace {

using testing::kData;

TEST(InterruptedRunTest, TheEnvironmentTableSaysTheRunWasInterrupted) {
  std::ifstream in(kData + "cpu_box.json");
  nlohmann::json run = nlohmann::json::parse(in);
  ReportOptions options;
  options.inputs = {kData + "cpu_box.json"};
  EXPECT_FALSE(absl::StrContains(RunReport(options, nullptr).text, "| Interrupted |"));

  run["context"]["interrupted"] =
      "SIGINT after 3 of 41 cases had started (the one running then is left out); 38 not run";
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/interrupted.json";
  std::ofstream(path) << run.dump();
  options.inputs = {path};
  const ReportOutput out = RunReport(options, nullptr);
  ASSERT_EQ(out.exit_code, kExitOk) << out.text;
  EXPECT_TRUE(absl::StrContains(out.text, "| Interrupted | SIGINT after 3 of 41 cases had started"))
      << out.text;
  EXPECT_TRUE(absl::StrContains(out.text, "38 not run: the tables hold what finished")) << out.text;
}

}  // namespace
}  // namespace cnnbench::report
