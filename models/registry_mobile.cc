// The zoo's entries: the mobile networks.
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/zoo_models.h"
#include "models/zoo_registry.h"

namespace cnnbench {

namespace {

// torchvision's efficientnet_b0..b7: B0's stages scaled by width and depth,
// each at its weights' crop size (the paper's B2 is 260) with its own
// dropout; the batches are the suite's.
struct EfficientNetRow {
  double width, depth, dropout;
  int64_t image_size, batch;
};
constexpr EfficientNetRow kEfficientNets[] = {
    {1.0, 1.0, 0.2, 224, 32}, {1.0, 1.1, 0.2, 240, 32}, {1.1, 1.2, 0.3, 288, 32},
    {1.2, 1.4, 0.3, 300, 32}, {1.4, 1.8, 0.4, 380, 16}, {1.6, 2.2, 0.4, 456, 16},
    {1.8, 2.6, 0.5, 528, 8},  {2.0, 3.1, 0.5, 600, 8},
};

template <int kSize>
void EfficientNetOfRow(NetBuilder& b) {
  const EfficientNetRow& row = kEfficientNets[kSize];
  EfficientNet(b, {.width = row.width, .depth = row.depth, .dropout = row.dropout});
}

template <int... kSizes>
std::vector<ModelInfo> EfficientNets(std::integer_sequence<int, kSizes...>) {
  const ModelFunction builds[] = {&EfficientNetOfRow<kSizes>...};
  std::vector<ModelInfo> models;
  for (int i = 0; i < static_cast<int>(std::size(builds)); ++i) {
    const EfficientNetRow& row = kEfficientNets[i];
    models.push_back({.name = absl::StrCat("efficientnet_b", i),
                      .display_name = absl::StrCat("EfficientNet-B", i),
                      .table_order = 90 + i,
                      .image_size = row.image_size,
                      .default_batch = row.batch,
                      .batch_norm = true,
                      .description = absl::StrFormat(
                          "EfficientNet-B%d (width %.1f, depth %.1f, SiLU, squeeze-and-excitation)",
                          i, row.width, row.depth),
                      .build = builds[i]});
  }
  return models;
}

ModelInfo MobileNetV3Info(const char* name, const char* display_name, int table_order,
                          ModelFunction build) {
  return {.name = name,
          .display_name = display_name,
          .table_order = table_order,
          .image_size = 224,
          .default_batch = 32,
          .batch_norm = true,
          .description = absl::StrCat(display_name,
                                      " (inverted residuals, hard-swish, squeeze-and-excitation "
                                      "gated by hard-sigmoid)"),
          .build = build};
}

}  // namespace

std::vector<ModelInfo> MobileModels() {
  std::vector<ModelInfo> models = {
      // tf_cnn_benchmarks' `mobilenet` (tf1_only/mobilenet_v2.py). Definition
      // 1 of the name was MobileNet v1, now `mobilenet_v1`.
      {.name = "mobilenet",
       .display_name = "MobileNetV2",
       .table_order = 18,
       .image_size = 224,
       .default_batch = 32,
       .batch_norm = true,
       .description = "MobileNetV2 (inverted residuals, linear bottlenecks, ReLU6)",
       .build = [](NetBuilder& b) { MobileNetV2(b); },
       .aliases = {"mobilenet_v2"},
       .definition_version = 2},
      {.name = "mobilenet_v1",
       .display_name = "MobileNet v1",
       .table_order = 26,
       .image_size = 224,
       .default_batch = 32,
       .batch_norm = true,
       .description = "MobileNet v1 (depthwise separable)",
       .build = [](NetBuilder& b) { MobileNetV1(b); }},
  };
  for (ModelInfo& info :
       EfficientNets(std::make_integer_sequence<int, std::size(kEfficientNets)>()))
    models.push_back(std::move(info));
  // torchvision's mobilenet_v3_large and mobilenet_v3_small.
  models.push_back(MobileNetV3Info("mobilenet_v3_large", "MobileNetV3-Large", 100, [](NetBuilder& b) {
    MobileNetV3(b, MobileNetV3Size::kLarge);
  }));
  models.push_back(MobileNetV3Info("mobilenet_v3_small", "MobileNetV3-Small", 101, [](NetBuilder& b) {
    MobileNetV3(b, MobileNetV3Size::kSmall);
  }));
  return models;
}

}  // namespace cnnbench
