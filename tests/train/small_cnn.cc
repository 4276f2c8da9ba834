#include "tests/train/small_cnn.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "kernels/cuda/cuda_backend.h"
#include "models/net_builder.h"
#include "train/init.h"

namespace cnnbench::train_test {

Graph SmallCnn(int batch, bool batch_norm) {
  const int bn = batch_norm ? 1 : 0;
  NetBuilder b(batch, 3, kSize, kSize, kClasses);
  const int stem = b.Conv(8, {3, 3}, {.batch_norm = bn});
  const int left = b.Conv(8, {1, 1});
  b.set_top(stem);
  const int right = b.Conv(8, {3, 3}, {.stride = 1, .padding = Padding::kSame});
  b.Concat({left, right});
  b.MaxPool({2, 2}, {.stride = 2});
  const int shortcut = b.top();
  b.Conv(16, {3, 3}, {.activation = Activation::kNone, .batch_norm = bn});
  b.Add(b.top(), shortcut);
  b.Relu();
  b.AvgPool({3, 3}, {.stride = 2, .padding = Padding::kSame});
  b.Fc(32);
  b.Dropout(0.1);
  b.Logits();
  auto graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return *graph;
}

Graph SqueezeExcitationNet(int batch) {
  NetBuilder b(batch, 3, kSize, kSize, kClasses);
  b.Conv(16, {3, 3}, {.activation = Activation::kSilu});
  for (Activation gate : {Activation::kSigmoid, Activation::kHardSigmoid}) {
    const int x = b.top();
    b.SpatialMean();
    b.Conv(4, {1, 1}, {.activation = Activation::kGelu});
    b.Conv(16, {1, 1}, {.activation = gate});
    b.ChannelMul(x, b.top());
    b.Conv(16, {3, 3}, {.activation = Activation::kHardSwish});
  }
  // ConvNeXt's residual: a depthwise conv, layer norm, a pointwise conv,
  // drop-path, the add (in inference the drop-path leaves and the add joins
  // the conv).
  const int residual = b.top();
  b.Conv(16, {3, 3}, {.groups = 16, .activation = Activation::kNone});
  b.LayerNorm(1e-6);
  b.Conv(16, {1, 1}, {.activation = Activation::kNone});
  b.DropPath(0.8, 0);
  b.Add(residual, b.top());
  const int pooled = b.MaxPool({2, 2}, {.stride = 2});
  b.SpatialMean();
  b.Fc(8, {.activation = Activation::kGeluTanh});
  b.Fc(16, {.activation = Activation::kSigmoid});
  b.ChannelMul(pooled, b.top());  // an fc's (N,C) as the scales
  b.Logits();
  auto graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return *graph;
}

void MakeBatch(uint64_t seed, std::vector<float>* images, std::vector<int32_t>* labels, int batch) {
  Rng rng(seed);
  images->assign(batch * 3 * kSize * kSize, 0.0f);
  labels->assign(batch, 0);
  for (int n = 0; n < batch; ++n) {
    const int label = rng.Next() % kClasses;
    (*labels)[n] = label;
    const int y0 = (label / 2) * 6 + 1, x0 = (label % 2) * 6 + 1;
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < kSize; ++y)
        for (int x = 0; x < kSize; ++x) {
          float v = static_cast<float>(rng.Uniform() * 0.5);
          if (y >= y0 && y < y0 + 4 && x >= x0 && x < x0 + 4) v += 1.0f;
          (*images)[((n * 3 + c) * kSize + y) * kSize + x] = v;
        }
  }
}

std::unique_ptr<Backend> GpuBackend() {
  if (CudaDeviceCount() == 0) return nullptr;
  CudaBackendOptions options;
  options.deterministic = true;
  auto backend = CreateCudaBackend(Device::Cuda(0), options);
  EXPECT_TRUE(backend.ok()) << backend.status();
  return backend.ok() ? *std::move(backend) : nullptr;
}

absl::StatusOr<float> StepAndLoss(Trainer& trainer) {
  absl::Status status = trainer.Step();
  if (!status.ok()) return status;
  return trainer.LastLoss();
}

absl::StatusOr<std::vector<float>> StepLosses(Trainer& trainer, int steps) {
  std::vector<float> losses, images;
  std::vector<int32_t> labels;
  for (int step = 0; step < steps; ++step) {
    MakeBatch(step, &images, &labels);
    absl::Status set = trainer.SetBatch(images.data(), labels.data());
    if (!set.ok()) return set;
    absl::StatusOr<float> loss = StepAndLoss(trainer);
    if (!loss.ok()) return loss.status();
    losses.push_back(*loss);
  }
  return losses;
}

std::vector<float> RunLogits(Inferencer& inferencer, const std::vector<float>& images) {
  EXPECT_TRUE(inferencer.SetBatch(images.data()).ok());
  absl::Status run = inferencer.Run();
  EXPECT_TRUE(run.ok()) << run;
  auto logits = inferencer.Logits();
  EXPECT_TRUE(logits.ok()) << logits.status();
  return logits.ok() ? *logits : std::vector<float>();
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, double tolerance,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  ASSERT_FALSE(want.empty()) << what;
  double scale = 1;
  for (float v : want) scale = std::max(scale, std::abs(static_cast<double>(v)));
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tolerance * scale) << what << ", logit " << i;
}

std::vector<CpuPlanCase> CpuPlanCases() {
  return {
      {"reference", Precision::kFp32}, {"onednn", Precision::kFp32}, {"onednn", Precision::kBf16}};
}

std::string CpuPlanCaseName(const ::testing::TestParamInfo<CpuPlanCase>& info) {
  return absl::StrCat(info.param.backend, "_", PrecisionName(info.param.precision));
}

std::unique_ptr<Backend> CpuBackend(const std::string& name) {
  auto backend = CreateBackend(name, Device::Cpu());
  EXPECT_TRUE(backend.ok()) << backend.status();
  return backend.ok() ? *std::move(backend) : nullptr;
}

bool RunsBf16(Backend& backend) {
  return backend
      .Supports(ParseOpDesc("relu:mb1ic1ih1iw1").value(),
                KernelOptions::ForPrecision(Precision::kBf16))
      .ok();
}

std::vector<float> RandomImages(const Graph& graph, uint64_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> pixel(0.0f, 1.0f);
  std::vector<float> images(graph.nodes[graph.images].output.num_elements());
  for (float& v : images) v = pixel(rng);
  return images;
}

}  // namespace cnnbench::train_test
