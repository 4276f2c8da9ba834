// The zoo's entries: the NASNet-A networks (tf_cnn_benchmarks' nasnet,
// nasnetlarge, and its CIFAR-10 nasnet as nasnet_cifar).
#include "models/zoo_registry.h"
#include "models/zoo_models.h"

namespace cnnbench {

std::vector<ModelInfo> NasNetModels() {
  return {
      {.name = "nasnet",
       .display_name = "NASNet-A Mobile",
       .table_order = 70,
       .image_size = 224,
       .default_batch = 32,
       .batch_norm = true,
       .description = "NASNet-A mobile (4 @ 1056): 12 normal + 2 reduction cells, ImageNet stem",
       .build = [](NetBuilder& b) { NasNet(b, kNasNetMobile); }},
      {.name = "nasnetlarge",
       .display_name = "NASNet-A Large",
       .table_order = 71,
       .image_size = 331,
       .default_batch = 16,
       .batch_norm = true,
       .description = "NASNet-A large (6 @ 4032): 18 normal + 2 reduction cells, drop-path",
       .build = [](NetBuilder& b) { NasNet(b, kNasNetLarge); }},
      {.name = "nasnet_cifar",
       .display_name = "NASNet-A (CIFAR)",
       .table_order = 72,
       .image_size = 32,
       .default_batch = 32,
       .batch_norm = true,
       .description = "NASNet-A CIFAR-10 (6 @ 768): 18 normal + 2 reduction cells, drop-path",
       .build = [](NetBuilder& b) { NasNet(b, kNasNetCifar); }},
  };
}

}  // namespace cnnbench
