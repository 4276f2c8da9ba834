// The top-level aliases run what they name: //:bench the suite, //:report
// the report, //:model_summary the model summary. Bazel passes each alias's
// binary ($(rootpath //:X)) as an argument.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace {

std::string g_bench, g_report, g_model_summary;

// Runs `command`, returning its exit status and stdout+stderr.
int RunCommand(const std::string& command, std::string* output) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string log = absl::StrCat(tmp ? tmp : "/tmp", "/alias.log");
  const int rc = std::system(absl::StrCat(command, " > ", log, " 2>&1").c_str());
  std::ifstream in(log);
  output->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return rc;
}

TEST(AliasesTest, BenchIsTheSuite) {
  std::string output;
  ASSERT_EQ(RunCommand(g_bench + " --preset=tiny --list", &output), 0) << output;
  EXPECT_NE(output.find("train/trivial/fp32/synthetic/batch:2/gpus:0"), std::string::npos)
      << output;
}

TEST(AliasesTest, ReportIsTheReport) {
  std::string output;
  ASSERT_EQ(RunCommand(g_report + " tests/tools/testdata/cpu_box.json", &output), 0) << output;
  EXPECT_NE(output.find("ResNet-50"), std::string::npos) << output;
  EXPECT_NE(output.find("cpu-epyc-2c"), std::string::npos) << output;
}

TEST(AliasesTest, ModelSummaryIsTheModelSummary) {
  std::string output;
  ASSERT_EQ(RunCommand(g_model_summary + " --model=trivial", &output), 0) << output;
  EXPECT_NE(output.find("parameters:"), std::string::npos) << output;
  EXPECT_NE(output.find("4,263,877"), std::string::npos) << output;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 4) {
    std::fprintf(stderr, "usage: aliases_test BENCH REPORT MODEL_SUMMARY (from BUILD's args)\n");
    return 2;
  }
  g_bench = argv[1];
  g_report = argv[2];
  g_model_summary = argv[3];
  return RUN_ALL_TESTS();
}
