#include "train/memory_plan.h"

#include "gtest/gtest.h"
#include "train/init.h"

namespace cnnbench {
namespace {

TEST(MemoryPlanTest, ChainReusesMemory) {
  // A chain: each buffer lives for two steps, so only two are live at once.
  std::vector<BufferRequest> requests;
  for (int i = 0; i < 10; ++i) requests.push_back({"b" + std::to_string(i), 1000, i, i + 1});
  MemoryPlan plan = PlanMemory(requests);
  ASSERT_TRUE(VerifyPlan(requests, plan).ok());
  EXPECT_LE(plan.arena_bytes, 3 * 1024u);
  EXPECT_EQ(plan.sum_bytes, 10 * 1024u);
}

TEST(MemoryPlanTest, RandomRequestsNeverOverlapWhileLive) {
  Rng rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<BufferRequest> requests;
    const int n = 1 + rng.Next() % 60;
    for (int i = 0; i < n; ++i) {
      const int first = rng.Next() % 40;
      requests.push_back({"r" + std::to_string(i), 1 + rng.Next() % 5000, first,
                          first + static_cast<int>(rng.Next() % 10)});
    }
    MemoryPlan plan = PlanMemory(requests);
    absl::Status s = VerifyPlan(requests, plan);
    ASSERT_TRUE(s.ok()) << s;
    // Never worse than no reuse at all.
    EXPECT_LE(plan.arena_bytes, plan.sum_bytes);
  }
}

TEST(MemoryPlanTest, VerifyCatchesOverlap) {
  std::vector<BufferRequest> requests = {{"a", 128, 0, 3}, {"b", 128, 2, 5}};
  MemoryPlan bad;
  bad.offsets = {0, 64};
  bad.arena_bytes = 192;
  absl::Status s = VerifyPlan(requests, bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("a"), absl::string_view::npos);
  EXPECT_NE(s.message().find("b"), absl::string_view::npos);
  // Disjoint lifetimes may share bytes.
  requests[1].first = 4;
  EXPECT_TRUE(VerifyPlan(requests, bad).ok());
}

TEST(RngTest, DeterministicAndRoughlyUniform) {
  Rng a(42), b(42);
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    const double u = a.Uniform();
    EXPECT_EQ(u, b.Uniform());
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);
}

}  // namespace
}  // namespace cnnbench
