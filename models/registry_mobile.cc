// The zoo's entries: the mobile networks.
#include "models/zoo_models.h"
#include "models/zoo_registry.h"

namespace cnnbench {

std::vector<ModelInfo> MobileModels() {
  return {
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
      // torchvision's efficientnet_b0..b7: B0's stages scaled by width and
      // depth, each at its own image size with its own dropout.
      {.name = "efficientnet_b0",
       .display_name = "EfficientNet-B0",
       .table_order = 90,
       .image_size = 224,
       .default_batch = 32,
       .batch_norm = true,
       .description = "EfficientNet-B0 (width 1.0, depth 1.0, SiLU, squeeze-and-excitation)",
       .build =
           [](NetBuilder& b) { EfficientNet(b, {.width = 1.0, .depth = 1.0, .dropout = 0.2}); }},
      {.name = "efficientnet_b1",
       .display_name = "EfficientNet-B1",
       .table_order = 91,
       .image_size = 240,
       .default_batch = 32,
       .batch_norm = true,
       .description = "EfficientNet-B1 (width 1.0, depth 1.1, SiLU, squeeze-and-excitation)",
       .build =
           [](NetBuilder& b) { EfficientNet(b, {.width = 1.0, .depth = 1.1, .dropout = 0.2}); }},
      {.name = "efficientnet_b2",
       .display_name = "EfficientNet-B2",
       .table_order = 92,
       // torchvision's crop for its B2 weights (the paper's is 260).
       .image_size = 288,
       .default_batch = 32,
       .batch_norm = true,
       .description = "EfficientNet-B2 (width 1.1, depth 1.2, SiLU, squeeze-and-excitation)",
       .build =
           [](NetBuilder& b) { EfficientNet(b, {.width = 1.1, .depth = 1.2, .dropout = 0.3}); }},
      {.name = "efficientnet_b3",
       .display_name = "EfficientNet-B3",
       .table_order = 93,
       .image_size = 300,
       .default_batch = 32,
       .batch_norm = true,
       .description = "EfficientNet-B3 (width 1.2, depth 1.4, SiLU, squeeze-and-excitation)",
       .build =
           [](NetBuilder& b) { EfficientNet(b, {.width = 1.2, .depth = 1.4, .dropout = 0.3}); }},
      {.name = "efficientnet_b4",
       .display_name = "EfficientNet-B4",
       .table_order = 94,
       .image_size = 380,
       .default_batch = 16,
       .batch_norm = true,
       .description = "EfficientNet-B4 (width 1.4, depth 1.8, SiLU, squeeze-and-excitation)",
       .build =
           [](NetBuilder& b) { EfficientNet(b, {.width = 1.4, .depth = 1.8, .dropout = 0.4}); }},
      {.name = "efficientnet_b5",
       .display_name = "EfficientNet-B5",
       .table_order = 95,
       .image_size = 456,
       .default_batch = 16,
       .batch_norm = true,
       .description = "EfficientNet-B5 (width 1.6, depth 2.2, SiLU, squeeze-and-excitation)",
       .build =
           [](NetBuilder& b) { EfficientNet(b, {.width = 1.6, .depth = 2.2, .dropout = 0.4}); }},
      {.name = "efficientnet_b6",
       .display_name = "EfficientNet-B6",
       .table_order = 96,
       .image_size = 528,
       .default_batch = 8,
       .batch_norm = true,
       .description = "EfficientNet-B6 (width 1.8, depth 2.6, SiLU, squeeze-and-excitation)",
       .build =
           [](NetBuilder& b) { EfficientNet(b, {.width = 1.8, .depth = 2.6, .dropout = 0.5}); }},
      {.name = "efficientnet_b7",
       .display_name = "EfficientNet-B7",
       .table_order = 97,
       .image_size = 600,
       .default_batch = 8,
       .batch_norm = true,
       .description = "EfficientNet-B7 (width 2.0, depth 3.1, SiLU, squeeze-and-excitation)",
       .build =
           [](NetBuilder& b) { EfficientNet(b, {.width = 2.0, .depth = 3.1, .dropout = 0.5}); }},
  };
}

}  // namespace cnnbench
