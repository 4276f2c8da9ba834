// Reference SGD: the update g' = g + wd*w; v = m*v + g'; w -= lr*v over
// several steps, plain SGD without a momentum buffer, and bad descriptors.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "kernels/loss_scale.h"
#include "kernels/reference/reference_backend.h"

namespace cnnbench {
namespace {

std::unique_ptr<Optimizer> MakeSgd(const SgdDesc& desc) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  absl::StatusOr<std::unique_ptr<Optimizer>> sgd = backend->CreateOptimizer(desc);
  EXPECT_TRUE(sgd.ok()) << sgd.status();
  return sgd.ok() ? std::move(sgd).value() : nullptr;
}

TEST(SgdTest, MomentumWithWeightDecayMatchesTheFormula) {
  const SgdDesc desc{3, 0.1, 0.9, 0.01};
  std::unique_ptr<Optimizer> sgd = MakeSgd(desc);
  ASSERT_NE(sgd, nullptr);
  std::vector<float> w = {1.0f, -2.0f, 0.5f}, v = {0.2f, 0.0f, -1.0f};
  const std::vector<float> g = {0.5f, 1.0f, 0.0f};
  // The same arithmetic in double, step by step.
  std::vector<double> want_w(w.begin(), w.end()), want_v(v.begin(), v.end());
  for (int step = 0; step < 3; ++step) {
    ASSERT_TRUE(sgd->Update(w.data(), g.data(), v.data()).ok());
    for (int i = 0; i < 3; ++i) {
      const double decayed = g[i] + 0.01 * want_w[i];
      want_v[i] = 0.9 * want_v[i] + decayed;
      want_w[i] -= 0.1 * want_v[i];
      EXPECT_NEAR(w[i], want_w[i], 1e-6) << "step " << step << " [" << i << "]";
      EXPECT_NEAR(v[i], want_v[i], 1e-6) << "step " << step << " [" << i << "]";
    }
  }
  // First step of element 0 by hand: g' = 0.5 + 0.01 = 0.51, v = 0.18 + 0.51
  // = 0.69, w = 1 - 0.069 = 0.931.
  std::vector<float> w1 = {1.0f}, v1 = {0.2f};
  const std::vector<float> g1 = {0.5f};
  std::unique_ptr<Optimizer> one = MakeSgd({1, 0.1, 0.9, 0.01});
  ASSERT_TRUE(one->Update(w1.data(), g1.data(), v1.data()).ok());
  EXPECT_FLOAT_EQ(v1[0], 0.69f);
  EXPECT_FLOAT_EQ(w1[0], 0.931f);
}

TEST(SgdTest, PlainSgdNeedsNoMomentumBuffer) {
  std::unique_ptr<Optimizer> sgd = MakeSgd({2, 0.5, 0.0, 0.0});
  ASSERT_NE(sgd, nullptr);
  std::vector<float> w = {1.0f, 2.0f};
  const std::vector<float> g = {2.0f, -4.0f};
  ASSERT_TRUE(sgd->Update(w.data(), g.data(), nullptr).ok());
  EXPECT_EQ(w, (std::vector<float>{0.0f, 4.0f}));
}

// AdjustLossScale's rules on their own: halve on overflow (not below 1),
// double after `interval` clean updates in a row (not above 2^24).
TEST(LossScaleTest, HalvesOnOverflowAndGrowsAfterCleanRuns) {
  float scale = 1024;
  int32_t good = 5;
  AdjustLossScale(true, 3, &scale, &good);
  EXPECT_EQ(scale, 512);
  EXPECT_EQ(good, 0);
  AdjustLossScale(false, 3, &scale, &good);
  AdjustLossScale(false, 3, &scale, &good);
  EXPECT_EQ(scale, 512);
  EXPECT_EQ(good, 2);
  AdjustLossScale(false, 3, &scale, &good);
  EXPECT_EQ(scale, 1024);
  EXPECT_EQ(good, 0);
  float tiny = 1;
  AdjustLossScale(true, 3, &tiny, &good);
  EXPECT_EQ(tiny, kMinLossScale);
  float huge = kMaxLossScale;
  good = 2;
  AdjustLossScale(false, 3, &huge, &good);
  EXPECT_EQ(huge, kMaxLossScale);
}

// Through the optimizer: a non-finite gradient skips the update and halves
// the scale; clean updates divide by the scale of their moment and grow it.
TEST(SgdTest, DynamicLossScalingSkipsHalvesAndGrows) {
  const SgdDesc desc{2, 0.5, 0.0, 0.0};
  std::unique_ptr<Optimizer> sgd = MakeSgd(desc);
  ASSERT_NE(sgd, nullptr);
  std::vector<float> w = {1.0f, 2.0f};
  float scale = 64;
  int32_t overflow = -1, good = 0;
  UpdateArgs args;
  args.params = w.data();
  args.momentum = nullptr;
  args.loss_scale = &scale;
  args.overflow = &overflow;
  args.good_steps = &good;
  args.growth_interval = 2;
  const std::vector<float> bad = {INFINITY, 1.0f};
  args.grads = bad.data();
  ASSERT_TRUE(sgd->Update(args).ok());
  EXPECT_EQ(overflow, 1);
  EXPECT_EQ(w, (std::vector<float>{1.0f, 2.0f}));  // skipped
  EXPECT_EQ(scale, 32);
  const std::vector<float> g = {32.0f, -64.0f};  // scaled by 32: 1 and -2
  args.grads = g.data();
  ASSERT_TRUE(sgd->Update(args).ok());
  EXPECT_EQ(overflow, 0);
  EXPECT_EQ(w, (std::vector<float>{0.5f, 3.0f}));
  EXPECT_EQ(scale, 32);
  EXPECT_EQ(good, 1);
  ASSERT_TRUE(sgd->Update(args).ok());  // the second clean one in a row
  EXPECT_EQ(w, (std::vector<float>{0.0f, 4.0f}));
  EXPECT_EQ(scale, 64);
  EXPECT_EQ(good, 0);
}

TEST(SgdTest, Errors) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  absl::StatusOr<std::unique_ptr<Optimizer>> bad = backend->CreateOptimizer({0, 0.1, 0.9, 0.0});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("sgd:n0"), absl::string_view::npos);
  EXPECT_FALSE(backend->CreateOptimizer({4, -0.1, 0.9, 0.0}).ok());
  std::unique_ptr<Optimizer> sgd = MakeSgd({1, 0.1, 0.9, 0.0});
  float w = 1, g = 1;
  EXPECT_FALSE(sgd->Update(&w, &g, nullptr).ok());  // momentum 0.9 needs v
}

}  // namespace
}  // namespace cnnbench
