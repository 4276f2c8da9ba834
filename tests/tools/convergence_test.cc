// The convergence check: lenet at 16 px learns the generated class-coloured
// images well above chance on both CPU backends, and the same run with every
// weight gradient zeroed (a backward pass scaled by 0) fails the check.
#include "tools/convergence/convergence.h"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace cnnbench::convergence {
namespace {

class ConvergenceTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ConvergenceTest, TheModelLearnsWellAboveChance) {
  Options o;
  o.backend = GetParam();
  absl::StatusOr<Result> r = convergence::Run(o, stdout);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->curve.size(), 3u);  // steps 40, 80, 120
  EXPECT_TRUE(r->passed);
  const Point& last = r->curve.back();
  EXPECT_EQ(last.step, o.steps);
  EXPECT_EQ(last.validation_images, o.images / 4);
  // The threshold (0.5) is five times chance; what it reaches is well above.
  EXPECT_GE(last.validation_top1, o.min_top1);
  EXPECT_GE(last.validation_top5, last.validation_top1);
  EXPECT_LT(last.validation_loss, r->curve.front().validation_loss);
  EXPECT_TRUE(absl::StrContains(ToJson(o, *r), "\"passed\": true"));
}

INSTANTIATE_TEST_SUITE_P(Cpu, ConvergenceTest, ::testing::Values("reference", "onednn"));

// The same check in bf16 on oneDNN (bf16 activations and kernels, fp32
// masters), where the CPU has avx512_bf16; skipped with the reason elsewhere.
TEST(ConvergenceBf16Test, TheModelLearnsWellAboveChanceInBf16) {
  Options o;
  o.backend = "onednn";
  o.precision = Precision::kBf16;
  absl::StatusOr<Result> r = convergence::Run(o, stdout);
  if (!r.ok() && r.status().code() == absl::StatusCode::kUnimplemented)
    GTEST_SKIP() << r.status().message();
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->curve.size(), 3u);
  EXPECT_TRUE(r->passed);
  EXPECT_GE(r->curve.back().validation_top1, o.min_top1);
  EXPECT_LT(r->curve.back().validation_loss, r->curve.front().validation_loss);
}

TEST(ConvergenceCheckTest, FailsWhenTheGradientIsBroken) {
  Options o;
  o.zero_gradients_for_testing = true;
  absl::StatusOr<Result> r = convergence::Run(o, stdout);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->passed);
  EXPECT_LT(r->curve.back().validation_top1, o.min_top1);
}

// A learning rate that makes the loss NaN: the model did not learn (a
// failed check, exit 1), not an error of the tool, and the JSON says why.
TEST(ConvergenceCheckTest, ADivergingLossIsAFailedCheckNotAnError) {
  Options o;
  o.learning_rate = 1e6;
  o.steps = 8;
  o.eval_every = 4;
  absl::StatusOr<Result> r = convergence::Run(o, stdout);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->passed);
  EXPECT_TRUE(absl::StrContains(r->diverged, "the training loss is")) << r->diverged;
  const nlohmann::json doc = nlohmann::json::parse(ToJson(o, *r));  // throws on nan
  EXPECT_EQ(doc.at("passed"), false);
  EXPECT_EQ(doc.at("diverged"), r->diverged);
}

std::string TempDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return tmp ? tmp : "/tmp";
}

// Runs //tools:convergence with `args` (a short run that passes), its
// output and exit status.
struct ToolRun {
  int exit_code = -1;
  std::string output;
};
ToolRun RunTool(const std::string& args) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const std::string binary = absl::StrCat(srcdir ? srcdir : ".", "/",
                                          workspace ? workspace : "cnnbench", "/tools/convergence");
  const std::string log = absl::StrCat(TempDir(), "/convergence.log");
  const int rc = std::system(absl::StrCat(binary,
                                          " --steps=2 --eval_every=0 --images=16 --min_top1=0 ",
                                          args, " > ", log, " 2>&1")
                                 .c_str());
  std::ifstream in(log);
  ToolRun run;
  run.exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  run.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return run;
}

// The binary: a curve that cannot be written is an error with the reason,
// never a PASS with the curve lost.
TEST(ConvergenceCheckTest, AJsonFileThatCannotBeWrittenIsAnErrorWithTheReason) {
  const ToolRun run = RunTool("--json=/dev/full");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, "/dev/full")) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, "No space left on device")) << run.output;
  EXPECT_FALSE(absl::StrContains(run.output, "PASS")) << run.output;
  EXPECT_FALSE(absl::StrContains(run.output, "final validation top-1")) << run.output;
}

