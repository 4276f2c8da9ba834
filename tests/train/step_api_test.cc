// The executor's step interface: steps that only enqueue and a loss read on
// request, the forward/backward and update halves, the gradient-ready hook,
// two input slots, dropout keyed by the device-side step counter, and
// precision (bf16 with fp32 masters where the CPU has it; clear refusals).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "tests/train/small_cnn.h"
#include "train/trainer.h"

namespace cnnbench {
namespace {

using train_test::kClasses;
using train_test::MakeBatch;
using train_test::SmallCnn;
using train_test::StepAndLoss;

class StepApiTest : public ::testing::TestWithParam<const char*> {
 protected:
  std::unique_ptr<Backend> MakeBackend() {
    auto backend = CreateBackend(GetParam(), Device::Cpu());
    EXPECT_TRUE(backend.ok()) << backend.status();
    return *std::move(backend);
  }
  std::unique_ptr<Trainer> Compile(Backend* backend, const TrainOptions& options = {}) {
    auto trainer = Trainer::Compile(SmallCnn(), backend, options);
    EXPECT_TRUE(trainer.ok()) << trainer.status();
    return trainer.ok() ? *std::move(trainer) : nullptr;
  }
};

TEST_P(StepApiTest, StepsRunBackToBackAndLastLossIsTheLatest) {
  std::vector<float> images;
  std::vector<int32_t> labels;
  MakeBatch(3, &images, &labels);
  std::vector<float> each;
  {
    auto backend = MakeBackend();
    auto trainer = Compile(backend.get());
    ASSERT_NE(trainer, nullptr);
    ASSERT_TRUE(trainer->SetBatch(images.data(), labels.data()).ok());
    for (int i = 0; i < 3; ++i) {
      auto loss = StepAndLoss(*trainer);
      ASSERT_TRUE(loss.ok()) << loss.status();
      each.push_back(*loss);
    }
  }
  auto backend = MakeBackend();
  auto trainer = Compile(backend.get());
  ASSERT_NE(trainer, nullptr);
  ASSERT_TRUE(trainer->SetBatch(images.data(), labels.data()).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(trainer->Step().ok());
  EXPECT_EQ(trainer->steps(), 3);
  auto last = trainer->LastLoss();
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(*last, each[2]);
  EXPECT_NE(each[0], each[2]);  // the steps did train
}

TEST_P(StepApiTest, ForwardBackwardThenUpdateIsAStep) {
  std::vector<float> images;
  std::vector<int32_t> labels;
  std::vector<float> weights[2];
  for (int split = 0; split < 2; ++split) {
    auto backend = MakeBackend();
    auto trainer = Compile(backend.get());
    ASSERT_NE(trainer, nullptr);
    auto ready = Event::Create(backend->device());
    ASSERT_TRUE(ready.ok());
    for (int step = 0; step < 3; ++step) {
      MakeBatch(step, &images, &labels);
      ASSERT_TRUE(trainer->SetBatch(images.data(), labels.data()).ok());
      if (split) {
        ASSERT_TRUE(trainer->ForwardBackward().ok());
        ASSERT_TRUE(ready->Record(backend->stream()).ok());
        ASSERT_TRUE(trainer->Update(&*ready).ok());
      } else {
        ASSERT_TRUE(trainer->Step().ok());
      }
    }
    auto w = trainer->ReadParameter(2, 0);
    ASSERT_TRUE(w.ok()) << w.status();
    weights[split] = *w;
  }
  EXPECT_EQ(weights[0], weights[1]);
}

TEST_P(StepApiTest, AReplayedStepDrawsANewDropoutMask) {
  // Learning rate 0: the weights never change and batch norm sees the same
  // batch, so only dropout's mask can change the loss between two steps.
  auto backend = MakeBackend();
  TrainOptions options;
  options.learning_rate = 0;
  auto trainer = Compile(backend.get(), options);
  ASSERT_NE(trainer, nullptr);
  std::vector<float> images;
  std::vector<int32_t> labels;
  MakeBatch(5, &images, &labels);
  ASSERT_TRUE(trainer->SetBatch(images.data(), labels.data()).ok());
  auto w0 = trainer->ReadParameter(2, 0);
  auto first = StepAndLoss(*trainer);
  auto second = StepAndLoss(*trainer);
  auto w1 = trainer->ReadParameter(2, 0);
  ASSERT_TRUE(first.ok() && second.ok() && w0.ok() && w1.ok());
  EXPECT_EQ(*w0, *w1);
  EXPECT_NE(*first, *second);
  // And a different seed draws other masks from the first step on.
  options.seed = 2;
  auto backend2 = MakeBackend();
  auto other = Compile(backend2.get(), options);
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(other->SetBatch(images.data(), labels.data()).ok());
  auto other_first = StepAndLoss(*other);
  ASSERT_TRUE(other_first.ok());
  EXPECT_NE(*other_first, *first);
}

TEST_P(StepApiTest, GradientHookAnnouncesFinishedGradientsInBackwardOrder) {
  auto backend = MakeBackend();
  auto trainer = Compile(backend.get());
  ASSERT_NE(trainer, nullptr);
  std::vector<float> images;
  std::vector<int32_t> labels;
  MakeBatch(9, &images, &labels);
  ASSERT_TRUE(trainer->SetBatch(images.data(), labels.data()).ok());
  struct Seen {
    GradientRange range;
    std::vector<char> bytes;  // the range's content when announced
  };
  std::vector<Seen> seen;
  trainer->SetGradientReadyHook([&](const GradientRange& range) {
    // On the CPU the work is done when enqueued: read the range now.
    const char* grads = static_cast<const char*>(trainer->gradients());
    seen.push_back(
        {range, std::vector<char>(grads + range.offset, grads + range.offset + range.bytes)});
    return absl::OkStatus();
  });
  ASSERT_TRUE(trainer->ForwardBackward().ok());
  ASSERT_TRUE(trainer->Synchronize().ok());
  // Five layers have parameters: three convs + two batch norms... and the
  // two fc layers: every one is announced once.
  ASSERT_GE(seen.size(), 5u);
  size_t covered = 0;
  for (size_t i = 0; i < seen.size(); ++i) {
    covered += seen[i].range.bytes;
    if (i > 0) {
      EXPECT_LT(seen[i].range.node, seen[i - 1].range.node);
      EXPECT_EQ(seen[i].range.offset + seen[i].range.bytes, seen[i - 1].range.offset)
          << "ranges are contiguous, walking down the block";
    }
    // Nothing later in backward wrote into an announced range.
    const char* grads = static_cast<const char*>(trainer->gradients());
    EXPECT_EQ(std::memcmp(seen[i].bytes.data(), grads + seen[i].range.offset, seen[i].range.bytes),
              0)
        << "node " << seen[i].range.node;
  }
  EXPECT_EQ(seen.back().range.offset, 0u);
  EXPECT_EQ(covered, trainer->gradient_bytes());
  // A failing hook stops the step with its error.
  trainer->SetGradientReadyHook(
      [](const GradientRange&) { return absl::AbortedError("all-reduce failed"); });
  absl::Status status = trainer->ForwardBackward();
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted) << status;
}

TEST_P(StepApiTest, TheNextBatchGoesIntoTheFreeSlot) {
  std::vector<float> a_images, b_images;
  std::vector<int32_t> a_labels, b_labels;
  MakeBatch(1, &a_images, &a_labels);
  MakeBatch(2, &b_images, &b_labels);
  float only_b = 0;
  {
    auto backend = MakeBackend();
    auto trainer = Compile(backend.get());
    ASSERT_NE(trainer, nullptr);
    ASSERT_TRUE(trainer->SetBatch(b_images.data(), b_labels.data()).ok());
    auto loss = StepAndLoss(*trainer);
    ASSERT_TRUE(loss.ok());
    only_b = *loss;
  }
  auto backend = MakeBackend();
  auto trainer = Compile(backend.get());
  ASSERT_NE(trainer, nullptr);
  // A fills one slot, B the other; the step reads the latest (B).
  ASSERT_TRUE(trainer->SetBatch(a_images.data(), a_labels.data()).ok());
  ASSERT_TRUE(trainer->SetBatch(b_images.data(), b_labels.data()).ok());
  auto loss = StepAndLoss(*trainer);
  ASSERT_TRUE(loss.ok());
  EXPECT_EQ(*loss, only_b);
  EXPECT_FALSE(trainer->SetBatch(nullptr, b_labels.data()).ok());
}

TEST_P(StepApiTest, PrecisionsTheCpuCannotRunAreRefusedWithAReason) {
  for (Precision p : {Precision::kTf32, Precision::kFp16}) {
    auto backend = MakeBackend();
    TrainOptions options;
    options.precision = p;
    auto trainer = Trainer::Compile(SmallCnn(), backend.get(), options);
    ASSERT_FALSE(trainer.ok()) << PrecisionName(p);
    EXPECT_EQ(trainer.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_NE(trainer.status().message().find("unsupported: "), std::string::npos)
        << trainer.status();
  }
}

TEST_P(StepApiTest, APlanThatDoesNotFitIsRefusedBeforeAllocating) {
  auto backend = MakeBackend();
  auto fits = Compile(backend.get());
  ASSERT_NE(fits, nullptr);
  const size_t needed = fits->peak_memory_bytes();
  // Exactly what the plan needs is enough: the check counts what is allocated.
  TrainOptions options;
  options.memory_limit_bytes = needed;
  EXPECT_NE(Compile(backend.get(), options), nullptr);
  options.memory_limit_bytes = needed - 1;
  auto refused = Trainer::Compile(SmallCnn(), backend.get(), options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  const std::string message(refused.status().message());
  EXPECT_NE(message.find("OOM: needs "), std::string::npos) << message;
  EXPECT_NE(message.find("available"), std::string::npos) << message;
}

// Below what no plan can do with (both input slots and the largest single
// output), Compile refuses before creating any kernel: the OOM names that
// bound, not the whole plan's footprint.
TEST_P(StepApiTest, BelowTheLowerBoundIsRefusedBeforeAnyKernel) {
  auto backend = MakeBackend();
  const Graph graph = SmallCnn();
  size_t largest = 0;
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i)
    if (i != graph.images)
      largest = std::max(largest,
                         static_cast<size_t>(graph.nodes[i].output.num_elements()) * sizeof(float));
  const size_t bound =
      2 * static_cast<size_t>(graph.nodes[graph.images].output.num_elements()) * sizeof(float) +
      largest;
  TrainOptions options;
  options.memory_limit_bytes = bound - 1;
  auto refused = Trainer::Compile(graph, backend.get(), options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  const std::string message(refused.status().message());
  EXPECT_NE(message.find(absl::StrCat("(", bound, " bytes)")), std::string::npos) << message;
  // At the bound itself the first check passes and the whole plan's decides.
  options.memory_limit_bytes = bound;
  refused = Trainer::Compile(graph, backend.get(), options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(std::string(refused.status().message()).find(absl::StrCat("(", bound, " bytes)")),
            std::string::npos)
      << refused.status();
}

TEST(AvailableMemoryTest, TheCpuReportsWhatMeminfoSays) {
  auto available = AvailableMemory(Device::Cpu());
  ASSERT_TRUE(available.ok()) << available.status();
  EXPECT_GT(*available, size_t{16} << 20);
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(size_t{3} << 29), "1.50 GiB");
}

INSTANTIATE_TEST_SUITE_P(CpuBackends, StepApiTest, ::testing::Values("reference", "onednn"),
                         [](const auto& info) { return std::string(info.param); });

// bf16 mixed precision on oneDNN: bf16 activations and kernels, fp32 master
// weights refreshed into bf16 copies after each update.
TEST(Bf16TrainingTest, LearnsLikeFp32WithFp32Masters) {
  auto backend = CreateBackend("onednn", Device::Cpu());
  ASSERT_TRUE(backend.ok());
  auto probe = (*backend)->Create(ReluDesc{{1, 1, 1, 16}}, DType::kBF16, {});
  if (!probe.ok()) GTEST_SKIP() << probe.status().message();
  std::vector<float> first_loss, last_loss, weights[2];
  for (Precision p : {Precision::kFp32, Precision::kBf16}) {
    auto fresh = CreateBackend("onednn", Device::Cpu());
    ASSERT_TRUE(fresh.ok());
    TrainOptions options;
    options.precision = p;
    options.learning_rate = 0.05;
    auto trainer = Trainer::Compile(SmallCnn(), fresh->get(), options);
    ASSERT_TRUE(trainer.ok()) << trainer.status();
    std::vector<float> images;
    std::vector<int32_t> labels;
    float last = 0;
    for (int step = 0; step < 60; ++step) {
      MakeBatch(100 + step, &images, &labels);
      ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
      auto loss = StepAndLoss(**trainer);
      ASSERT_TRUE(loss.ok()) << loss.status();
      ASSERT_TRUE(std::isfinite(*loss)) << PrecisionName(p) << " step " << step;
      if (step == 0) first_loss.push_back(*loss);
      if (step >= 55) last += *loss / 5;
    }
    last_loss.push_back(last);
    auto w = (*trainer)->ReadParameter(2, 0);
    ASSERT_TRUE(w.ok()) << w.status();
    weights[p == Precision::kBf16] = *w;
  }
  const double chance = std::log(static_cast<double>(kClasses));
  // The first step runs on the same initial weights: bf16 rounding only.
  EXPECT_NEAR(first_loss[1], first_loss[0], 0.03 * first_loss[0]);
  EXPECT_LT(last_loss[1], 0.25 * chance) << "bf16 did not learn; fp32 reached " << last_loss[0];
  // The masters are fp32: after 60 small updates most weights are not bf16 values.
  int not_bf16 = 0;
  for (float w : weights[1]) not_bf16 += BFloat16ToFloat(FloatToBFloat16(w)) != w;
  EXPECT_GT(not_bf16, static_cast<int>(weights[1].size() / 2));
}

}  // namespace
}  // namespace cnnbench
