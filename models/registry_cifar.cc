// The zoo's entries: tf_cnn_benchmarks' CIFAR-10 models.
#include "models/zoo_registry.h"
#include "models/zoo_models.h"

namespace cnnbench {

std::vector<ModelInfo> CifarModels() {
  return {
      // tf_cnn_benchmarks' CIFAR-10 models (32 x 32, batch 128): a
      // convergence run of them takes seconds.
      {.name = "resnet20",
       .display_name = "ResNet-20 (CIFAR)",
       .table_order = 21,
       .image_size = 32,
       .default_batch = 128,
       .batch_norm = true,
       .description = "CIFAR-10 ResNet v1 of depth 20 (3 basic blocks per stage)",
       .build = [](NetBuilder& b) { ResNetCifar(b, 3); }},
      {.name = "resnet32",
       .display_name = "ResNet-32 (CIFAR)",
       .table_order = 22,
       .image_size = 32,
       .default_batch = 128,
       .batch_norm = true,
       .description = "CIFAR-10 ResNet v1 of depth 32 (5 basic blocks per stage)",
       .build = [](NetBuilder& b) { ResNetCifar(b, 5); }},
      {.name = "resnet44",
       .display_name = "ResNet-44 (CIFAR)",
       .table_order = 23,
       .image_size = 32,
       .default_batch = 128,
       .batch_norm = true,
       .description = "CIFAR-10 ResNet v1 of depth 44 (7 basic blocks per stage)",
       .build = [](NetBuilder& b) { ResNetCifar(b, 7); }},
      {.name = "resnet56",
       .display_name = "ResNet-56 (CIFAR)",
       .table_order = 24,
       .image_size = 32,
       .default_batch = 128,
       .batch_norm = true,
       .description = "CIFAR-10 ResNet v1 of depth 56 (9 basic blocks per stage)",
       .build = [](NetBuilder& b) { ResNetCifar(b, 9); }},
      {.name = "resnet110",
       .display_name = "ResNet-110 (CIFAR)",
       .table_order = 25,
       .image_size = 32,
       .default_batch = 128,
       .batch_norm = true,
       .description = "CIFAR-10 ResNet v1 of depth 110 (18 basic blocks per stage)",
       .build = [](NetBuilder& b) { ResNetCifar(b, 18); }},
  };
}

}  // namespace cnnbench
