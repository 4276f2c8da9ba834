// EfficientNet B0-B7 (Tan and Le 2019), as torchvision's efficientnet_b0..b7:
// one definition, each size a row of width, depth, image size and dropout.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "models/torchvision_layers.h"
#include "models/zoo_models.h"

namespace cnnbench {
namespace {

// torchvision's batch norm here (nn.BatchNorm2d's defaults: eps 1e-5,
// momentum 0.1, i.e. decay 0.9).
constexpr BatchNormOptions kEfficientNetBatchNorm = {
    .epsilon = 1e-5, .momentum = 0.9, .scale = true};

// A stage of B0 (torchvision's MBConvConfig rows): expansion, kernel,
// stride, input and output channels, blocks.
struct Stage {
  int64_t expansion, kernel, stride, in, out, blocks;
};
constexpr Stage kB0Stages[] = {{1, 3, 1, 32, 16, 1},  {6, 3, 2, 16, 24, 2},  {6, 5, 2, 24, 40, 2},
                               {6, 3, 2, 40, 80, 3},  {6, 5, 1, 80, 112, 3}, {6, 5, 2, 112, 192, 4},
                               {6, 3, 1, 192, 320, 1}};

}  // namespace

void EfficientNet(NetBuilder& b, const EfficientNetConfig& config) {
  using torchvision::MakeDivisible;
  constexpr Activation kSilu = Activation::kSilu;
  auto Conv = torchvision::ConvNormActivation;
  b.set_conv_batch_norm(kEfficientNetBatchNorm);
  auto width = [&](int64_t channels) { return MakeDivisible(channels * config.width); };
  auto depth = [&](int64_t blocks) {
    return static_cast<int64_t>(std::ceil(static_cast<double>(blocks) * config.depth));
  };
  int64_t total_blocks = 0;
  for (const Stage& stage : kB0Stages) total_blocks += depth(stage.blocks);
  b.Conv(width(kB0Stages[0].in), {3, 3}, Conv(3, 2, 1, kSilu));
  int64_t block = 0;
  for (const Stage& stage : kB0Stages) {
    for (int64_t i = 0; i < depth(stage.blocks); ++i, ++block) {
      b.set_scope(absl::StrCat("block", block, "/"));
      const int input = b.top();
      const int64_t in = b.top_shape()[1];
      const int64_t out = width(stage.out);
      const int64_t stride = i == 0 ? stage.stride : 1;
      const int64_t expanded = MakeDivisible(static_cast<double>(in * stage.expansion));
      if (expanded != in) b.Conv(expanded, {1, 1}, Conv(1, 1, 1, kSilu));
      const int features = b.Conv(expanded, {stage.kernel, stage.kernel},
                                  Conv(stage.kernel, stride, expanded, kSilu));
      // Squeeze-and-excitation on a quarter of the block's input channels.
      torchvision::SqueezeExcitation(b, features, std::max<int64_t>(1, in / 4), kSilu,
                                     Activation::kSigmoid);
      b.Conv(out, {1, 1}, Conv(1, 1, 1, Activation::kNone));
      if (stride == 1 && in == out) {
        // Stochastic depth, rising linearly with the block's index.
        const double drop = config.stochastic_depth * static_cast<double>(block) /
                            static_cast<double>(total_blocks);
        if (drop > 0) b.DropPath(1.0 - drop, 0);
        b.Add(input, b.top());
      }
    }
  }
  b.set_scope("");
  b.Conv(4 * b.top_shape()[1], {1, 1}, Conv(1, 1, 1, kSilu));
  b.SpatialMean();
  b.Dropout(config.dropout);
}

}  // namespace cnnbench
