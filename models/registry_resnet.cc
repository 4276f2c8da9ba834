// The zoo's entries: the ImageNet ResNets.
#include "models/zoo_registry.h"
#include "models/zoo_models.h"

namespace cnnbench {

std::vector<ModelInfo> ResNetModels() {
  return {
      {.name = "resnet18",
       .display_name = "ResNet-18",
       .table_order = 8,
       .image_size = 224,
       .default_batch = 32,
       .batch_norm = true,
       .description = "ResNet-18 (basic blocks)",
       .build =
           [](NetBuilder& b) {
             ResNet(b, {.blocks_per_stage = {2, 2, 2, 2}, .bottleneck = false});
           }},
      {.name = "resnet34",
       .display_name = "ResNet-34",
       .table_order = 9,
       .image_size = 224,
       .default_batch = 32,
       .batch_norm = true,
       .description = "ResNet-34 (basic blocks)",
       .build =
           [](NetBuilder& b) {
             ResNet(b, {.blocks_per_stage = {3, 4, 6, 3}, .bottleneck = false});
           }},
      {.name = "resnet50",
       .display_name = "ResNet-50",
       .table_order = 2,
       .published = true,
       .image_size = 224,
       .default_batch = 64,
       .batch_norm = true,
       .description = "ResNet-50 v1 (stride in the first 1x1 conv)",
       .build =
           [](NetBuilder& b) {
             ResNet(b, {.blocks_per_stage = {3, 4, 6, 3}});
           }},
      {.name = "resnet50_v1.5",
       .display_name = "ResNet-50 v1.5",
       .table_order = 11,
       .image_size = 224,
       .default_batch = 64,
       .batch_norm = true,
       .description = "ResNet-50 v1.5 (stride in the 3x3 conv)",
       .build =
           [](NetBuilder& b) {
             ResNet(b, {.blocks_per_stage = {3, 4, 6, 3}, .version = ResNetVersion::kV1_5});
           }},
      {.name = "resnet50_v2",
       .display_name = "ResNet-50 v2",
       .table_order = 12,
       .image_size = 224,
       .default_batch = 64,
       .batch_norm = true,
       .description = "ResNet-50 v2 (pre-activation)",
       .build =
           [](NetBuilder& b) {
             ResNet(b, {.blocks_per_stage = {3, 4, 6, 3}, .version = ResNetVersion::kV2});
           }},
      {.name = "resnet101",
       .display_name = "ResNet-101",
       .table_order = 10,
       .image_size = 224,
       .default_batch = 32,
       .batch_norm = true,
       .description = "ResNet-101 v1",
       .build =
           [](NetBuilder& b) {
             ResNet(b, {.blocks_per_stage = {3, 4, 23, 3}});
           }},
      {.name = "resnet101_v2",
       .display_name = "ResNet-101 v2",
       .table_order = 13,
       .image_size = 224,
       .default_batch = 32,
       .batch_norm = true,
       .description = "ResNet-101 v2 (pre-activation)",
       .build =
           [](NetBuilder& b) {
             ResNet(b, {.blocks_per_stage = {3, 4, 23, 3}, .version = ResNetVersion::kV2});
           }},
      {.name = "resnet152",
       .display_name = "ResNet-152",
       .table_order = 3,
       .published = true,
       .image_size = 224,
       .default_batch = 32,
       .batch_norm = true,
       .description = "ResNet-152 v1",
       .build =
           [](NetBuilder& b) {
             ResNet(b, {.blocks_per_stage = {3, 8, 36, 3}});
           }},
      {.name = "resnet152_v2",
       .display_name = "ResNet-152 v2",
       .table_order = 14,
       .image_size = 224,
       .default_batch = 32,
       .batch_norm = true,
       .description = "ResNet-152 v2 (pre-activation)",
       .build =
           [](NetBuilder& b) {
             ResNet(b, {.blocks_per_stage = {3, 8, 36, 3}, .version = ResNetVersion::kV2});
           }},
  };
}

}  // namespace cnnbench
