// The model zoo: every model tf_cnn_benchmarks names for ImageNet and
// CIFAR-10 (its CIFAR forms of ImageNet names with `_cifar`), plus MobileNet
// v1, each with the image size and default per-device batch size that suite
// gives it.
//   absl::StatusOr<Graph> g = BuildModel("resnet50", {.batch = 32});
#ifndef CNNBENCH_MODELS_ZOO_H_
#define CNNBENCH_MODELS_ZOO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/optional.h"
#include "models/graph.h"
#include "models/net_builder.h"

namespace cnnbench {

struct ModelOptions {
  int64_t batch = 0;       // 0: the model's default batch size
  int64_t classes = 1001;  // ImageNet plus background, as tf_cnn_benchmarks
  int64_t image_size = 0;  // 0: the model's own (square images)
  // Unset: as the definition has it. Only models whose definition follows the
  // builder-wide switch (tf_cnn_benchmarks' `use_batch_norm`) can change it.
  absl::optional<bool> batch_norm = absl::nullopt;
};

// Writes one architecture into a builder that already holds the images.
using ModelFunction = void (*)(NetBuilder& b);

struct ModelInfo {
  std::string name;          // tf_cnn_benchmarks' name: "resnet50"
  std::string display_name;  // as the published pages write it: "ResNet-50"
  // Its place in the report's tables (1 first): the published page's five
  // columns (InceptionV3, ResNet-50, ResNet-152, AlexNet, VGG16), then the
  // rest of the zoo by family. Distinct, not contiguous: each family keeps a
  // range (mobile 18, 26-29; ResNets 8-14, 30-69; NASNet 70-79; CIFAR 21-25, 80-89;
  // EfficientNet 90-97; MobileNetV3 100-101; RegNet 110-112; ConvNeXt 120-122).
  int table_order = 0;
  bool published = false;  // a column of the published page (and the published preset)
  int64_t image_size = 224;
  int64_t default_batch = 32;
  bool batch_norm = false;         // whether the definition uses batch norm
  bool batch_norm_switch = false;  // whether ModelOptions::batch_norm may change it
  std::string description;
  ModelFunction build = nullptr;
  // Other names FindModel() accepts for it (tf_cnn_benchmarks' or a paper's).
  std::vector<std::string> aliases = {};
  // Raised whenever the network behind the name changes, so that results of
  // the old and the new network are never merged nor compared.
  int definition_version = 1;
};

// Every model, in the order tf_cnn_benchmarks lists them.
const std::vector<ModelInfo>& ListModels();
// The model's entry, by its name or one of its aliases (the entry keeps its
// canonical name, which case names, JSON and tables use), or NotFound
// listing the known names and the aliases.
absl::StatusOr<ModelInfo> FindModel(absl::string_view name);
// The training graph of a model: images (N,3,S,S) -> ... -> logits -> loss.
absl::StatusOr<Graph> BuildModel(absl::string_view name, const ModelOptions& options = {});

}  // namespace cnnbench

#endif  // CNNBENCH_MODELS_ZOO_H_
