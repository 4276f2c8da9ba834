// MobileNetV3 large and small (Howard et al. 2019), as torchvision's
// mobilenet_v3_large and mobilenet_v3_small: inverted residuals with
// hard-swish or ReLU, squeeze-and-excitation gated by hard-sigmoid on some
// blocks; each size a table of blocks (torchvision's bneck rows).
#include <iterator>

#include "absl/strings/str_cat.h"
#include "models/torchvision_layers.h"
#include "models/zoo_models.h"

namespace cnnbench {
namespace {

// torchvision's norm_layer here: BatchNorm2d(eps=0.001, momentum=0.01),
// i.e. decay 0.99.
constexpr BatchNormOptions kMobileNetV3BatchNorm = {
    .epsilon = 1e-3, .momentum = 0.99, .scale = true};

// One inverted residual (torchvision's InvertedResidualConfig at width 1):
// kernel, expanded and output channels, squeeze-and-excitation, hard-swish
// (else ReLU), stride.
struct Block {
  int64_t kernel, expanded, out;
  bool se, hardswish;
  int64_t stride;
};
constexpr Block kLarge[] = {
    {3, 16, 16, false, false, 1},   {3, 64, 24, false, false, 2},  {3, 72, 24, false, false, 1},
    {5, 72, 40, true, false, 2},    {5, 120, 40, true, false, 1},  {5, 120, 40, true, false, 1},
    {3, 240, 80, false, true, 2},   {3, 200, 80, false, true, 1},  {3, 184, 80, false, true, 1},
    {3, 184, 80, false, true, 1},   {3, 480, 112, true, true, 1},  {3, 672, 112, true, true, 1},
    {5, 672, 160, true, true, 2},   {5, 960, 160, true, true, 1},  {5, 960, 160, true, true, 1},
};
constexpr Block kSmall[] = {
    {3, 16, 16, true, false, 2},  {3, 72, 24, false, false, 2}, {3, 88, 24, false, false, 1},
    {5, 96, 40, true, true, 2},   {5, 240, 40, true, true, 1},  {5, 240, 40, true, true, 1},
    {5, 120, 48, true, true, 1},  {5, 144, 48, true, true, 1},  {5, 288, 96, true, true, 2},
    {5, 576, 96, true, true, 1},  {5, 576, 96, true, true, 1},
};

}  // namespace

void MobileNetV3(NetBuilder& b, MobileNetV3Size size) {
  using torchvision::ConvNormActivation;
  constexpr Activation kHardSwish = Activation::kHardSwish;
  b.set_conv_batch_norm(kMobileNetV3BatchNorm);
  const bool large = size == MobileNetV3Size::kLarge;
  const Block* const blocks = large ? std::begin(kLarge) : std::begin(kSmall);
  const Block* const end = large ? std::end(kLarge) : std::end(kSmall);
  b.Conv(16, {3, 3}, ConvNormActivation(3, 2, 1, kHardSwish));
  int index = 0;
  for (const Block* block = blocks; block != end; ++block, ++index) {
    b.set_scope(absl::StrCat("block", index, "/"));
    const Activation activation = block->hardswish ? kHardSwish : Activation::kRelu;
    const int input = b.top();
    const int64_t in = b.top_shape()[1];
    if (block->expanded != in)
      b.Conv(block->expanded, {1, 1}, ConvNormActivation(1, 1, 1, activation));
    const int features =
        b.Conv(block->expanded, {block->kernel, block->kernel},
               ConvNormActivation(block->kernel, block->stride, block->expanded, activation));
    if (block->se)
      torchvision::SqueezeExcitation(b, features,
                                     torchvision::MakeDivisible(block->expanded / 4),
                                     Activation::kRelu, Activation::kHardSigmoid);
    b.Conv(block->out, {1, 1}, ConvNormActivation(1, 1, 1, Activation::kNone));
    if (block->stride == 1 && in == block->out) b.Add(input, b.top());
  }
  b.set_scope("");
  b.Conv(6 * b.top_shape()[1], {1, 1}, ConvNormActivation(1, 1, 1, kHardSwish));
  b.SpatialMean();
  // The classifier's hidden layer; the logits follow the dropout.
  b.Fc(large ? 1280 : 1024, {.activation = kHardSwish});
  b.Dropout(0.2);
}

}  // namespace cnnbench
