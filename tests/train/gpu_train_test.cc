// The executor on the cuda backend (skipped without a GPU): a small network
// follows the CPU's loss curve for its first steps, a replayed CUDA graph
// computes exactly what eager steps compute, and an absurd batch is an OOM
// error, not a crash.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/loss_scale.h"
#include "models/net_builder.h"
#include "models/zoo.h"
#include "tests/train/small_cnn.h"
#include "train/trainer.h"

namespace cnnbench {
namespace {

using train_test::MakeBatch;
using train_test::SmallCnn;
using train_test::StepAndLoss;

// Deterministic engines: the tests below compare runs bit for bit.
using train_test::GpuBackend;

// fc -> relu -> fc -> softmax: only deterministic library calls.
Graph SmallMlp() {
  NetBuilder b(train_test::kBatch, 3, train_test::kSize, train_test::kSize, train_test::kClasses);
  b.Fc(64);
  b.Logits();
  auto graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return *graph;
}

std::vector<float> Losses(Backend* backend, const Graph& graph, const TrainOptions& options,
                          int steps) {
  auto trainer = Trainer::Compile(graph, backend, options);
  EXPECT_TRUE(trainer.ok()) << trainer.status();
  if (!trainer.ok()) return {};
  std::vector<float> images, losses;
  std::vector<int32_t> labels;
  for (int step = 0; step < steps; ++step) {
    MakeBatch(step, &images, &labels);
    EXPECT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
    auto loss = StepAndLoss(**trainer);
    EXPECT_TRUE(loss.ok()) << loss.status();
    losses.push_back(loss.ok() ? *loss : NAN);
  }
  return losses;
}

TEST(GpuTrainTest, SmallCnnFollowsTheCpuLossCurve) {
  auto gpu = GpuBackend();
  SKIP_WITHOUT_GPU(gpu);
  auto cpu = CreateBackend("reference", Device::Cpu());
  ASSERT_TRUE(cpu.ok());
  TrainOptions options;
  options.learning_rate = 0.05;
  const std::vector<float> expect = Losses(cpu->get(), SmallCnn(), options, 5);
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kBf16, Precision::kFp16}) {
    options.precision = p;
    const std::vector<float> got = Losses(gpu.get(), SmallCnn(), options, 5);
    ASSERT_EQ(got.size(), expect.size()) << PrecisionName(p);
    const double tolerance = p == Precision::kFp32 ? 1e-4 : 3e-2;
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], expect[i], tolerance * std::fabs(expect[i]) + 1e-5)
          << PrecisionName(p) << " step " << i;
  }
}

// ReLUs folded into the batch norms and the residual add before them (the
// default) take the steps the unfused graph takes, in fp32 and bf16.
TEST(GpuTrainTest, FusedReluTrainsLikeTheUnfusedGraph) {
  auto gpu = GpuBackend();
  SKIP_WITHOUT_GPU(gpu);
  for (Precision p : {Precision::kFp32, Precision::kBf16}) {
    TrainOptions options;
    options.learning_rate = 0.05;
    options.precision = p;
    options.fuse_relu = false;
    const std::vector<float> plain = Losses(gpu.get(), SmallCnn(), options, 5);
    options.fuse_relu = true;
    auto trainer = Trainer::Compile(SmallCnn(), gpu.get(), options);
    ASSERT_TRUE(trainer.ok()) << trainer.status();
    EXPECT_GT((*trainer)->fused_relus(), 0) << PrecisionName(p);
    const std::vector<float> fused = Losses(gpu.get(), SmallCnn(), options, 5);
    ASSERT_EQ(fused.size(), plain.size());
    ASSERT_NE(plain.front(), plain.back()) << "the steps learn";
    // Plans are chosen by timing per compile, so the engines may differ.
    const double tolerance = p == Precision::kFp32 ? 1e-4 : 3e-2;
    for (size_t i = 0; i < fused.size(); ++i)
      EXPECT_NEAR(fused[i], plain[i], tolerance * std::fabs(plain[i]) + 1e-5)
          << PrecisionName(p) << " step " << i;
  }
}

