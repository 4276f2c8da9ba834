// The oneDNN backend's SGD update against the reference optimizer: both
// compute each element in double, so they agree to the bit.
#include <vector>

#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::OneDnn;
using onednn_test::RealValues;
using onednn_test::Reference;

void ExpectSameUpdate(const SgdDesc& desc, int steps) {
  ASSERT_NE(OneDnn(), nullptr);
  auto ours = OneDnn()->CreateOptimizer(desc);
  auto theirs = Reference()->CreateOptimizer(desc);
  ASSERT_TRUE(ours.ok()) << ours.status();
  ASSERT_TRUE(theirs.ok()) << theirs.status();
  const Shape shape{desc.count};
  std::vector<float> w1, g, v1;
  for (double x : RealValues(shape, 1, -1, 1)) w1.push_back(static_cast<float>(x));
  for (double x : RealValues(shape, 2, -1, 1)) g.push_back(static_cast<float>(x));
  for (double x : RealValues(shape, 3, -1, 1)) v1.push_back(static_cast<float>(x));
  std::vector<float> w2 = w1, v2 = v1;
  float* momentum1 = desc.momentum != 0 ? v1.data() : nullptr;
  float* momentum2 = desc.momentum != 0 ? v2.data() : nullptr;
  for (int step = 0; step < steps; ++step) {
    ASSERT_TRUE((*ours)->Update(w1.data(), g.data(), momentum1).ok());
    ASSERT_TRUE((*theirs)->Update(w2.data(), g.data(), momentum2).ok());
  }
  EXPECT_EQ(w1, w2);
  EXPECT_EQ(v1, v2);
}

TEST(OneDnnSgdTest, MomentumAndWeightDecay) {
  ExpectSameUpdate(*SgdDesc::Parse("sgd:n1037_lr0.1m0.9wd0.0001"), 3);
}

TEST(OneDnnSgdTest, PlainSgdNeedsNoMomentumBuffer) {
  ExpectSameUpdate(*SgdDesc::Parse("sgd:n33_lr0.05m0wd0"), 2);
}

// Above the size the update splits over the OpenMP team (and not a
// multiple of a thread's cache-line chunks): still the reference's bits.
TEST(OneDnnSgdTest, ParallelUpdateMatchesTheReference) {
  ExpectSameUpdate(*SgdDesc::Parse("sgd:n200003_lr0.1m0.9wd0.0001"), 2);
  ExpectSameUpdate(*SgdDesc::Parse("sgd:n131089_lr0.05m0wd0.001"), 2);
}

TEST(OneDnnSgdTest, ExactOnDyadicValues) {
  ASSERT_NE(OneDnn(), nullptr);
  auto sgd = OneDnn()->CreateOptimizer(*SgdDesc::Parse("sgd:n2_lr0.5m0.5wd0.25"));
  ASSERT_TRUE(sgd.ok()) << sgd.status();
  std::vector<float> w = {2, -4}, g = {1, 1}, v = {2, 0};
  ASSERT_TRUE((*sgd)->Update(w.data(), g.data(), v.data()).ok());
  // g' = g + 0.25 w = {1.5, 0};  v = 0.5 v + g' = {2.5, 0};  w -= 0.5 v.
  EXPECT_EQ(v, (std::vector<float>{2.5f, 0.0f}));
  EXPECT_EQ(w, (std::vector<float>{0.75f, -4.0f}));
}

TEST(OneDnnSgdTest, MissingMomentumBufferIsAnError) {
  ASSERT_NE(OneDnn(), nullptr);
  auto sgd = OneDnn()->CreateOptimizer(*SgdDesc::Parse("sgd:n2_lr0.5m0.9wd0"));
  ASSERT_TRUE(sgd.ok());
  std::vector<float> w = {1, 2}, g = {1, 1};
  EXPECT_EQ((*sgd)->Update(w.data(), g.data(), nullptr).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cnnbench
