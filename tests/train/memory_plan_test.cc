#include "train/memory_plan.h"

#include <string>

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

// A hand-made plan with one overlap: the error names the two buffers that
// overlap, with their byte ranges and steps, and no other buffer.
TEST(MemoryPlanTest, VerifyNamesTheOverlappingPair) {
  std::vector<BufferRequest> requests = {
      {"conv1_out", 128, 0, 3}, {"pool2_grad", 128, 2, 5}, {"bystander", 128, 0, 5}};
  MemoryPlan bad;
  bad.alignment = 64;
  bad.offsets = {0, 64, 256};
  bad.arena_bytes = 384;
  absl::Status s = VerifyPlan(requests, bad);
  ASSERT_FALSE(s.ok());
  const std::string message(s.message());
  EXPECT_NE(message.find("live buffers overlap"), std::string::npos) << message;
  EXPECT_NE(message.find("conv1_out [0,128) steps 0-3"), std::string::npos) << message;
  EXPECT_NE(message.find("pool2_grad [64,192) steps 2-5"), std::string::npos) << message;
  EXPECT_EQ(message.find("bystander"), std::string::npos) << message;

  // Disjoint lifetimes may share bytes.
  requests[1].first = 4;
  EXPECT_TRUE(VerifyPlan(requests, bad).ok()) << VerifyPlan(requests, bad);
}

TEST(MemoryPlanTest, VerifyNamesABufferOutsideTheArena) {
  std::vector<BufferRequest> requests = {{"fits", 64, 0, 1}, {"spills_over", 128, 2, 3}};
  MemoryPlan bad;
  bad.alignment = 64;
  bad.offsets = {0, 64};
  bad.arena_bytes = 128;
  absl::Status s = VerifyPlan(requests, bad);
  ASSERT_FALSE(s.ok());
  const std::string message(s.message());
  EXPECT_NE(message.find("buffer spills_over at 64 does not fit the arena of 128 bytes"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("fits "), std::string::npos) << message;
}

TEST(MemoryPlanTest, VerifyNamesAMisalignedBuffer) {
  std::vector<BufferRequest> requests = {{"aligned", 64, 0, 1}, {"off_by_eight", 64, 2, 3}};
  MemoryPlan bad;
  bad.alignment = 64;
  bad.offsets = {0, 8};
  bad.arena_bytes = 128;
  absl::Status s = VerifyPlan(requests, bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("buffer off_by_eight at 8"), absl::string_view::npos) << s;
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
