// The zoo's entries: tf_cnn_benchmarks' CIFAR-10 models.
#include "absl/strings/str_cat.h"
#include "models/zoo_registry.h"
#include "models/zoo_models.h"

namespace cnnbench {
namespace {

template <int kBlocks>
void ResNetCifarV2(NetBuilder& b) {
  ResNetCifar(b, kBlocks, ResNetVersion::kV2);
}

// create_resnet<depth>_v2_cifar_model: the pre-activation form, 32 px, batch 128.
ModelInfo CifarV2(int depth, int table_order, ModelFunction build) {
  const int blocks = (depth - 2) / 6;
  return {.name = absl::StrCat("resnet", depth, "_v2"),
          .display_name = absl::StrCat("ResNet-", depth, " v2 (CIFAR)"),
          .table_order = table_order,
          .image_size = 32,
          .default_batch = 128,
          .batch_norm = true,
          .description = absl::StrCat("CIFAR-10 ResNet v2 (pre-activation) of depth ", depth, " (",
                                      blocks, " basic blocks per stage)"),
          .build = build};
}

template <int kLayers, int kGrowth>
void DenseNet(NetBuilder& b) {
  DenseNetCifar(b, kLayers, kGrowth);
}

// create_densenet<depth>_k<growth>_model: 32 px, batch 64; depth 3n + 4
// (3n layers in the blocks, the stem, two transitions and the logits).
ModelInfo DenseNetEntry(int depth, int growth, int table_order, ModelFunction build) {
  return {.name = absl::StrCat("densenet", depth, "_k", growth),
          .display_name = absl::StrCat("DenseNet-", depth, " (k=", growth, ")"),
          .table_order = table_order,
          .image_size = 32,
          .default_batch = 64,
          .batch_norm = true,
          .description = absl::StrCat("CIFAR-10 DenseNet of depth ", depth, ", growth rate ", growth,
                                      " (", (depth - 4) / 3, " layers per block)"),
          .build = build};
}

}  // namespace

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
      CifarV2(20, 80, ResNetCifarV2<3>),
      CifarV2(32, 81, ResNetCifarV2<5>),
      CifarV2(44, 82, ResNetCifarV2<7>),
      CifarV2(56, 83, ResNetCifarV2<9>),
      CifarV2(110, 84, ResNetCifarV2<18>),
      DenseNetEntry(40, 12, 85, DenseNet<12, 12>),
      DenseNetEntry(100, 12, 86, DenseNet<32, 12>),
      DenseNetEntry(100, 24, 87, DenseNet<32, 24>),
      // AlexnetCifar10Model: 32 px, batch 128; its convs follow the switch.
      {.name = "alexnet_cifar",
       .display_name = "AlexNet (CIFAR)",
       .table_order = 88,
       .image_size = 32,
       .default_batch = 128,
       .batch_norm_switch = true,
       .description = "CIFAR-10 AlexNet (TensorFlow's CIFAR-10 tutorial network, with LRN)",
       .build = [](NetBuilder& b) { AlexNetCifar(b); }},
      // TrivialCifar10Model: trivial's two fc layers on 32 x 32 images, batch 32.
      {.name = "trivial_cifar",
       .display_name = "Trivial (CIFAR)",
       .table_order = 89,
       .image_size = 32,
       .default_batch = 32,
       .description = "two fully connected layers on the pixels, CIFAR-10 size",
       .build = [](NetBuilder& b) { Trivial(b); }},
  };
}

}  // namespace cnnbench
