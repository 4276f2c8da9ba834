// The zoo's entries: the mobile networks.
#include "models/zoo_registry.h"
#include "models/zoo_models.h"

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
  };
}

}  // namespace cnnbench
