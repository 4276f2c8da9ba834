// //tools:step_breakdown reports where a step's time goes; what it reports
// is a measurement, so this checks its shape, not its numbers: the layers it
// profiles, and that a run of //bench:all has every kernel case its sum needs
// (the suite and the tool read one list of each layer's cases).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace {

std::string g_step_breakdown, g_bench;

std::string TempPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp ? tmp : "/tmp", "/", name);
}

int RunCommand(const std::string& command, std::string* output) {
  const std::string log = TempPath("step_breakdown.log");
  const int rc = std::system(absl::StrCat(command, " > ", log, " 2>&1").c_str());
  std::ifstream in(log);
  output->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return rc;
}

TEST(StepBreakdownTest, ProfileListsEveryLayerAndTheCoverage) {
  std::string output;
  ASSERT_EQ(
      RunCommand(absl::StrCat(g_step_breakdown,
                              " --profile --model=trivial --batch=2 --image_size=32 --steps=2 "
                              "--warmup_steps=1"),
                 &output),
      0)
      << output;
  for (const char* layer : {"fc0 ", "relu0 ", "fc1 ", "relu1 ", "fc2 ", "loss0 ", "update "})
    EXPECT_NE(output.find(layer), std::string::npos) << layer << " missing:\n" << output;
  EXPECT_NE(output.find("% of the step)"), std::string::npos) << output;
}

TEST(StepBreakdownTest, ASuiteRunHasEveryKernelCaseOfTheStep) {
  const std::string json = TempPath("run.json");
  std::string output;
  ASSERT_EQ(
      RunCommand(absl::StrCat(g_bench,
                              " --preset=tiny --families=train,fc,relu --image_size=32 "
                              "--kernel_models=trivial --kernel_batch=2 --max_kernel_shapes=0 "
                              "--benchmark_out=",
                              json, " --benchmark_out_format=json"),
                 &output),
      0)
      << output;
  // Exit 1 would mean a kernel case the sum needs is not in the run.
  ASSERT_EQ(
      RunCommand(absl::StrCat(g_step_breakdown, " --json=", json,
                              " --model=trivial --batch=2 --image_size=32 --profile --steps=1 "
                              "--warmup_steps=0"),
                 &output),
      0)
      << output;
  EXPECT_NE(output.find("step / sum of kernels:"), std::string::npos) << output;
  EXPECT_EQ(output.find("missing"), std::string::npos) << output;
  EXPECT_NE(output.find("case/step"), std::string::npos) << output;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 3) {
    std::fprintf(stderr, "usage: step_breakdown_test STEP_BREAKDOWN BENCH (from BUILD's args)\n");
    return 2;
  }
  g_step_breakdown = argv[1];
  g_bench = argv[2];
  return RUN_ALL_TESTS();
}
