// --compare on one-rank collectives, whose busbw is 0 by definition (all-
// reduce, all-gather, reduce-scatter, all-to-all): the algbw is compared,
// so a copy at half the speed is flagged.
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/tools/report_testing.h"
#include "tools/report/report.h"

namespace cnnbench::report {
namespace {

using testing::kData;

// collectives.json made one-rank: busbw 0 everywhere, algbw scaled.
std::string OneRank(const std::string& name, double algbw_scale) {
  std::ifstream in(kData + "collectives.json");
  nlohmann::json run = nlohmann::json::parse(in);
  for (nlohmann::json& b : run["benchmarks"]) {
    for (const char* key : {"name", "run_name"})
      if (b.contains(key))
        b[key] = absl::StrReplaceAll(b[key].get<std::string>(), {{"/ranks:4/", "/ranks:1/"}});
    if (b.contains("busbw")) b["busbw"] = 0.0;
    if (b.contains("busbw_inplace")) b["busbw_inplace"] = 0.0;
    if (b.contains("algbw")) b["algbw"] = b["algbw"].get<double>() * algbw_scale;
  }
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name;
  std::ofstream(path) << run.dump();
  return path;
}

TEST(OneRankCompareTest, AHalfSpeedOneRankCollectiveIsARegression) {
  ReportOptions options;
  options.inputs = {OneRank("now.json", 0.5)};
  options.compare = {OneRank("base.json", 1.0)};
  options.fail_on_regression = true;
  const ReportOutput out = RunReport(options, nullptr);
  EXPECT_EQ(out.exit_code, kExitRegression) << absl::StrJoin(out.errors, "\n") << out.text;
  ASSERT_FALSE(out.regressions.empty()) << out.text;
  EXPECT_TRUE(absl::StrContains(absl::StrJoin(out.regressions, "\n"), "ranks:1"))
      << absl::StrJoin(out.regressions, "\n");
  // The same file against itself: nothing.
  options.inputs = options.compare;
  EXPECT_EQ(RunReport(options, nullptr).exit_code, kExitOk);
}

}  // namespace
}  // namespace cnnbench::report
