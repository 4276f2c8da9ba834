// ConvNeXt tiny, small and base (Liu et al. 2022), as torchvision's
// convnext_tiny/small/base: a 4x4 stride-4 stem with layer norm, four
// stages of ConvNeXt blocks joined by layer norm and a 2x2 stride-2
// convolution, each size a row of widths, depths and stochastic depth.
#include "absl/strings/str_cat.h"
#include "models/zoo_models.h"

namespace cnnbench {

void ConvNeXt(NetBuilder& b, const ConvNeXtConfig& config) {
  constexpr double kEpsilon = 1e-6;  // torchvision's LayerNorm2d and nn.LayerNorm here
  int64_t total_blocks = 0;
  for (int64_t depth : config.depths) total_blocks += depth;
  // The stem: Conv2dNormActivation(3, C, 4, stride 4, no padding, bias).
  b.Conv(config.widths[0], {4, 4},
         {.stride = 4, .padding = Padding::kValid, .activation = Activation::kNone,
          .batch_norm = 0});
  b.LayerNorm(kEpsilon);
  int64_t block = 0;
  for (size_t stage = 0; stage < config.widths.size(); ++stage) {
    const int64_t width = config.widths[stage];
    if (stage > 0) {  // the downsampling between stages
      b.set_scope(absl::StrCat("downsample", stage, "/"));
      b.LayerNorm(kEpsilon);
      b.Conv(width, {2, 2},
             {.stride = 2, .padding = Padding::kValid, .activation = Activation::kNone,
              .batch_norm = 0});
    }
    for (int64_t i = 0; i < config.depths[stage]; ++i, ++block) {
      b.set_scope(absl::StrCat("block", block, "/"));
      const int input = b.top();
      // CNBlock: a 7x7 depthwise conv with bias, layer norm over the
      // channels, the pointwise MLP (4x wider, GELU) as 1x1 convs with bias.
      b.Conv(width, {7, 7},
             {.padding = Padding::kExplicit, .pad_h = 3, .pad_w = 3, .groups = width,
              .activation = Activation::kNone, .batch_norm = 0});
      b.LayerNorm(kEpsilon);
      b.Conv(4 * width, {1, 1}, {.activation = Activation::kGelu, .batch_norm = 0});
      b.Conv(width, {1, 1}, {.activation = Activation::kNone, .batch_norm = 0});
      // Layer scale: one factor per channel (torch's gamma, C parameters),
      // a depthwise 1x1 convolution without bias.
      b.Conv(width, {1, 1},
             {.groups = width, .activation = Activation::kNone, .batch_norm = 0, .bias = false});
      // Stochastic depth rising linearly from 0 at the first block to the
      // row's rate at the last (torchvision's sd_prob).
      const double drop = config.stochastic_depth * static_cast<double>(block) /
                          static_cast<double>(total_blocks - 1);
      if (drop > 0) b.DropPath(1.0 - drop, 0);
      b.Add(input, b.top());
    }
  }
  b.set_scope("");
  // The classifier's norm before the logits.
  b.SpatialMean();
  b.LayerNorm(kEpsilon);
}

}  // namespace cnnbench
