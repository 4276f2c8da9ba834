// The pipeline's two single-threaded parts on their own: the shuffle buffer
// (a permutation, reproducible by seed, a full buffer before the first
// draw, the drain, in order for evaluation) and the batch assembly (slots in
// claim order, holes closed up with pixels and labels moved with their
// examples, delivery in opening order whatever order batches finish in,
// empty batches passed over, an evaluation batch closed at an epoch change).
#include <algorithm>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "core/device.h"
#include "gtest/gtest.h"
#include "input/pipeline/batch_assembly.h"
#include "input/pipeline/shuffle_buffer.h"

namespace cnnbench::input {
namespace {

SourceRecord Record(uint64_t key, int64_t epoch = 0) {
  SourceRecord r;
  r.key = key;
  r.epoch = epoch;
  return r;
}

std::vector<uint64_t> Drain(ShuffleBuffer& buffer) {
  std::vector<uint64_t> keys;
  while (buffer.CanPop(/*draining=*/true)) keys.push_back(buffer.Pop().key);
  return keys;
}

TEST(ShuffleBufferTest, TrainingWaitsForAFullBufferThenDrawsAPermutation) {
  ShuffleBuffer buffer(/*shuffle=*/true, /*capacity=*/8, /*seed=*/7);
  for (uint64_t k = 0; k < 7; ++k) {
    buffer.Push(Record(k));
    EXPECT_FALSE(buffer.CanPop(false)) << "drew from a buffer of " << buffer.size();
    EXPECT_TRUE(buffer.HasRoom());
  }
  buffer.Push(Record(7));
  EXPECT_FALSE(buffer.HasRoom());
  EXPECT_TRUE(buffer.CanPop(false));
  const std::vector<uint64_t> keys = Drain(buffer);
  std::vector<uint64_t> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  std::vector<uint64_t> all(8);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(sorted, all);
  EXPECT_NE(keys, all) << "training left the records in order";
  EXPECT_TRUE(buffer.empty());
  EXPECT_FALSE(buffer.CanPop(true));
}

TEST(ShuffleBufferTest, TheSameSeedDrawsTheSameOrderAndAnotherSeedAnother) {
  auto order = [](uint64_t seed) {
    ShuffleBuffer buffer(true, 16, seed);
    for (uint64_t k = 0; k < 16; ++k) buffer.Push(Record(k));
    return Drain(buffer);
  };
  EXPECT_EQ(order(3), order(3));
  EXPECT_NE(order(3), order(4));
}

TEST(ShuffleBufferTest, EvaluationIsFirstInFirstOut) {
  ShuffleBuffer buffer(/*shuffle=*/false, 4, 0);
  buffer.Push(Record(5));
  EXPECT_TRUE(buffer.CanPop(false)) << "evaluation waits for nothing";
  buffer.Push(Record(6));
  buffer.Push(Record(9));
  EXPECT_EQ(buffer.front().key, 5u);
  EXPECT_EQ(Drain(buffer), (std::vector<uint64_t>{5, 6, 9}));
}

constexpr size_t kValues = 3;  // floats per example

std::unique_ptr<BatchBuffer> MakeBatch(int64_t capacity) {
  auto b = std::make_unique<BatchBuffer>();
  b->images = *Buffer::Allocate(Device::Cpu(), capacity * kValues * sizeof(float));
  b->labels = *Buffer::Allocate(Device::Cpu(), capacity * sizeof(int32_t));
  b->view.capacity = capacity;
  b->view.images = static_cast<const float*>(b->images.data());
  b->view.labels = static_cast<const int32_t*>(b->labels.data());
  b->view.names.resize(capacity);
  b->view.epochs.resize(capacity);
  b->valid.resize(capacity);
  return b;
}

// What a decoder writes into its slot: pixels and a label that name it.
void Fill(const SlotClaim& c, int32_t label) {
  float* images = static_cast<float*>(c.batch->images.data());
  for (size_t v = 0; v < kValues; ++v) images[c.slot * kValues + v] = label * 10.0f + v;
  static_cast<int32_t*>(c.batch->labels.data())[c.slot] = label;
  c.batch->view.names[c.slot] = std::to_string(label);
}

TEST(BatchAssemblyTest, HolesAreClosedUpWithTheirExamplesPixelsAndLabels) {
  BatchAssembly assembly(/*batch_size=*/4, kValues, /*one_epoch_per_batch=*/false);
  assembly.Add(MakeBatch(4));
  bool changed = false;
  std::vector<SlotClaim> claims;
  for (int i = 0; i < 4; ++i) claims.push_back(assembly.Claim(0, &changed));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(claims[i].slot, i);
  EXPECT_FALSE(assembly.SlotAvailable(0)) << "the only batch is full and closed";
  Fill(claims[0], 100);
  Fill(claims[2], 102);
  Fill(claims[3], 103);
  EXPECT_FALSE(assembly.Complete(claims[3], true));
  EXPECT_FALSE(assembly.Complete(claims[1], false));  // a skipped record
  EXPECT_FALSE(assembly.Complete(claims[0], true));
  EXPECT_FALSE(assembly.NextReady()) << "ready before its last slot completed";
  EXPECT_TRUE(assembly.Complete(claims[2], true));
  bool freed = false;
  BatchBuffer* batch = assembly.TakeNext(&freed);
  ASSERT_NE(batch, nullptr);
  EXPECT_FALSE(freed);
  ASSERT_EQ(batch->view.size, 3);
  const int32_t expected[] = {100, 102, 103};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(batch->view.labels[i], expected[i]);
    EXPECT_EQ(batch->view.names[i], std::to_string(expected[i]));
    for (size_t v = 0; v < kValues; ++v)
      EXPECT_EQ(batch->view.images[i * kValues + v], expected[i] * 10.0f + v) << i;
  }
  EXPECT_TRUE(assembly.Release());
  EXPECT_FALSE(assembly.Release());
  EXPECT_TRUE(assembly.SlotAvailable(0));
}

TEST(BatchAssemblyTest, BatchesAreDeliveredInTheOrderTheyOpenedAndEmptyOnesPassedOver) {
  BatchAssembly assembly(2, kValues, false);
  for (int i = 0; i < 3; ++i) assembly.Add(MakeBatch(2));
  bool changed = false;
  std::vector<SlotClaim> c;
  for (int i = 0; i < 6; ++i) c.push_back(assembly.Claim(0, &changed));
  EXPECT_EQ(c[0].batch, c[1].batch);
  EXPECT_NE(c[1].batch, c[2].batch);
  // The second batch (every record skipped) and the third finish first.
  EXPECT_FALSE(assembly.Complete(c[2], false));
  EXPECT_FALSE(assembly.Complete(c[3], false));
  Fill(c[4], 4);
  Fill(c[5], 5);
  EXPECT_FALSE(assembly.Complete(c[4], true));
  EXPECT_FALSE(assembly.Complete(c[5], true));
  bool freed = false;
  EXPECT_EQ(assembly.TakeNext(&freed), nullptr) << "delivered past the first batch";
  Fill(c[0], 0);
  Fill(c[1], 1);
  EXPECT_FALSE(assembly.Complete(c[0], true));
  EXPECT_TRUE(assembly.Complete(c[1], true));
  BatchBuffer* first = assembly.TakeNext(&freed);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->view.labels[0], 0);
  EXPECT_FALSE(freed);
  assembly.Release();
  BatchBuffer* next = assembly.TakeNext(&freed);
  ASSERT_NE(next, nullptr);
  EXPECT_TRUE(freed) << "the empty batch was not returned to the pool";
  EXPECT_EQ(next->view.size, 2);
  EXPECT_EQ(next->view.labels[0], 4);
}

