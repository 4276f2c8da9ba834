// MobileNet v1 (Howard et al. 2017, Table 1), width 1.0: a 3x3 conv, then 13
// depthwise-separable blocks (3x3 depthwise, 1x1 pointwise), each conv with
// batch norm and ReLU as in the paper (TF-slim's ReLU6 is not a kernel here).
// Not a tf_cnn_benchmarks model (its `mobilenet` is v2, TF1-only): the
// small modern model of the zoo.
#include "models/zoo_models.h"

namespace cnnbench {

// TF-slim's MobileNet v1 batch norm (gamma and beta, decay 0.9997).
constexpr BatchNormOptions kMobileNetBatchNorm = {
    .epsilon = 1e-3, .momentum = 0.9997, .scale = true};

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

}  // namespace cnnbench