// fp16 from a loss scale so large that the first gradients overflow: those
// updates are skipped and halve the scale until the gradients fit, then the
// network learns (finite losses that fall), counting clean updates.
TEST(GpuTrainTest, Fp16LossScalingRecoversFromOverflow) {
  auto gpu = GpuBackend();
  SKIP_WITHOUT_GPU(gpu);
  TrainOptions options;
  options.learning_rate = 0.05;
  options.precision = Precision::kFp16;
  options.initial_loss_scale = kMaxLossScale;  // 2^24: the loss gradient alone overflows fp16
  options.loss_scale_growth_interval = 1000;
  auto trainer = Trainer::Compile(SmallCnn(), gpu.get(), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  std::vector<float> images, losses;
  std::vector<int32_t> labels;
  const std::vector<float> first_weights = *(*trainer)->ReadParameter(2, 0);
  for (int step = 0; step < 40; ++step) {
    MakeBatch(step, &images, &labels);
    ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
    auto loss = StepAndLoss(**trainer);
    ASSERT_TRUE(loss.ok()) << loss.status();
    losses.push_back(*loss);
  }
  auto scale = (*trainer)->LossScale();
  ASSERT_TRUE(scale.ok()) << scale.status();
  EXPECT_LT(*scale, kMaxLossScale);
  EXPECT_GE(*scale, kMinLossScale);
  auto clean = (*trainer)->CleanStepsSinceScaleChange();
  ASSERT_TRUE(clean.ok());
  EXPECT_GT(*clean, 0) << "no clean update after the scale came down";
  EXPECT_NE(*(*trainer)->ReadParameter(2, 0), first_weights) << "no update was applied";
  for (float l : losses) EXPECT_TRUE(std::isfinite(l));
  EXPECT_LT(losses.back(), losses.front());
}

// A bad label in a step replayed from a CUDA graph (no host code of the
// kernel runs then) is still reported, by the next call that waits.
TEST(GpuTrainTest, ABadLabelInAReplayedStepIsReported) {
  auto gpu = GpuBackend();
  SKIP_WITHOUT_GPU(gpu);
  auto trainer = Trainer::Compile(SmallCnn(), gpu.get(), TrainOptions{});
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  ASSERT_TRUE((*trainer)->cuda_graph_active());
  std::vector<float> images;
  std::vector<int32_t> labels;
  for (int step = 0; step < 6; ++step) {  // each slot: eager, captured, replayed
    MakeBatch(step, &images, &labels);
    ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
    ASSERT_TRUE(StepAndLoss(**trainer).ok());
  }
  MakeBatch(6, &images, &labels);
  labels[3] = train_test::kClasses;  // outside [0, classes)
  ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
  ASSERT_TRUE((*trainer)->Step().ok());  // only enqueues
  auto loss = (*trainer)->LastLoss();
  ASSERT_FALSE(loss.ok());
  EXPECT_EQ(loss.status().code(), absl::StatusCode::kInvalidArgument) << loss.status();
  EXPECT_NE(loss.status().message().find("example 3"), std::string::npos) << loss.status();
}

// Other precisions use no loss scale.
TEST(GpuTrainTest, Bf16UsesNoLossScale) {
  auto gpu = GpuBackend();
  SKIP_WITHOUT_GPU(gpu);
  TrainOptions options;
  options.precision = Precision::kBf16;
  auto trainer = Trainer::Compile(SmallCnn(), gpu.get(), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  EXPECT_EQ(*(*trainer)->LossScale(), 1.0f);
}

TEST(GpuTrainTest, GraphReplayEqualsEagerStepsBitForBit) {
  auto gpu = GpuBackend();
  SKIP_WITHOUT_GPU(gpu);
  // The MLP (library GEMMs only) and the CNN (cuDNN convolution and batch
  // norm engines, chosen deterministic by GpuBackend), fp32 and bf16.
  for (const bool cnn : {false, true}) {
    for (Precision p : {Precision::kFp32, Precision::kBf16}) {
      SCOPED_TRACE(std::string(cnn ? "cnn " : "mlp ") + std::string(PrecisionName(p)));
      const Graph net = cnn ? SmallCnn() : SmallMlp();
      TrainOptions options;
      options.precision = p;
      options.learning_rate = 0.05;
      options.cuda_graph = false;
      const std::vector<float> eager = Losses(gpu.get(), net, options, 6);
      options.cuda_graph = true;
      auto trainer = Trainer::Compile(net, gpu.get(), options);
      ASSERT_TRUE(trainer.ok()) << trainer.status();
      EXPECT_TRUE((*trainer)->cuda_graph_active());
      const std::vector<float> replayed = Losses(gpu.get(), net, options, 6);
      ASSERT_EQ(replayed.size(), eager.size());
      for (size_t i = 0; i < eager.size(); ++i) EXPECT_EQ(replayed[i], eager[i]) << "step " << i;
      // Not a constant: the steps train.
      EXPECT_NE(eager.front(), eager.back());
    }
  }
}

// SetBatch copies the next batch on a side stream while the step before it
// runs, and the host batch may be reused as soon as SetBatch returns: a
// pipelined run (each batch set while the previous step is in flight, its
// host memory then overwritten) takes exactly the steps of the sequential
// one, with and without CUDA graphs, with and without the cast to bf16.
TEST(GpuTrainTest, BatchesSetDuringAStepAreCopiedBesideIt) {
  auto gpu = GpuBackend();
  SKIP_WITHOUT_GPU(gpu);
  for (Precision p : {Precision::kFp32, Precision::kBf16}) {
    for (bool graph : {false, true}) {
      SCOPED_TRACE(std::string(PrecisionName(p)) + (graph ? " graph" : " eager"));
      TrainOptions options;
      options.precision = p;
      options.cuda_graph = graph;
      options.learning_rate = 0.05;
      const std::vector<float> sequential = Losses(gpu.get(), SmallCnn(), options, 5);
      auto trainer = Trainer::Compile(SmallCnn(), gpu.get(), options);
      ASSERT_TRUE(trainer.ok()) << trainer.status();
      std::vector<float> images, pipelined;
      std::vector<int32_t> labels;
      MakeBatch(0, &images, &labels);
      ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
      for (int step = 0; step < 5; ++step) {
        ASSERT_TRUE((*trainer)->Step().ok());
        if (step + 1 < 5) {
          MakeBatch(step + 1, &images, &labels);
          ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
          // Reused at once: the copy must already have read it.
          std::fill(images.begin(), images.end(), NAN);
          std::fill(labels.begin(), labels.end(), -1);
        }
        auto loss = (*trainer)->LastLoss();
        ASSERT_TRUE(loss.ok()) << loss.status();
        pipelined.push_back(*loss);
      }
      ASSERT_EQ(pipelined.size(), sequential.size());
      for (size_t i = 0; i < sequential.size(); ++i)
        EXPECT_EQ(pipelined[i], sequential[i]) << "step " << i;
    }
  }
}

TEST(GpuTrainTest, AnAbsurdBatchIsAnOomError) {
  auto gpu = GpuBackend();
  SKIP_WITHOUT_GPU(gpu);
  auto info = FindModel("resnet50");
  ASSERT_TRUE(info.ok());
  ModelOptions mo;
  mo.batch = 1 << 16;  // about 10 TB of activations
  auto graph = BuildModel("resnet50", mo);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto trainer = Trainer::Compile(*graph, gpu.get(), TrainOptions{});
  ASSERT_FALSE(trainer.ok());
  EXPECT_EQ(trainer.status().code(), absl::StatusCode::kResourceExhausted) << trainer.status();
  EXPECT_NE(trainer.status().message().find("OOM"), std::string::npos) << trainer.status();
  // The device is still usable afterwards.
  EXPECT_FALSE(Losses(gpu.get(), SmallMlp(), TrainOptions{}, 1).empty());
}

TEST(GpuTrainTest, CudaGraphsAreOffOnTheCpu) {
  auto cpu = CreateBackend("onednn", Device::Cpu());
  ASSERT_TRUE(cpu.ok());
  TrainOptions options;
  options.cuda_graph = true;
  auto trainer = Trainer::Compile(SmallMlp(), cpu->get(), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  EXPECT_FALSE((*trainer)->cuda_graph_active());
}

}  // namespace
}  // namespace cnnbench
