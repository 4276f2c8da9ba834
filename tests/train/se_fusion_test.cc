// Squeeze-and-excitation in a training step: the features feed the pool
// and the channel multiply, so their gradient comes in two parts. A fused
// batch norm + activation on oneDNN takes both parts into its first
// backward pass (KernelSignature::sums_output_gradient, at most 2 parts),
// so the plan has no summing pass and no summed-gradient buffer there; the
// unfused graph sums them before the activation layer. Both train alike
// (the same losses and weights to fp32's rounding), also with freed
// buffers poisoned.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "kernels/kernel.h"
#include "models/net_builder.h"
#include "models/torchvision_layers.h"
#include "tests/train/small_cnn.h"
#include "train/trainer.h"

namespace cnnbench {
namespace {

// EfficientNet's and MobileNetV3's blocks, small: each SE block's features
// a conv's batch norm and activation (SiLU, hard-swish), then a residual
// whose input (a batch norm and hard-swish) the depthwise conv and the add
// both read.
Graph SeNet(int batch) {
  NetBuilder b(batch, 3, train_test::kSize, train_test::kSize, train_test::kClasses);
  b.Conv(16, {3, 3}, {.activation = Activation::kRelu, .batch_norm = 1});
  for (Activation act : {Activation::kSilu, Activation::kHardSwish}) {
    b.Conv(16, {3, 3}, {.groups = 16, .activation = act, .batch_norm = 1});
    torchvision::SqueezeExcitation(b, b.top(), 4, Activation::kRelu, Activation::kSigmoid);
    b.Conv(16, {1, 1}, {.activation = Activation::kNone, .batch_norm = 1});
  }
  b.Conv(16, {1, 1}, {.activation = Activation::kHardSwish, .batch_norm = 1});
  const int residual = b.top();
  b.Conv(16, {3, 3}, {.groups = 16, .activation = Activation::kNone, .batch_norm = 1});
  b.Add(residual, b.top());
  b.SpatialMean();
  b.Logits();
  auto graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return *graph;
}

struct TrainedRun {
  std::vector<float> losses;
  std::vector<float> first_conv;  // node 2's weights after the steps
  int summed_gradients = 0;       // plan buffers named ".../dy_sum"
  int parts_taken = 0;            // layers handed two or more gradient parts
  int fused_taking = 0;           // fused batch norms among them
};

TrainedRun Train(bool fuse, bool poison) {
  TrainedRun run;
  auto backend = CreateBackend("onednn", Device::Cpu());
  EXPECT_TRUE(backend.ok()) << backend.status();
  if (!backend.ok()) return run;
  TrainOptions options;
  options.learning_rate = 0.05;
  options.fuse_relu = fuse;
  options.poison_freed = poison;
  const Graph graph = SeNet(8);
  auto trainer = Trainer::Compile(graph, backend->get(), options);
  EXPECT_TRUE(trainer.ok()) << trainer.status();
  if (!trainer.ok()) return run;
  std::vector<float> images;
  std::vector<int32_t> labels;
  for (int step = 0; step < 4; ++step) {
    train_test::MakeBatch(step, &images, &labels, graph.batch);
    EXPECT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
    auto loss = train_test::StepAndLoss(**trainer);
    EXPECT_TRUE(loss.ok()) << loss.status();
    run.losses.push_back(loss.ok() ? *loss : NAN);
  }
  auto w = (*trainer)->ReadParameter(2, 0);
  EXPECT_TRUE(w.ok()) << w.status();
  if (w.ok()) run.first_conv = *w;
  for (const BufferRequest& r : (*trainer)->buffer_requests())
    run.summed_gradients += absl::EndsWith(r.name, "/dy_sum");
  for (const auto& layer : (*trainer)->step_plan().layers) {
    if (layer->grad_edges.size() < 2 ||
        !TakesOutputGradientParts(layer->kernel->signature(), layer->grad_edges.size()))
      continue;
    ++run.parts_taken;
    run.fused_taking += absl::StartsWith(layer->kernel->implementation(), "cnnbench:bn_");
  }
  return run;
}

TEST(SqueezeExcitationTrainingTest, FusedBatchNormTakesBothGradientParts) {
  const TrainedRun plain = Train(false, false);
  const TrainedRun fused = Train(true, false);
  const TrainedRun poisoned = Train(true, true);
  // Read twice, after a batch norm and activation: the two SE blocks'
  // features (SiLU, hard-swish) and the residual block's input (hard-swish,
  // read by the depthwise conv and the add).
  EXPECT_EQ(plain.fused_taking, 0);
  EXPECT_EQ(fused.fused_taking, 3);
  EXPECT_EQ(fused.summed_gradients, plain.summed_gradients - 3);
  EXPECT_EQ(poisoned.losses, fused.losses);
  EXPECT_EQ(poisoned.first_conv, fused.first_conv);
  ASSERT_EQ(plain.losses.size(), fused.losses.size());
  for (size_t s = 0; s < plain.losses.size(); ++s) {
    ASSERT_TRUE(std::isfinite(fused.losses[s]));
    EXPECT_NEAR(fused.losses[s], plain.losses[s], 1e-4 * std::fabs(plain.losses[s])) << s;
  }
  EXPECT_NE(plain.losses.front(), plain.losses.back());
  ASSERT_EQ(plain.first_conv.size(), fused.first_conv.size());
  ASSERT_FALSE(plain.first_conv.empty());
  for (size_t i = 0; i < plain.first_conv.size(); ++i)
    EXPECT_NEAR(fused.first_conv[i], plain.first_conv[i], 1e-4) << i;
}

}  // namespace
}  // namespace cnnbench