// A --json whose folder cannot take it is refused before the training (no
// curve printed), as the suite refuses --benchmark_out; a folder given as
// the file too. A writable one gets the curve, and then the verdict.
TEST(ConvergenceCheckTest, AJsonPathThatCannotBeWrittenIsRefusedBeforeTraining) {
  const std::string file = absl::StrCat(TempDir(), "/a_file");
  std::ofstream(file) << "x";
  for (const auto& [json, reason] : std::vector<std::pair<std::string, std::string>>{
           {"./no_such_folder/c.json", "the folder ./no_such_folder does not exist"},
           {absl::StrCat(file, "/c.json"), absl::StrCat("the folder ", file, " is not a folder")},
           {TempDir(), absl::StrCat(TempDir(), " is a folder, not a file")}}) {
    const ToolRun run = RunTool(absl::StrCat("--json=", json));
    EXPECT_EQ(run.exit_code, 2) << json << "\n" << run.output;
    EXPECT_TRUE(absl::StrContains(run.output, absl::StrCat("convergence: --json: "))) << run.output;
    EXPECT_TRUE(absl::StrContains(run.output, reason)) << json << "\n" << run.output;
    EXPECT_FALSE(absl::StrContains(run.output, "train_loss")) << "it trained first:\n" << run.output;
    EXPECT_FALSE(absl::StrContains(run.output, "PASS")) << run.output;
  }
  const std::string good = absl::StrCat(TempDir(), "/curve.json");
  const ToolRun run = RunTool(absl::StrCat("--json=", good));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, "PASS (threshold 0.000)")) << run.output;
  std::ifstream in(good);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(absl::StrContains(written, "\"passed\": true")) << written;
  // The write probe leaves nothing behind.
  EXPECT_EQ(CheckOutputPath(good), absl::OkStatus());
  EXPECT_EQ(CheckOutputPath("/dev/null"), absl::OkStatus());
}

TEST(ConvergenceCheckTest, TheVerdictSaysPassOrFailAndWhy) {
  Options o;
  Result r;
  r.curve.push_back(Point{.step = 1, .validation_top1 = 0.75, .validation_images = 4});
  r.passed = true;
  EXPECT_EQ(Verdict(o, r), "final validation top-1 0.750 over 4 images: PASS (threshold 0.500)");
  r.passed = false;
  EXPECT_TRUE(absl::StrContains(Verdict(o, r), ": FAIL (threshold 0.500)")) << Verdict(o, r);
  r.diverged = "the training loss is nan at step 4";
  EXPECT_EQ(Verdict(o, r), "the training loss is nan at step 4: FAIL (did not learn; threshold 0.500)");
}

TEST(ConvergenceCheckTest, HelpListsTheToolsFlags) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string log = absl::StrCat(tmp ? tmp : "/tmp", "/convergence_help.log");
  const int rc =
      std::system(absl::StrCat(srcdir ? srcdir : ".", "/", workspace ? workspace : "cnnbench",
                               "/tools/convergence --help > ", log, " 2>&1")
                      .c_str());
  EXPECT_TRUE(WIFEXITED(rc)) << rc;
  std::ifstream in(log);
  const std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_FALSE(absl::StrContains(output, "No flags matched")) << output;
  EXPECT_TRUE(absl::StrContains(output, "--min_top1")) << output;
}

TEST(ConvergenceCheckTest, BadOptionsAreErrors) {
  Options o;
  o.steps = 0;
  EXPECT_EQ(convergence::Run(o, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
  for (double min_top1 : {1.5, -1.0}) {
    o = Options();
    o.min_top1 = min_top1;
    EXPECT_EQ(convergence::Run(o, nullptr).status().code(), absl::StatusCode::kInvalidArgument)
        << min_top1;
  }
  o = Options();
  o.learning_rate = 0;
  EXPECT_EQ(convergence::Run(o, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
  o = Options();
  o.model = "no_such_model";
  EXPECT_FALSE(convergence::Run(o, nullptr).ok());
  o = Options();
  o.backend = "cuda";  // no GPU here: creating the backend says why
  absl::StatusOr<Result> r = convergence::Run(o, nullptr);
  if (!r.ok()) {
    EXPECT_FALSE(r.status().message().empty());
  }
}

}  // namespace
}  // namespace cnnbench::convergence
