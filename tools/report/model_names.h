// Display names and column order of the models, as the published pages
// write them (InceptionV3, ResNet-50, ...), keyed by tf_cnn_benchmarks' names:
// lookups over bench's one table (bench/suite/names.h ModelDisplayNames()).
#ifndef CNNBENCH_TOOLS_REPORT_MODEL_NAMES_H_
#define CNNBENCH_TOOLS_REPORT_MODEL_NAMES_H_

#include <string>

#include "absl/strings/string_view.h"

namespace cnnbench::report {

// "resnet50" -> "ResNet-50"; an unknown name is returned unchanged.
std::string ModelDisplayName(absl::string_view model);

// False for names outside tf_cnn_benchmarks' zoo.
bool IsKnownModel(absl::string_view model);

// True when `a` comes before `b` in tables: the published order first
// (InceptionV3, ResNet-50, ResNet-152, AlexNet, VGG16), then the rest of the
// zoo by family (a model's cases of another definition, "mobilenet
// (definition 1)", beside its own), then unknown names alphabetically.
bool ModelBefore(absl::string_view a, absl::string_view b);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_MODEL_NAMES_H_
