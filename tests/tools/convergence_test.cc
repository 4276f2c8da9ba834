// The convergence check: lenet at 16 px learns the generated class-coloured
// images well above chance on both CPU backends, and the same run with every
// weight gradient zeroed (a backward pass scaled by 0) fails the check.
#include "tools/convergence/convergence.h"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

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

// The binary: a curve that cannot be written is an error with the reason,
// never a PASS with the curve lost.
TEST(ConvergenceCheckTest, AJsonFileThatCannotBeWrittenIsAnErrorWithTheReason) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const std::string binary = absl::StrCat(srcdir ? srcdir : ".", "/",
                                          workspace ? workspace : "cnnbench", "/tools/convergence");
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string log = absl::StrCat(tmp ? tmp : "/tmp", "/convergence.log");
  const int rc = std::system(absl::StrCat(binary,
                                          " --steps=2 --eval_every=0 --images=16 --min_top1=0 "
                                          "--json=/dev/full > ",
                                          log, " 2>&1")
                                 .c_str());
  std::ifstream in(log);
  const std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 2) << rc << "\n" << output;
  EXPECT_TRUE(absl::StrContains(output, "/dev/full")) << output;
  EXPECT_TRUE(absl::StrContains(output, "No space left on device")) << output;
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
