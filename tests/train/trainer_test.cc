// The executor on the CPU backends: learns a learnable task, is
// deterministic, never lets live buffers overlap, and profiles per layer.
#include "train/trainer.h"

#include <cmath>
#include <cstring>
#include <numeric>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "models/net_builder.h"
#include "tests/train/small_cnn.h"

namespace cnnbench {
namespace {

using train_test::kClasses;
using train_test::MakeBatch;
using train_test::SmallCnn;
using train_test::StepAndLoss;

class TrainerTest : public ::testing::TestWithParam<const char*> {
 protected:
  std::unique_ptr<Backend> MakeBackend() {
    auto backend = CreateBackend(GetParam(), Device::Cpu());
    EXPECT_TRUE(backend.ok()) << backend.status();
    return *std::move(backend);
  }
};

TEST_P(TrainerTest, LossFallsWellBelowChance) {
  auto backend = MakeBackend();
  TrainOptions options;
  options.learning_rate = 0.05;
  options.momentum = 0.9;
  auto trainer = Trainer::Compile(SmallCnn(), backend.get(), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  std::vector<float> images;
  std::vector<int32_t> labels;
  const double chance = std::log(static_cast<double>(kClasses));
  double first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    MakeBatch(100 + step, &images, &labels);
    ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
    auto loss = StepAndLoss(**trainer);
    ASSERT_TRUE(loss.ok()) << loss.status();
    ASSERT_TRUE(std::isfinite(*loss)) << "step " << step;
    if (step == 0) first = *loss;
    if (step >= 55) last += *loss / 5;
  }
  EXPECT_NEAR(first, chance, 0.5);
  EXPECT_LT(last, 0.25 * chance) << "first loss " << first;
}

TEST_P(TrainerTest, SqueezeExcitationNetLearns) {
  auto backend = MakeBackend();
  TrainOptions options;
  options.learning_rate = 0.02;
  options.momentum = 0.9;
  const Graph graph = train_test::SqueezeExcitationNet();
  int multiplies = 0;
  for (const Node& node : graph.nodes)
    multiplies += std::holds_alternative<ChannelMulDesc>(node.op);
  EXPECT_EQ(multiplies, 3);
  auto trainer = Trainer::Compile(graph, backend.get(), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  std::vector<float> images;
  std::vector<int32_t> labels;
  const double chance = std::log(static_cast<double>(kClasses));
  double first = 0, last = 0;
  for (int step = 0; step < 80; ++step) {
    MakeBatch(300 + step, &images, &labels);
    ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
    auto loss = StepAndLoss(**trainer);
    ASSERT_TRUE(loss.ok()) << loss.status();
    ASSERT_TRUE(std::isfinite(*loss)) << "step " << step;
    if (step == 0) first = *loss;
    if (step >= 75) last += *loss / 5;
  }
  EXPECT_NEAR(first, chance, 0.5);
  EXPECT_LT(last, 0.5 * chance) << "first loss " << first;
}

TEST_P(TrainerTest, SameSeedSameLossToTheBit) {
  std::vector<float> losses[2];
  for (int run = 0; run < 2; ++run) {
    auto backend = MakeBackend();
    auto trainer = Trainer::Compile(SmallCnn(), backend.get(), TrainOptions{});
    ASSERT_TRUE(trainer.ok()) << trainer.status();
    std::vector<float> images;
    std::vector<int32_t> labels;
    for (int step = 0; step < 5; ++step) {
      MakeBatch(step, &images, &labels);
      ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
      auto loss = StepAndLoss(**trainer);
      ASSERT_TRUE(loss.ok()) << loss.status();
      losses[run].push_back(*loss);
    }
  }
  for (int step = 0; step < 5; ++step)
    EXPECT_EQ(std::memcmp(&losses[0][step], &losses[1][step], sizeof(float)), 0)
        << "step " << step << ": " << losses[0][step] << " vs " << losses[1][step];
}

TEST_P(TrainerTest, MemoryPlanHoldsWhenFreedBuffersArePoisoned) {
  // Poisoning fills every buffer with NaN when its planned lifetime ends (and
  // the whole arena before a step): a plan that frees too early turns the
  // loss or the parameters into NaN or changes them.
  std::vector<float> losses[2];
  std::vector<float> weights[2];
  for (int poison = 0; poison < 2; ++poison) {
    auto backend = MakeBackend();
    TrainOptions options;
    options.poison_freed = poison == 1;
    Graph graph = SmallCnn();
    auto trainer = Trainer::Compile(graph, backend.get(), options);
    ASSERT_TRUE(trainer.ok()) << trainer.status();
    ASSERT_TRUE(VerifyPlan((*trainer)->buffer_requests(), (*trainer)->memory_plan()).ok());
    // Reuse happened: the arena is smaller than the sum of its buffers.
    EXPECT_LT((*trainer)->memory_plan().arena_bytes, (*trainer)->memory_plan().sum_bytes);
    std::vector<float> images;
    std::vector<int32_t> labels;
    for (int step = 0; step < 3; ++step) {
      MakeBatch(step, &images, &labels);
      ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
      auto loss = StepAndLoss(**trainer);
      ASSERT_TRUE(loss.ok()) << loss.status();
      losses[poison].push_back(*loss);
    }
    auto w = (*trainer)->ReadParameter(2, 0);  // the first conv's weights
    ASSERT_TRUE(w.ok()) << w.status();
    weights[poison] = *w;
  }
  EXPECT_EQ(losses[0], losses[1]);
  EXPECT_EQ(weights[0], weights[1]);
  for (float w : weights[1]) ASSERT_TRUE(std::isfinite(w));
}

// The profile's structure: an entry for every layer of the graph, each
// naming the layer's descriptor and what the backend runs for it; reset to
// zero on request. How its sum compares with the step's time is reported by
// //tools:step_breakdown --profile, not asserted here.
TEST_P(TrainerTest, ProfileCoversEveryLayer) {
  auto backend = MakeBackend();
  TrainOptions options;
  options.profile = true;
  options.fuse_relu = false;  // every node its own layer (fused names: fusion_test)
  const Graph graph = SmallCnn();
  auto trainer = Trainer::Compile(graph, backend.get(), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  std::vector<float> images;
  std::vector<int32_t> labels;
  MakeBatch(1, &images, &labels);
  ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
  for (int i = 0; i < 2; ++i) ASSERT_TRUE((*trainer)->Step().ok());
  ASSERT_TRUE((*trainer)->Synchronize().ok());

  const std::vector<LayerTime>& profile = (*trainer)->profile();
  int layers = 0;
  for (const Node& node : graph.nodes) {
    if (node.kind != Node::Kind::kOp) continue;
    ++layers;
    int entries = 0;
    for (const LayerTime& t : profile) {
      if (t.name != node.name) continue;
      ++entries;
      EXPECT_EQ(t.op, OpDescToString(node.op)) << node.name;
      EXPECT_FALSE(t.implementation.empty()) << node.name;
      EXPECT_TRUE(std::isfinite(t.forward_seconds) && t.forward_seconds >= 0) << node.name;
      EXPECT_TRUE(std::isfinite(t.backward_seconds) && t.backward_seconds >= 0) << node.name;
    }
    EXPECT_EQ(entries, 1) << node.name << " has " << entries << " profile entries";
  }
  EXPECT_GT(layers, 10);
  // The executor's own entries, by name: the update was timed.
  int update = 0, edges = 0;
  for (const LayerTime& t : profile) {
    if (t.name == "update") {
      ++update;
      EXPECT_GT(t.forward_seconds + t.backward_seconds, 0) << "the update was not timed";
    }
    if (t.name == "edges") ++edges;
  }
  EXPECT_EQ(update, 1);
  EXPECT_EQ(edges, 1);

  (*trainer)->ResetProfile();
  for (const LayerTime& t : (*trainer)->profile()) {
    EXPECT_EQ(t.forward_seconds, 0) << t.name;
    EXPECT_EQ(t.backward_seconds, 0) << t.name;
  }
}

TEST_P(TrainerTest, DanglingBranchIsAClearError) {
  NetBuilder b(2, 3, 8, 8, 4);
  const int in = b.top();
  b.Conv(4, {3, 3});  // conv0 -> relu0, never used
  b.set_top(in);
  b.Conv(4, {3, 3});
  b.Logits();
  auto graph = std::move(b).Build();
  ASSERT_TRUE(graph.ok());
  auto backend = MakeBackend();
  auto trainer = Trainer::Compile(*graph, backend.get(), TrainOptions{});
  ASSERT_FALSE(trainer.ok());
  EXPECT_NE(trainer.status().message().find("relu0"), absl::string_view::npos)
      << trainer.status().message();
}

TEST_P(TrainerTest, LabelOutOfRangeIsAnError) {
  auto backend = MakeBackend();
  auto trainer = Trainer::Compile(SmallCnn(), backend.get(), TrainOptions{});
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  std::vector<float> images;
  std::vector<int32_t> labels;
  MakeBatch(1, &images, &labels);
  labels[3] = kClasses;  // one past the last class
  ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
  auto loss = StepAndLoss(**trainer);
  ASSERT_FALSE(loss.ok());
  EXPECT_EQ(loss.status().code(), absl::StatusCode::kInvalidArgument) << loss.status();
}

// The two CPU backends run the same network from the same seed: their losses
// and updated weights agree to fp32 rounding (summation orders differ).
TEST(TrainerBackendsTest, OneDnnMatchesReference) {
  std::vector<float> losses[2], weights[2];
  const char* names[2] = {"reference", "onednn"};
  for (int b = 0; b < 2; ++b) {
    auto backend = CreateBackend(names[b], Device::Cpu());
    ASSERT_TRUE(backend.ok()) << backend.status();
    TrainOptions options;
    options.learning_rate = 0.05;
    auto trainer = Trainer::Compile(SmallCnn(), backend->get(), options);
    ASSERT_TRUE(trainer.ok()) << trainer.status();
    std::vector<float> images;
    std::vector<int32_t> labels;
    for (int step = 0; step < 4; ++step) {
      MakeBatch(step, &images, &labels);
      ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
      auto loss = StepAndLoss(**trainer);
      ASSERT_TRUE(loss.ok()) << loss.status();
      losses[b].push_back(*loss);
    }
    auto w = (*trainer)->ReadParameter(2, 0);
    ASSERT_TRUE(w.ok()) << w.status();
    weights[b] = *w;
  }
  for (int step = 0; step < 4; ++step)
    EXPECT_NEAR(losses[1][step], losses[0][step], 1e-4 * std::fabs(losses[0][step]) + 1e-5)
        << "step " << step;
  ASSERT_EQ(weights[0].size(), weights[1].size());
  for (size_t i = 0; i < weights[0].size(); ++i)
    ASSERT_NEAR(weights[1][i], weights[0][i], 1e-4) << "weight " << i;
}

// A step before any batch was set is an error, not a step on zeros.
TEST_P(TrainerTest, StepBeforeSetBatchIsAnError) {
  auto backend = MakeBackend();
  auto trainer = Trainer::Compile(SmallCnn(), backend.get(), TrainOptions{});
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  for (absl::Status s : {(*trainer)->Step(), (*trainer)->ForwardBackward()}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "SetBatch")) << s;
  }
  EXPECT_EQ((*trainer)->steps(), 0);
  std::vector<float> images;
  std::vector<int32_t> labels;
  MakeBatch(0, &images, &labels);
  ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
  auto loss = StepAndLoss(**trainer);
  EXPECT_TRUE(loss.ok()) << loss.status();
}

// Bad loss-scale options are refused before anything is built: even with a
// memory limit no plan fits, the error is about the options, not OOM.
TEST_P(TrainerTest, BadLossScaleOptionsAreRefusedBeforeAllocating) {
  auto backend = MakeBackend();
  TrainOptions options;
  options.precision = Precision::kFp16;
  options.memory_limit_bytes = 1;  // any allocation plan is refused (OOM)
  options.initial_loss_scale = 0;
  auto trainer = Trainer::Compile(SmallCnn(), backend.get(), options);
  ASSERT_FALSE(trainer.ok());
  EXPECT_EQ(trainer.status().code(), absl::StatusCode::kInvalidArgument) << trainer.status();
  EXPECT_TRUE(absl::StrContains(trainer.status().message(), "initial loss scale"))
      << trainer.status();
  options.initial_loss_scale = 1024;
  options.loss_scale_growth_interval = 0;
  trainer = Trainer::Compile(SmallCnn(), backend.get(), options);
  ASSERT_FALSE(trainer.ok());
  EXPECT_TRUE(absl::StrContains(trainer.status().message(), "growth interval")) << trainer.status();
}

INSTANTIATE_TEST_SUITE_P(CpuBackends, TrainerTest, ::testing::Values("reference", "onednn"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace cnnbench
