// The oneDNN backend's SGD update against the reference optimizer: both
// compute each element in double, so they agree to the bit. The bf16
// working copies it writes in the same pass against the update followed
// by the separate cast (the path before).
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "kernels/onednn/masked_sum.h"

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

// Copies spread over tiles and threads: short ones, one across a tile
// boundary, one ending at the last parameter. Each copy's storage is
// followed by kGap sentinels the update must leave alone (a write past a
// copy's end lands there).
constexpr int64_t kGap = 16;
constexpr uint16_t kSentinel = 0xdead;
std::vector<Bf16Copy> CopiesOf(int64_t count, std::vector<uint16_t>* storage) {
  const std::vector<std::pair<int64_t, int64_t>> ranges = {
      {0, 1}, {1, 15}, {40, 4100}, {4200, 9000}, {70000, 3}, {70010, 60001}, {count - 777, 777}};
  int64_t total = 0;
  for (const auto& r : ranges) total += r.second + kGap;
  storage->assign(total, kSentinel);
  std::vector<Bf16Copy> copies;
  int64_t at = 0;
  for (const auto& [offset, n] : ranges) {
    copies.push_back(Bf16Copy{offset, n, storage->data() + at});
    at += n + kGap;
  }
  return copies;
}

void ExpectCopiesWritten(const SgdDesc& desc) {
  ASSERT_NE(OneDnn(), nullptr);
  auto fused = OneDnn()->CreateOptimizer(desc);
  auto plain = OneDnn()->CreateOptimizer(desc);
  ASSERT_TRUE(fused.ok()) << fused.status();
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE((*fused)->WritesBf16Copies());
  const Shape shape{desc.count};
  std::vector<float> w1, g, v1;
  for (double x : RealValues(shape, 4, -1, 1)) w1.push_back(static_cast<float>(x));
  for (double x : RealValues(shape, 5, -1, 1)) g.push_back(static_cast<float>(x));
  for (double x : RealValues(shape, 6, -1, 1)) v1.push_back(static_cast<float>(x));
  std::vector<float> w2 = w1, v2 = v1;
  std::vector<uint16_t> storage;
  const std::vector<Bf16Copy> copies = CopiesOf(desc.count, &storage);
  UpdateArgs args;
  args.params = w1.data();
  args.grads = g.data();
  args.momentum = desc.momentum != 0 ? v1.data() : nullptr;
  args.bf16_copies = copies.data();
  args.num_bf16_copies = static_cast<int>(copies.size());
  for (int step = 0; step < 2; ++step) {
    ASSERT_TRUE((*fused)->Update(args).ok());
    ASSERT_TRUE((*plain)->Update(w2.data(), g.data(), desc.momentum != 0 ? v2.data() : nullptr).ok());
  }
  // The masters as before, and each copy the cast of its range.
  EXPECT_EQ(w1, w2);
  EXPECT_EQ(v1, v2);
  std::vector<uint16_t> expected;
  for (const Bf16Copy& copy : copies) {
    std::vector<uint16_t> cast(copy.count);
    onednn::ConvertF32ToBf16(w2.data() + copy.offset, cast.data(), copy.count);
    expected.insert(expected.end(), cast.begin(), cast.end());
    expected.insert(expected.end(), kGap, kSentinel);
    for (int64_t i = 0; i < copy.count; ++i)
      ASSERT_EQ(copy.data[i], FloatToBFloat16(w2[copy.offset + i]).bits)
          << "copy at " << copy.offset << ", element " << i;
  }
  EXPECT_EQ(storage, expected);
}

TEST(OneDnnSgdTest, TheUpdateWritesBf16CopiesAsTheCastAfterIt) {
  ExpectCopiesWritten(*SgdDesc::Parse("sgd:n200003_lr0.1m0.9wd0.0001"));
  ExpectCopiesWritten(*SgdDesc::Parse("sgd:n131089_lr0.05m0wd0.001"));
}

// A skipped update (a gradient not finite) leaves the copies, as it leaves
// the masters.
TEST(OneDnnSgdTest, ASkippedUpdateWritesNoCopy) {
  ASSERT_NE(OneDnn(), nullptr);
  auto sgd = OneDnn()->CreateOptimizer(*SgdDesc::Parse("sgd:n4_lr0.5m0wd0"));
  ASSERT_TRUE(sgd.ok());
  std::vector<float> w = {1, 2, 3, 4}, g = {1, 1, std::nanf(""), 1};
  std::vector<uint16_t> copy(4, 0xdeadu);
  const Bf16Copy c{0, 4, copy.data()};
  int32_t overflow = 0;
  UpdateArgs args;
  args.params = w.data();
  args.grads = g.data();
  args.overflow = &overflow;
  args.bf16_copies = &c;
  args.num_bf16_copies = 1;
  ASSERT_TRUE((*sgd)->Update(args).ok());
  EXPECT_EQ(overflow, 1);
  EXPECT_EQ(copy, std::vector<uint16_t>(4, 0xdeadu));
}

TEST(OneDnnSgdTest, BadCopyListsAreRefused) {
  ASSERT_NE(OneDnn(), nullptr);
  auto sgd = OneDnn()->CreateOptimizer(*SgdDesc::Parse("sgd:n100_lr0.5m0wd0"));
  ASSERT_TRUE(sgd.ok());
  std::vector<float> w(100, 1), g(100, 1);
  std::vector<uint16_t> storage(200);
  auto update = [&](std::vector<Bf16Copy> copies) {
    UpdateArgs args;
    args.params = w.data();
    args.grads = g.data();
    args.bf16_copies = copies.data();
    args.num_bf16_copies = static_cast<int>(copies.size());
    return (*sgd)->Update(args).code();
  };
  const auto kBad = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(update({{90, 11, storage.data()}}), kBad);                        // past the end
  EXPECT_EQ(update({{-1, 5, storage.data()}}), kBad);                         // before the start
  EXPECT_EQ(update({{0, 10, storage.data()}, {9, 5, storage.data()}}), kBad);  // overlapping
  EXPECT_EQ(update({{20, 10, storage.data()}, {0, 5, storage.data()}}), kBad); // unsorted
  EXPECT_EQ(update({{0, 0, storage.data()}}), kBad);                          // empty
  EXPECT_EQ(update({{0, 5, nullptr}}), kBad);                                 // no memory
  EXPECT_EQ(update({{0, 10, storage.data()}, {10, 90, storage.data()}}), absl::StatusCode::kOk);
}

// The reference optimizer writes no copies, and says so rather than
// leaving them stale.
TEST(OneDnnSgdTest, AnOptimizerWithoutCopiesRefusesThem) {
  auto sgd = Reference()->CreateOptimizer(*SgdDesc::Parse("sgd:n4_lr0.5m0wd0"));
  ASSERT_TRUE(sgd.ok());
  EXPECT_FALSE((*sgd)->WritesBf16Copies());
  std::vector<float> w = {1, 2, 3, 4}, g = {1, 1, 1, 1};
  std::vector<uint16_t> copy(4);
  const Bf16Copy c{0, 4, copy.data()};
  UpdateArgs args;
  args.params = w.data();
  args.grads = g.data();
  args.bf16_copies = &c;
  args.num_bf16_copies = 1;
  EXPECT_EQ((*sgd)->Update(args).code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace cnnbench
