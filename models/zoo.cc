#include "models/zoo.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status.h"
#include "models/zoo_models.h"
#include "models/zoo_registry.h"

namespace cnnbench {
namespace {

// Image sizes and default batch sizes are tf_cnn_benchmarks' (model_config.py
// and each model's constructor); the registry_*.cc files hold the entries,
// one family each, in the order tf_cnn_benchmarks lists them.
std::vector<ModelInfo> MakeRegistry() {
  std::vector<ModelInfo> all;
  for (std::vector<ModelInfo> (*family)() :
       {ClassicModels, ResNetModels, MobileModels, NasNetModels, CifarModels, RegNetModels}) {
    for (ModelInfo& info : family()) all.push_back(std::move(info));
  }
  return all;
}

}  // namespace

const std::vector<ModelInfo>& ListModels() {
  static const std::vector<ModelInfo>* const models = new std::vector<ModelInfo>(MakeRegistry());
  return *models;
}

absl::StatusOr<ModelInfo> FindModel(absl::string_view name) {
  std::vector<std::string> names;
  for (const ModelInfo& info : ListModels()) {
    if (info.name == name) return info;
    names.push_back(info.name);
  }
  // Another name of a model: its entry, under its canonical name.
  std::vector<std::string> aliases;
  for (const ModelInfo& info : ListModels()) {
    for (const std::string& alias : info.aliases) {
      if (alias == name) return info;
      aliases.push_back(absl::StrCat(alias, " (", info.name, ")"));
    }
  }
  return absl::NotFoundError(absl::StrCat("unknown model '", name,
                                          "'; known models: ", absl::StrJoin(names, ", "),
                                          aliases.empty() ? "" : "; other names: ",
                                          absl::StrJoin(aliases, ", ")));
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
