// RegNetX and RegNetY (Radosavovic et al. 2020), as torchvision's regnet_*:
// the stage widths and depths derived from the design space's parameters as
// torchvision's BlockParams.from_init_params derives them (in float32, as
// torch computes them), then residual bottleneck blocks of grouped 3x3
// convolutions, with squeeze-and-excitation in RegNetY.
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/torchvision_layers.h"
#include "models/zoo_models.h"

namespace cnnbench {
namespace {

// torchvision's norm_layer here: BatchNorm2d(eps=1e-5, momentum=0.1).
constexpr BatchNormOptions kRegNetBatchNorm = {.epsilon = 1e-5, .momentum = 0.9, .scale = true};

struct Stage {
  int64_t width, depth, group_width;
};

// torch.round and Python's round: halves to even.
float RoundHalfEven(float v) { return std::nearbyint(v); }

// BlockParams.from_init_params with a bottleneck multiplier of 1: block
// i's width w_0 * w_m^round(log((w_0 + w_a * i) / w_0) / log(w_m)),
// rounded to a multiple of 8; a stage is a run of blocks of one width; then
// each stage's group width no wider than the stage, and the stage's width a
// multiple of it.
std::vector<Stage> StagesOf(const RegNetConfig& c) {
  const float w_0 = static_cast<float>(c.w_0), w_a = static_cast<float>(c.w_a);
  const float log_w_m = static_cast<float>(std::log(c.w_m));
  std::vector<int64_t> widths;
  for (int64_t i = 0; i < c.depth; ++i) {
    const float width = static_cast<float>(i) * w_a + w_0;
    const float capacity = RoundHalfEven(std::log(width / w_0) / log_w_m);
    const float quantised =
        RoundHalfEven(w_0 * std::pow(static_cast<float>(c.w_m), capacity) / 8.0f) * 8.0f;
    widths.push_back(static_cast<int64_t>(quantised));
  }
  std::vector<Stage> stages;
  for (int64_t w : widths) {
    if (stages.empty() || stages.back().width != w) {
      stages.push_back({w, 0, c.group_width});
    }
    ++stages.back().depth;
  }
  for (Stage& s : stages) {
    s.group_width = std::min(s.group_width, s.width);
    s.width = torchvision::MakeDivisible(static_cast<double>(s.width), s.group_width);
  }
  return stages;
}

}  // namespace

void RegNet(NetBuilder& b, const RegNetConfig& config) {
  using torchvision::ConvNormActivation;
  b.set_conv_batch_norm(kRegNetBatchNorm);
  b.Conv(32, {3, 3}, ConvNormActivation(3, 2, 1, Activation::kRelu));
  int index = 0;
  for (const Stage& stage : StagesOf(config)) {
    for (int64_t i = 0; i < stage.depth; ++i, ++index) {
      b.set_scope(absl::StrCat("block", index, "/"));
      const int input = b.top();
      const int64_t in = b.top_shape()[1];
      const int64_t stride = i == 0 ? 2 : 1;
      int shortcut = input;
      if (in != stage.width || stride != 1) {
        shortcut = b.Conv(stage.width, {1, 1},
                          ConvNormActivation(1, stride, 1, Activation::kNone));
        b.set_top(input);
      }
      b.Conv(stage.width, {1, 1}, ConvNormActivation(1, 1, 1, Activation::kRelu));
      const int features =
          b.Conv(stage.width, {3, 3},
                 ConvNormActivation(3, stride, stage.width / stage.group_width, Activation::kRelu));
      if (config.se_ratio > 0)
        torchvision::SqueezeExcitation(
            b, features,
            static_cast<int64_t>(std::nearbyint(config.se_ratio * static_cast<double>(in))),
            Activation::kRelu, Activation::kSigmoid);
      b.Conv(stage.width, {1, 1}, ConvNormActivation(1, 1, 1, Activation::kNone));
      b.Add(shortcut, b.top());
      b.Relu();
    }
  }
  b.set_scope("");
  b.SpatialMean();
}

}  // namespace cnnbench
