// DenseNet for CIFAR-10 as tf_cnn_benchmarks defines it (densenet_model.py;
// Huang et al. 2017, "Densely Connected Convolutional Networks", the
// variant without bottleneck layers or compression): densenet40_k12,
// densenet100_k12 and densenet100_k24.
#include "absl/strings/str_cat.h"
#include "models/zoo_models.h"

namespace cnnbench {
namespace {

// The model's batch_norm_config (decay 0.9, epsilon 1e-5, with gamma), given
// to each of its explicit batch norms; its convs have none (they follow the
// builder's switch, off) and keep their biases.
constexpr BatchNormOptions kDenseNetBatchNorm = {.epsilon = 1e-5, .momentum = 0.9, .scale = true};
constexpr int kNoBatchNorm = 0;

// One layer of a dense block: BN, ReLU, a 3x3 conv of `growth_rate`
// channels (no activation), concatenated after the layer's input.
void DenseLayer(NetBuilder& b, int64_t growth_rate) {
  const int in = b.top();
  b.BatchNorm(kDenseNetBatchNorm);
  b.Relu();
  const int grown =
      b.Conv(growth_rate, {3, 3}, {.activation = Activation::kNone, .batch_norm = kNoBatchNorm});
  b.Concat({in, grown});
}

// Between blocks: BN, ReLU, a 1x1 conv keeping the depth (with its ReLU, as
// the conv's default activation there) and a 2x2/2 average pool.
void Transition(NetBuilder& b) {
  const int64_t depth = b.top_shape()[1];
  b.BatchNorm(kDenseNetBatchNorm);
  b.Relu();
  b.Conv(depth, {1, 1}, {.activation = Activation::kRelu, .batch_norm = kNoBatchNorm});
  b.AvgPool({2, 2}, {.stride = 2});
}

}  // namespace

void DenseNetCifar(NetBuilder& b, int layers_per_block, int64_t growth_rate) {
  // 16 channels at 32 x 32, then blocks at 32, 16 and 8 px, each adding
  // layers_per_block * growth_rate channels.
  b.Conv(16, {3, 3}, {.activation = Activation::kNone, .batch_norm = kNoBatchNorm});
  for (int block = 0; block < 3; ++block) {
    b.set_scope(absl::StrCat("block", block + 1, "/"));
    for (int layer = 0; layer < layers_per_block; ++layer) DenseLayer(b, growth_rate);
    if (block < 2) {
      b.set_scope(absl::StrCat("transition", block + 1, "/"));
      Transition(b);
    }
  }
  b.set_scope("");
  b.BatchNorm(kDenseNetBatchNorm);
  b.Relu();
  b.SpatialMean();
}

}  // namespace cnnbench
