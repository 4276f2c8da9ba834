// What torchvision's newer classification networks (EfficientNet,
// MobileNetV3, RegNet) share: its channel rounding and its
// Conv2dNormActivation. Only the model files include this.
#ifndef CNNBENCH_MODELS_TORCHVISION_LAYERS_H_
#define CNNBENCH_MODELS_TORCHVISION_LAYERS_H_

#include <algorithm>
#include <cstdint>

#include "models/net_builder.h"

namespace cnnbench::torchvision {

// torchvision's _make_divisible(v, divisor): the nearest multiple of
// `divisor`, at least `divisor`, and not below 90% of v.
inline int64_t MakeDivisible(double v, int64_t divisor = 8) {
  int64_t rounded = std::max<int64_t>(
      divisor, static_cast<int64_t>(v + static_cast<double>(divisor) / 2) / divisor * divisor);
  if (static_cast<double>(rounded) < 0.9 * v) rounded += divisor;
  return rounded;
}

// Conv2dNormActivation: padding (k-1)/2 on each side, batch norm (no bias),
// then `activation` (kNone: none).
inline ConvOptions ConvNormActivation(int64_t kernel, int64_t stride, int64_t groups,
                                      Activation activation) {
  return {.stride = stride,
          .padding = Padding::kExplicit,
          .pad_h = (kernel - 1) / 2,
          .pad_w = (kernel - 1) / 2,
          .groups = groups,
          .activation = activation,
          .batch_norm = 1};
}

// SqueezeExcitation on the top, whose features are node `features`:
// global average pool, a 1x1 conv with bias to `squeeze` channels and
// `activation`, a 1x1 conv with bias back and `gate`, the features
// multiplied channel by channel. Returns the product.
inline int SqueezeExcitation(NetBuilder& b, int features, int64_t squeeze, Activation activation,
                             Activation gate) {
  const int64_t channels = b.top_shape()[1];
  b.SpatialMean();
  b.Conv(squeeze, {1, 1}, {.activation = activation, .batch_norm = 0});
  b.Conv(channels, {1, 1}, {.activation = gate, .batch_norm = 0});
  return b.ChannelMul(features, b.top());
}

}  // namespace cnnbench::torchvision

#endif  // CNNBENCH_MODELS_TORCHVISION_LAYERS_H_
