// The trainer's input slots on their own, on the reference and oneDNN
// backends: no batch until Set; each Set fills the other slot and makes it
// active, so the slot a step reads keeps its batch while the next one
// arrives; images and labels read back as given; null input is an error.
#include "train/input_slots.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backends.h"

namespace cnnbench {
namespace {

class InputSlotsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InputSlotsTest, EachBatchGoesToTheOtherSlotAndReadsBackAsGiven) {
  auto backend = CreateBackend(GetParam(), Device::Cpu());
  ASSERT_TRUE(backend.ok()) << backend.status();
  const Shape shape{2, 3, 4, 5};
  const TensorSpec images_spec = TensorSpec::Plain(DType::kF32, shape);
  auto slots = InputSlots::Create(backend->get(), images_spec, 2);
  ASSERT_TRUE(slots.ok()) << slots.status();
  InputSlots& s = **slots;
  EXPECT_FALSE(s.has_batch());
  ASSERT_TRUE(s.Clear().ok());
  EXPECT_GE(s.bytes(), 2 * (images_spec.bytes + 2 * sizeof(int32_t)));

  std::vector<float> first(shape.num_elements()), second(shape.num_elements());
  for (size_t i = 0; i < first.size(); ++i) {
    first[i] = static_cast<float>(i);
    second[i] = -static_cast<float>(i) - 1;
  }
  const int32_t first_labels[] = {3, 7}, second_labels[] = {1, 9};
  ASSERT_TRUE(s.Set(first.data(), first_labels).ok());
  EXPECT_TRUE(s.has_batch());
  const int a = s.active();
  ASSERT_TRUE(s.Set(second.data(), second_labels).ok());
  const int b = s.active();
  EXPECT_NE(a, b) << "the second batch overwrote the slot the first is in";
  ASSERT_TRUE(s.EnqueueReady(b).ok());
  ASSERT_TRUE((*backend)->stream().Synchronize().ok());

  auto read_images = [&](int slot) {
    std::vector<float> out(shape.num_elements());
    EXPECT_TRUE((*backend)
                    ->Download(images_spec, s.images(slot), TensorSpec::Plain(DType::kF32, shape),
                               out.data())
                    .ok());
    return out;
  };
  EXPECT_EQ(read_images(a), first);
  EXPECT_EQ(read_images(b), second);
  const int32_t* labels_a = static_cast<const int32_t*>(s.labels(a));
  const int32_t* labels_b = static_cast<const int32_t*>(s.labels(b));
  EXPECT_EQ(labels_a[0], 3);
  EXPECT_EQ(labels_a[1], 7);
  EXPECT_EQ(labels_b[0], 1);
  EXPECT_EQ(labels_b[1], 9);

  // A third batch goes back to the first slot.
  ASSERT_TRUE(s.Set(first.data(), first_labels).ok());
  EXPECT_EQ(s.active(), a);
}

TEST_P(InputSlotsTest, NullInputIsAnErrorAndLeavesTheSlotsAlone) {
  auto backend = CreateBackend(GetParam(), Device::Cpu());
  ASSERT_TRUE(backend.ok()) << backend.status();
  auto slots =
      InputSlots::Create(backend->get(), TensorSpec::Plain(DType::kF32, Shape{1, 3, 2, 2}), 1);
  ASSERT_TRUE(slots.ok()) << slots.status();
  const int32_t label = 0;
  const absl::Status status = (*slots)->Set(nullptr, &label);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_FALSE((*slots)->has_batch());
}

INSTANTIATE_TEST_SUITE_P(Backends, InputSlotsTest, ::testing::Values("reference", "onednn"));

}  // namespace
}  // namespace cnnbench
