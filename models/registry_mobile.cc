// The zoo's entries: the mobile networks.
#include "models/zoo_registry.h"
#include "models/zoo_models.h"

namespace cnnbench {

std::vector<ModelInfo> MobileModels() {
  return {
      {.name = "mobilenet",
       .display_name = "MobileNet",
       .table_order = 18,
       .image_size = 224,
       .default_batch = 32,
       .batch_norm = true,
       .description = "MobileNet v1 (depthwise separable)",
       .build = [](NetBuilder& b) { MobileNetV1(b); }},
  };
}

}  // namespace cnnbench
