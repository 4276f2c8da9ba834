// //tools:step_breakdown reports where a step's time goes; what it reports
// is a measurement, so this checks its shape, not its numbers: the layers it
// profiles, and that a run of //bench:all has every kernel case its sum needs
// (the suite and the tool read one list of each layer's cases).
#include <sys/wait.h>

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

// --direct: each convolution of the profile against oneDNN called directly
// (fp32 here), the sum line, and the step against the peak loop (or why
// this CPU has none); --direct without a profiled oneDNN step is refused.
TEST(StepBreakdownTest, DirectListsEveryConvolutionAndThePeakLine) {
  std::string output;
  ASSERT_EQ(
      RunCommand(absl::StrCat(g_step_breakdown,
                              " --profile --direct --model=resnet20 --batch=2 --steps=1 "
                              "--warmup_steps=0"),
                 &output),
      0)
      << output;
  const size_t table = output.find("against oneDNN called directly (fp32");
  ASSERT_NE(table, std::string::npos) << output;
  for (const char* layer : {"\nconv0 ", "\nstage1/block0/conv1 ", "\nstage3/block2/conv18 "})
    EXPECT_NE(output.find(layer, table), std::string::npos) << layer << " missing:\n" << output;
  EXPECT_NE(output.find("convolutions: step", table), std::string::npos) << output;
  EXPECT_TRUE(output.find("of the fp32 peak measured now") != std::string::npos ||
              output.find("peak: unsupported") != std::string::npos)
      << output;
  for (const char* refused : {" --direct --model=trivial", " --profile --direct --backend=reference"}) {
    const int rc = RunCommand(absl::StrCat(g_step_breakdown, refused), &output);
    EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 2) << refused << ": " << output;
    EXPECT_NE(output.find("--direct"), std::string::npos) << output;
  }
}

// --infer: the inference plan's layers (resnet20's block convolutions with
// their adds, summed by kind), the profile against the unprofiled batch,
// and each profiled batch's layer times in --per_batch_file; --infer
// without --profile, or with --json, is refused.
TEST(StepBreakdownTest, InferProfilesTheInferencePlanBatchByBatch) {
  const std::string per_batch = TempPath("per_batch.tsv");
  std::string output;
  ASSERT_EQ(RunCommand(absl::StrCat(g_step_breakdown,
                                    " --profile --infer --model=resnet20 --batch=1 --steps=3 "
                                    "--warmup_steps=1 --per_batch_file=",
                                    per_batch),
                       &output),
            0)
      << output;
  for (const char* line : {"\nconv0+", "\nby kind", "\n  conv 3x3+add ", "\n  pool avg",
                           "\nunprofiled batch (before)", "\nsum of the profile",
                           "\nprofile / unprofiled batch: ", ", adds in a conv "})
    EXPECT_NE(output.find(line), std::string::npos) << line << " missing:\n" << output;
  std::ifstream in(per_batch);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "layer\tkind\tbatch0_ms\tbatch1_ms\tbatch2_ms");
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first.rfind("conv0", 0), 0u) << first;
  for (const char* refused : {" --infer --model=trivial", " --profile --infer --json=x.json",
                              " --profile --per_batch_file=x.tsv --model=trivial"}) {
    const int rc = RunCommand(absl::StrCat(g_step_breakdown, refused), &output);
    EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 2) << refused << ": " << output;
  }
}

// A trace path that cannot be written is refused before anything is
// measured (exit 2, naming the flag and why), not after the profile.
TEST(StepBreakdownTest, ATraceFileThatCannotBeWrittenIsRefusedFirst) {
  for (const char* trace : {"/nonexistent_cnnbench_dir/x.json", "/dev/full", "/tmp/"}) {
    std::string output;
    const int rc = RunCommand(absl::StrCat(g_step_breakdown,
                                           " --profile --model=trivial --batch=2 --image_size=32 "
                                           "--steps=1 --warmup_steps=0 --trace_file=",
                                           trace),
                              &output);
    EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 2) << trace << ": " << rc << "\n" << output;
    EXPECT_NE(output.find(absl::StrCat("--trace_file=", trace)), std::string::npos) << output;
    EXPECT_EQ(output.find("layer"), std::string::npos) << "nothing measured first:\n" << output;
  }
}

// Counts below their least value are refused naming the flag (the header
// never says "batch 0" while another batch is profiled); --help lists the
// tool's own flags.
TEST(StepBreakdownTest, BadCountsAreRefusedAndHelpListsTheFlags) {
  for (const char* bad : {"--steps=0", "--steps=-1", "--warmup_steps=-2", "--batch=0"}) {
    std::string output;
    const int rc = RunCommand(
        absl::StrCat(g_step_breakdown, " --profile --model=trivial --image_size=32 ", bad),
        &output);
    EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 2) << bad << ": " << output;
    const std::string flag = std::string(bad).substr(0, std::string(bad).find('='));
    EXPECT_NE(output.find(flag), std::string::npos) << output;
    EXPECT_EQ(output.find("layer"), std::string::npos) << "nothing measured:\n" << output;
  }
  std::string help;
  RunCommand(absl::StrCat(g_step_breakdown, " --help"), &help);
  EXPECT_EQ(help.find("No flags matched"), std::string::npos) << help;
  EXPECT_NE(help.find("--warmup_steps"), std::string::npos) << help;
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