TEST(BatchAssemblyTest, AnEvaluationBatchClosesAtAnEpochChangeAndAtTheEnd) {
  BatchAssembly assembly(4, kValues, /*one_epoch_per_batch=*/true);
  assembly.Add(MakeBatch(4));
  assembly.Add(MakeBatch(4));
  bool changed = false;
  SlotClaim a = assembly.Claim(0, &changed);
  Fill(a, 1);
  EXPECT_FALSE(assembly.Complete(a, true));
  EXPECT_TRUE(assembly.SlotAvailable(1)) << "a free batch can open for the next epoch";
  SlotClaim b = assembly.Claim(1, &changed);
  EXPECT_TRUE(changed) << "the epoch change did not ready the first batch";
  EXPECT_NE(a.batch, b.batch);
  EXPECT_EQ(b.slot, 0);
  EXPECT_FALSE(assembly.SlotAvailable(2)) << "no free batch, and the filling one is epoch 1's";
  EXPECT_TRUE(assembly.SlotAvailable(1));
  Fill(b, 2);
  EXPECT_FALSE(assembly.Complete(b, true));
  bool freed = false;
  BatchBuffer* first = assembly.TakeNext(&freed);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->view.size, 1);
  EXPECT_EQ(first->epoch, 0);
  assembly.Release();
  EXPECT_FALSE(assembly.NextReady());
  EXPECT_TRUE(assembly.CloseFilling()) << "the data's end did not ready the partial batch";
  EXPECT_FALSE(assembly.CloseFilling());
  BatchBuffer* second = assembly.TakeNext(&freed);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->view.size, 1);
  EXPECT_EQ(second->epoch, 1);
}

TEST(BatchAssemblyTest, TrainingBatchesTakeEveryEpochsRecords) {
  BatchAssembly assembly(2, kValues, /*one_epoch_per_batch=*/false);
  assembly.Add(MakeBatch(2));
  bool changed = false;
  SlotClaim a = assembly.Claim(0, &changed);
  SlotClaim b = assembly.Claim(1, &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(a.batch, b.batch);
  EXPECT_EQ(b.slot, 1);
}

}  // namespace
}  // namespace cnnbench::input
