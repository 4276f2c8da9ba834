// MobileNet v1 (Howard et al. 2017) and v2 (Sandler et al. 2018), width 1.0.
// The zoo's `mobilenet` is v2, as tf_cnn_benchmarks' (tf1_only/mobilenet_v2.py);
// v1 is `mobilenet_v1`.
#include "absl/strings/str_cat.h"
#include "models/zoo_models.h"

namespace cnnbench {

// TF-slim's MobileNet v1 batch norm (gamma and beta, decay 0.9997).
constexpr BatchNormOptions kMobileNetBatchNorm = {
    .epsilon = 1e-3, .momentum = 0.9997, .scale = true};

// v1, Table 1 of the paper: a 3x3 conv, then 13 depthwise-separable blocks
// (3x3 depthwise, 1x1 pointwise), each conv with batch norm and ReLU as in
// the paper (TF-slim and Keras use ReLU6; this definition predates the
// kind and keeps ReLU, so that its results stay comparable).
void MobileNetV1(NetBuilder& b) {
  struct Separable {
    int64_t filters, stride;
  };
  // Output at 224: 112 x 112 x 64 after the first, 7 x 7 x 1024 after the last.
  constexpr Separable kBlocks[] = {{64, 1},  {128, 2},  {128, 1}, {256, 2}, {256, 1},
                                   {512, 2}, {512, 1},  {512, 1}, {512, 1}, {512, 1},
                                   {512, 1}, {1024, 2}, {1024, 1}};
  b.set_conv_batch_norm(kMobileNetBatchNorm);
  b.Conv(32, {3, 3}, {.stride = 2, .batch_norm = 1});  // 112 x 112 x 32
  for (const Separable& block : kBlocks) {
    const int64_t channels = b.top_shape()[1];
    b.Conv(channels, {3, 3}, {.stride = block.stride, .groups = channels, .batch_norm = 1});
    b.Conv(block.filters, {1, 1}, {.batch_norm = 1});
  }
  b.SpatialMean();
}

// TF-slim's MobileNet v2 batch norm, which tf_cnn_benchmarks uses (gamma
// and beta, decay 0.997, epsilon 1e-3).
constexpr BatchNormOptions kMobileNetV2BatchNorm = {
    .epsilon = 1e-3, .momentum = 0.997, .scale = true};

// v2, Table 2 of the paper (as torchvision's mobilenet_v2 and Keras'
// MobileNetV2): a 3x3 conv of 32, 17 inverted residual blocks, a 1x1 conv
// to 1280, the spatial mean and dropout 0.2 before the logits. A block
// expands by t with a 1x1 conv (none when t = 1), filters with a 3x3
// depthwise conv, both with batch norm and ReLU6, and projects linearly
// (batch norm, no activation) with a 1x1 conv; it adds its input when the
// stride is 1 and the channels stay.
void MobileNetV2(NetBuilder& b) {
  struct Stage {
    int64_t expansion, filters, blocks, stride;  // the paper's t, c, n, s
  };
  // Output at 224: 112 x 112 x 16 after the first stage, 7 x 7 x 320 after the last.
  constexpr Stage kStages[] = {{1, 16, 1, 1},  {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                               {6, 96, 3, 1},  {6, 160, 3, 2}, {6, 320, 1, 1}};
  constexpr Activation kRelu6 = Activation::kRelu6;
  b.set_conv_batch_norm(kMobileNetV2BatchNorm);
  b.Conv(32, {3, 3}, {.stride = 2, .activation = kRelu6, .batch_norm = 1});  // 112 x 112 x 32
  int block_index = 0;
  for (const Stage& stage : kStages) {
    for (int64_t i = 0; i < stage.blocks; ++i, ++block_index) {
      b.set_scope(absl::StrCat("block", block_index, "/"));
      const int input = b.top();
      const int64_t channels = b.top_shape()[1];
      const int64_t stride = i == 0 ? stage.stride : 1;
      const int64_t hidden = channels * stage.expansion;
      if (stage.expansion != 1)
        b.Conv(hidden, {1, 1}, {.activation = kRelu6, .batch_norm = 1});
      b.Conv(hidden, {3, 3},
             {.stride = stride, .groups = hidden, .activation = kRelu6, .batch_norm = 1});
      b.Conv(stage.filters, {1, 1}, {.activation = Activation::kNone, .batch_norm = 1});
      if (stride == 1 && channels == stage.filters) b.Add(input, b.top());
    }
  }
  b.set_scope("");
  b.Conv(1280, {1, 1}, {.activation = kRelu6, .batch_norm = 1});  // 7 x 7 x 1280
  b.SpatialMean();
  b.Dropout(0.2);
}

}  // namespace cnnbench
