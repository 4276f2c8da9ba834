// The convergence check: lenet at 16 px learns the generated class-coloured
// images well above chance on both CPU backends, and the same run with every
// weight gradient zeroed (a backward pass scaled by 0) fails the check.
#include "tools/convergence/convergence.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

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

TEST(ConvergenceCheckTest, FailsWhenTheGradientIsBroken) {
  Options o;
  o.zero_gradients_for_testing = true;
  absl::StatusOr<Result> r = convergence::Run(o, stdout);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->passed);
  EXPECT_LT(r->curve.back().validation_top1, o.min_top1);
}

TEST(ConvergenceCheckTest, BadOptionsAreErrors) {
  Options o;
  o.steps = 0;
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
