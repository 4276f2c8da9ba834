#include "models/zoo.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status.h"
#include "models/zoo_models.h"

namespace cnnbench {
namespace {

// Image sizes and default batch sizes are tf_cnn_benchmarks' (model_config.py
// and each model's constructor); MobileNet v1 takes its v2 model's 224 / 32.
std::vector<ModelInfo> MakeRegistry() {
  return {
      {.name = "trivial",
       .display_name = "Trivial",
       .table_order = 20,
       .image_size = 227,
       .default_batch = 32,
       .description = "two fully connected layers on the pixels",
       .build = [](NetBuilder& b) { Trivial(b); }},
      {.name = "lenet",
       .display_name = "LeNet",
       .table_order = 19,
       .image_size = 28,
       .default_batch = 32,
       .batch_norm_switch = true,
       .description = "LeNet-5 (TensorFlow's MNIST tutorial network)",
       .build = [](NetBuilder& b) { LeNet(b); }},
      {.name = "alexnet",
       .display_name = "AlexNet",
       .table_order = 4,
       .published = true,
       .image_size = 227,
       .default_batch = 512,
       .batch_norm_switch = true,
       .description = "AlexNet, one-weird-trick variant (no LRN)",
       .build = [](NetBuilder& b) { AlexNet(b); }},
      {.name = "overfeat",
       .display_name = "OverFeat",
       .table_order = 17,
       .image_size = 231,
       .default_batch = 32,
       .batch_norm_switch = true,
       .description = "OverFeat, fast model",
       .build = [](NetBuilder& b) { OverFeat(b); }},
      {.name = "vgg11",
       .display_name = "VGG11",
       .table_order = 15,
       .image_size = 224,
       .default_batch = 64,
       .batch_norm_switch = true,
       .description = "VGG configuration A",
       .build =
           [](NetBuilder& b) {
             Vgg(b, {1, 1, 2, 2, 2});
           }},
      {.name = "vgg16",
       .display_name = "VGG16",
       .table_order = 5,
       .published = true,
       .image_size = 224,
       .default_batch = 64,
       .batch_norm_switch = true,
       .description = "VGG configuration D",
       .build =
           [](NetBuilder& b) {
             Vgg(b, {2, 2, 3, 3, 3});
           }},
      {.name = "vgg19",
       .display_name = "VGG19",
       .table_order = 16,
       .image_size = 224,
       .default_batch = 64,
       .batch_norm_switch = true,
       .description = "VGG configuration E",
       .build =
           [](NetBuilder& b) {
             Vgg(b, {2, 2, 4, 4, 4});
           }},
      {.name = "googlenet",
       .display_name = "GoogLeNet",
       .table_order = 6,
       .image_size = 224,
       .default_batch = 32,
       .batch_norm_switch = true,
       .description = "Inception v1 (no LRN, no auxiliary heads)",
       .build = [](NetBuilder& b) { GoogLeNet(b); }},
      {.name = "inception3",
       .display_name = "InceptionV3",
       .table_order = 1,
       .published = true,
       .image_size = 299,
       .default_batch = 32,
       .batch_norm = true,
       .batch_norm_switch = true,
       .description = "Inception v3 (no auxiliary head)",
       .build = [](NetBuilder& b) { InceptionV3(b); }},
      {.name = "inception4",
       .display_name = "InceptionV4",
       .table_order = 7,
       .image_size = 299,
       .default_batch = 32,
       .batch_norm = true,
       .batch_norm_switch = true,
       .description = "Inception v4",
       .build = [](NetBuilder& b) { InceptionV4(b); }},
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
      {.name = "mobilenet",
       .display_name = "MobileNet",
       .table_order = 18,
       .image_size = 224,
       .default_batch = 32,
       .batch_norm = true,
       .description = "MobileNet v1 (depthwise separable)",
       .build = [](NetBuilder& b) { MobileNetV1(b); }},
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

}  // namespace

const std::vector<ModelInfo>& ListModels() {
  static const std::vector<ModelInfo>* const models = new std::vector<ModelInfo>(MakeRegistry());
  return *models;
}

absl::StatusOr<ModelInfo> FindModel(absl::string_view name) {
  std::vector<absl::string_view> names;
  for (const ModelInfo& info : ListModels()) {
    if (info.name == name) return info;
    names.push_back(info.name);
  }
  return absl::NotFoundError(
      absl::StrCat("unknown model '", name, "'; known models: ", absl::StrJoin(names, ", ")));
}

absl::StatusOr<Graph> BuildModel(absl::string_view name, const ModelOptions& options) {
  absl::StatusOr<ModelInfo> info = FindModel(name);
  if (!info.ok()) return info.status();
  if (options.batch < 0 || options.image_size < 0)
    return absl::InvalidArgumentError(absl::StrCat(name, ": batch (", options.batch,
                                                   ") and image size (", options.image_size,
                                                   ") must be positive, or 0 for the model's own"));
  bool batch_norm = info->batch_norm;
  if (options.batch_norm.has_value() && *options.batch_norm != batch_norm) {
    if (!info->batch_norm_switch)
      return absl::InvalidArgumentError(
          absl::StrCat(name, " has no batch-norm switch: its definition fixes batch norm ",
                       batch_norm ? "on" : "off", " layer by layer"));
    batch_norm = *options.batch_norm;
  }
  const int64_t batch = options.batch > 0 ? options.batch : info->default_batch;
  const int64_t size = options.image_size > 0 ? options.image_size : info->image_size;
  // A batch so large that an activation's element count overflows (1e17
  // images) is out of memory, not a malformed layer: the model at batch 1
  // says how many elements an image's largest activation holds.
  if (batch > (int64_t{1} << 20)) {
    ModelOptions one = options;
    one.batch = 1;
    one.image_size = size;
    ASSIGN_OR_RETURN(const Graph single, BuildModel(name, one));
    int64_t largest = 1;
    for (const Node& node : single.nodes) largest = std::max(largest, node.output.num_elements());
    constexpr int64_t kMostElements = int64_t{1} << 58;  // bytes of 8-byte elements fit in int64
    if (largest > kMostElements / batch)
      return absl::ResourceExhaustedError(absl::StrCat(
          "OOM: ", name, " at batch ", batch, ": its largest activation alone would hold ",
          largest, " x ", batch, " elements, past what any memory holds"));
  }
  NetBuilder b(batch, 3, size, size, options.classes, batch_norm);
  b.set_conv_batch_norm(kTfCnnBatchNorm);
  info->build(b);
  b.Logits();
  absl::StatusOr<Graph> graph = std::move(b).Build();
  if (!graph.ok())
    return absl::Status(graph.status().code(), absl::StrCat(name, " at ", size, "x", size, ": ",
                                                            graph.status().message()));
  return graph;
}

}  // namespace cnnbench
