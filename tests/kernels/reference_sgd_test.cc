// Reference SGD: the update g' = g + wd*w; v = m*v + g'; w -= lr*v over
// several steps, plain SGD without a momentum buffer, and bad descriptors.
#include <vector>

#include "gtest/gtest.h"
#include "kernels/desc.h"
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
