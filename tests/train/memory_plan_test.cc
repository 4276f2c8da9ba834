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

// A concatenation's output with its inputs as views (and a view of a view):
// only the root is packed; each view lands at its parent's offset plus its
// own, so a producer writing its view writes the root's bytes.
TEST(MemoryPlanTest, ViewsLieInsideTheirRoot) {
  std::vector<BufferRequest> requests = {{"before", 4096, 0, 1}, {"concat/y", 1000, 1, 6}};
  BufferRequest a{"branch0/y", 400, 1, 6};
  a.view_of = 1;
  a.view_offset = 0;
  BufferRequest b{"branch1/y", 600, 1, 6};
  b.view_of = 1;
  b.view_offset = 400;
  BufferRequest c{"branch1_inner/y", 100, 1, 6};  // a view of a view, not aligned
  c.view_of = 3;
  c.view_offset = 500;
  requests.insert(requests.end(), {a, b, c});
  requests.push_back({"after", 2048, 7, 8});
  const MemoryPlan plan = PlanMemory(requests);
  absl::Status s = VerifyPlan(requests, plan);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(plan.offsets[2], plan.offsets[1]);
  EXPECT_EQ(plan.offsets[3], plan.offsets[1] + 400);
  EXPECT_EQ(plan.offsets[4], plan.offsets[1] + 900);
  EXPECT_EQ(plan.sum_bytes, 4096u + 1024 + 2048) << "views take no bytes of their own";
  EXPECT_EQ(RootOf(requests, 4), 1);
  EXPECT_EQ(RootOf(requests, 0), 0);
}

TEST(MemoryPlanTest, VerifyNamesABadView) {
  auto make = [] {
    std::vector<BufferRequest> requests = {{"concat/y", 1024, 0, 4}};
    BufferRequest a{"a/y", 512, 0, 4}, b{"b/y", 512, 0, 4};
    a.view_of = b.view_of = 0;
    b.view_offset = 512;
    requests.insert(requests.end(), {a, b});
    return requests;
  };
  auto error = [](const std::vector<BufferRequest>& requests) {
    return std::string(VerifyPlan(requests, PlanMemory(requests)).message());
  };
  EXPECT_EQ(error(make()), "");
  std::vector<BufferRequest> overlapping = make();
  overlapping[2].view_offset = 256;
  EXPECT_NE(error(overlapping).find("live buffers overlap: a/y [0,512)"), std::string::npos)
      << error(overlapping);
  std::vector<BufferRequest> outside = make();
  outside[2].view_offset = 768;
  EXPECT_NE(error(outside).find("view b/y [768,1280) is not inside concat/y"), std::string::npos)
      << error(outside);
  std::vector<BufferRequest> shorter = make();
  shorter[1].last = 2;
  EXPECT_NE(error(shorter).find("view a/y lives steps 0-2, its root concat/y steps 0-4"),
            std::string::npos)
      << error(shorter);
  std::vector<BufferRequest> forward = make();
  forward[1].view_of = 2;
  EXPECT_NE(error(forward).find("view a/y is of request 2, which does not come before it"),
            std::string::npos)
      << error(forward);
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
