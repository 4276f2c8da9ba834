// The zoo's entries: the classic ImageNet networks (trivial to Inception v4).
#include "models/zoo_registry.h"
#include "models/zoo_models.h"

namespace cnnbench {

std::vector<ModelInfo> ClassicModels() {
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
  };
}

}  // namespace cnnbench
