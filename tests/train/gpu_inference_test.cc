// The inference executor on the cuda backend (skipped without a GPU): its
// logits against the reference backend's in every precision (the same seed
// gives the same weights on every backend), a replayed CUDA graph against
// eager runs, the batch-norm fold against the unfolded plan, weights copied
// from a GPU trainer, and the logits of resnet50_v1.5 at a small size.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "kernels/cuda/cuda_backend.h"
#include "models/zoo.h"
#include "tests/train/small_cnn.h"
#include "train/inference.h"
#include "train/trainer.h"

namespace cnnbench {
namespace {

using train_test::MakeBatch;
using train_test::SmallCnn;

using train_test::GpuBackend;

std::vector<float> RunLogits(Inferencer& inferencer, const std::vector<float>& images, int runs) {
  EXPECT_TRUE(inferencer.SetBatch(images.data()).ok());
  for (int i = 0; i < runs; ++i) {
    absl::Status run = inferencer.Run();
    EXPECT_TRUE(run.ok()) << run;
  }
  auto logits = inferencer.Logits();
  EXPECT_TRUE(logits.ok()) << logits.status();
  return logits.ok() ? *logits : std::vector<float>();
}

// The largest difference relative to the largest reference magnitude.
double RelativeError(const std::vector<float>& got, const std::vector<float>& want) {
  EXPECT_EQ(got.size(), want.size());
  double scale = 1e-6, worst = 0;
  for (float v : want) scale = std::max(scale, std::abs(static_cast<double>(v)));
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]));
  return worst / scale;
}

double Tolerance(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return 1e-4;
    case Precision::kTf32:
      return 1e-2;
    default:
      return 5e-2;  // fp16, bf16 activations
  }
}

TEST(GpuInferenceTest, MatchesTheReferenceInEveryPrecision) {
  auto gpu = GpuBackend();
  SKIP_WITHOUT_GPU(gpu);
  auto reference = CreateReferenceBackend();
  const Graph graph = SmallCnn();
  std::vector<float> images;
  std::vector<int32_t> labels;
  MakeBatch(5, &images, &labels);
  auto truth = Inferencer::Compile(graph, reference.get(), InferOptions());
  ASSERT_TRUE(truth.ok()) << truth.status();
  const std::vector<float> want = RunLogits(**truth, images, 1);
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16}) {
    InferOptions options;
    options.precision = p;
    auto inferencer = Inferencer::Compile(graph, gpu.get(), options);
    ASSERT_TRUE(inferencer.ok()) << PrecisionName(p) << ": " << inferencer.status();
    const std::vector<float> got = RunLogits(**inferencer, images, 3);
    EXPECT_LE(RelativeError(got, want), Tolerance(p)) << PrecisionName(p);
  }
}

TEST(GpuInferenceTest, AReplayedGraphComputesWhatEagerRunsCompute) {
  auto gpu = GpuBackend();
  SKIP_WITHOUT_GPU(gpu);
  const Graph graph = SmallCnn();
  std::vector<float> images;
  std::vector<int32_t> labels;
  MakeBatch(6, &images, &labels);
  InferOptions eager_options;
  eager_options.cuda_graph = false;
  auto eager = Inferencer::Compile(graph, gpu.get(), eager_options);
  auto replayed = Inferencer::Compile(graph, gpu.get(), InferOptions());
  ASSERT_TRUE(eager.ok() && replayed.ok());
  const std::vector<float> want = RunLogits(**eager, images, 1);
  // Run 1 eager, run 2 captured, runs 3 and 4 replays.
  const std::vector<float> got = RunLogits(**replayed, images, 4);
  EXPECT_TRUE((*replayed)->cuda_graph_active()) << (*replayed)->cuda_graph_failure();
  EXPECT_EQ(got, want);
  EXPECT_FALSE((*eager)->cuda_graph_active());
}

TEST(GpuInferenceTest, TheFoldAndTrainedWeightsGiveTheUnfoldedLogits) {
  auto gpu = GpuBackend();
  SKIP_WITHOUT_GPU(gpu);
  const Graph graph = SmallCnn();
  auto trainer = Trainer::Compile(graph, gpu.get(), TrainOptions());
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  std::vector<float> images;
  std::vector<int32_t> labels;
  for (int step = 0; step < 3; ++step) {
    MakeBatch(step, &images, &labels);
    ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
    ASSERT_TRUE((*trainer)->Step().ok());
  }
  ASSERT_TRUE((*trainer)->Synchronize().ok());
  auto unfolded = Inferencer::Compile(graph, gpu.get(), InferOptions());
  InferOptions fold;
  fold.fold_batch_norm = true;
  auto folded = Inferencer::Compile(graph, gpu.get(), fold);
  ASSERT_TRUE(unfolded.ok() && folded.ok());
  EXPECT_GT((*folded)->folded_batch_norms(), 0);
  ASSERT_TRUE((*unfolded)->CopyWeightsFrom(**trainer).ok());
  ASSERT_TRUE((*folded)->CopyWeightsFrom(**trainer).ok());
  MakeBatch(40, &images, &labels);
  EXPECT_LE(RelativeError(RunLogits(**folded, images, 3), RunLogits(**unfolded, images, 3)), 1e-4);
}

TEST(GpuInferenceTest, Resnet50MatchesTheCpusLogits) {
  auto gpu = GpuBackend();
  SKIP_WITHOUT_GPU(gpu);
  auto graph = BuildModel("resnet50_v1.5", {.batch = 2, .image_size = 64});
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto cpu = CreateBackend("onednn", Device::Cpu());
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  std::vector<float> images(graph->nodes[graph->images].output.num_elements());
  Rng rng(3);
  for (float& v : images) v = static_cast<float>(rng.Normal());
  auto truth = Inferencer::Compile(*graph, cpu->get(), InferOptions());
  ASSERT_TRUE(truth.ok()) << truth.status();
  const std::vector<float> want = RunLogits(**truth, images, 1);
  for (Precision p : {Precision::kFp32, Precision::kBf16}) {
    InferOptions options;
    options.precision = p;
    options.fold_batch_norm = true;
    auto inferencer = Inferencer::Compile(*graph, gpu.get(), options);
    ASSERT_TRUE(inferencer.ok()) << PrecisionName(p) << ": " << inferencer.status();
    EXPECT_LE(RelativeError(RunLogits(**inferencer, images, 3), want), Tolerance(p))
        << PrecisionName(p);
  }
}

}  // namespace
}  // namespace cnnbench
