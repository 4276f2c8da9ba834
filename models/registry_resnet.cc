// The zoo's entries: the ImageNet ResNets.
#include "absl/strings/str_cat.h"
#include "models/zoo_registry.h"
#include "models/zoo_models.h"

namespace cnnbench {
namespace {

// TensorFlow's official models' ImageNet block counts by depth
// (imagenet_main.py): basic blocks below 50, bottlenecks from 50.
constexpr std::array<int, 4> OfficialBlocks(int depth) {
  switch (depth) {
    case 18: return {2, 2, 2, 2};
    case 34: return {3, 4, 6, 3};
    case 50: return {3, 4, 6, 3};
    case 101: return {3, 4, 23, 3};
    case 152: return {3, 8, 36, 3};
    default: return {3, 24, 36, 3};  // 200
  }
}

template <int kDepth, ResNetVersion kVersion>
void OfficialResNet(NetBuilder& b) {
  ResNet(b, {.blocks_per_stage = OfficialBlocks(kDepth),
             .bottleneck = kDepth >= 50,
             .version = kVersion,
             .source = ResNetSource::kOfficial});
}

// tf_cnn_benchmarks' official_resnet<depth>[_v2] (official_resnet_model.py):
// 224 px; batch 128 for depth 50, else 32.
ModelInfo Official(int depth, ResNetVersion version, int table_order, ModelFunction build) {
  const bool v2 = version == ResNetVersion::kV2;
  return {.name = absl::StrCat("official_resnet", depth, v2 ? "_v2" : ""),
          .display_name = absl::StrCat("ResNet-", depth, v2 ? " v2" : "", " (official)"),
          .table_order = table_order,
          .image_size = 224,
          .default_batch = depth == 50 ? 128 : 32,
          .batch_norm = true,
          .description = absl::StrCat("ResNet-", depth, v2 ? " v2 (pre-activation" : " v1 (stride in the 3x3 conv",
                                      "), TensorFlow's official model"),
          .build = build};
}

}  // namespace

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
      // tf_cnn_benchmarks' official_resnet*: TensorFlow's official models.
      Official(18, ResNetVersion::kV1, 30, OfficialResNet<18, ResNetVersion::kV1>),
      Official(34, ResNetVersion::kV1, 31, OfficialResNet<34, ResNetVersion::kV1>),
      Official(50, ResNetVersion::kV1, 32, OfficialResNet<50, ResNetVersion::kV1>),
      Official(101, ResNetVersion::kV1, 33, OfficialResNet<101, ResNetVersion::kV1>),
      Official(152, ResNetVersion::kV1, 34, OfficialResNet<152, ResNetVersion::kV1>),
      Official(200, ResNetVersion::kV1, 35, OfficialResNet<200, ResNetVersion::kV1>),
      Official(18, ResNetVersion::kV2, 36, OfficialResNet<18, ResNetVersion::kV2>),
      Official(34, ResNetVersion::kV2, 37, OfficialResNet<34, ResNetVersion::kV2>),
      Official(50, ResNetVersion::kV2, 38, OfficialResNet<50, ResNetVersion::kV2>),
      Official(101, ResNetVersion::kV2, 39, OfficialResNet<101, ResNetVersion::kV2>),
      Official(152, ResNetVersion::kV2, 40, OfficialResNet<152, ResNetVersion::kV2>),
      Official(200, ResNetVersion::kV2, 41, OfficialResNet<200, ResNetVersion::kV2>),
  };
}

}  // namespace cnnbench
