// The zoo's entries: torchvision's RegNets, each a row of the design
// space's parameters (torchvision's regnet_* constructors), and its
// ConvNeXts, each a row of widths, depths and stochastic depth.
#include <iterator>

#include "absl/strings/str_cat.h"
#include "models/zoo_models.h"
#include "models/zoo_registry.h"

namespace cnnbench {
namespace {

struct RegNetRow {
  const char* name;
  const char* display_name;
  RegNetConfig config;
};
// {depth, w_0, w_a, w_m, group width, squeeze-and-excitation ratio}
constexpr RegNetRow kRegNets[] = {
    {"regnet_x_3_2gf", "RegNetX-3.2GF", {25, 88, 26.31, 2.25, 48, 0.0}},
    {"regnet_y_3_2gf", "RegNetY-3.2GF", {21, 80, 42.63, 2.66, 24, 0.25}},
    {"regnet_y_400mf", "RegNetY-400MF", {16, 48, 27.89, 2.09, 8, 0.25}},
};

template <int kRow>
void RegNetOfRow(NetBuilder& b) {
  RegNet(b, kRegNets[kRow].config);
}

struct ConvNeXtRow {
  const char* name;
  const char* display_name;
  ConvNeXtConfig config;
};
constexpr ConvNeXtRow kConvNeXts[] = {
    {"convnext_tiny", "ConvNeXt-T", {{96, 192, 384, 768}, {3, 3, 9, 3}, 0.1}},
    {"convnext_small", "ConvNeXt-S", {{96, 192, 384, 768}, {3, 3, 27, 3}, 0.4}},
    {"convnext_base", "ConvNeXt-B", {{128, 256, 512, 1024}, {3, 3, 27, 3}, 0.5}},
};

template <int kRow>
void ConvNeXtOfRow(NetBuilder& b) {
  ConvNeXt(b, kConvNeXts[kRow].config);
}

}  // namespace

std::vector<ModelInfo> RegNetModels() {  // and the ConvNeXts
  const ModelFunction builds[] = {&RegNetOfRow<0>, &RegNetOfRow<1>, &RegNetOfRow<2>};
  static_assert(std::size(builds) == std::size(kRegNets));
  std::vector<ModelInfo> models;
  for (int i = 0; i < static_cast<int>(std::size(kRegNets)); ++i) {
    const RegNetRow& row = kRegNets[i];
    models.push_back(
        {.name = row.name,
         .display_name = row.display_name,
         .table_order = 110 + i,
         .image_size = 224,
         .default_batch = 32,
         .batch_norm = true,
         .description = absl::StrCat(row.display_name, " (grouped bottlenecks, group width ",
                                     row.config.group_width,
                                     row.config.se_ratio > 0 ? ", squeeze-and-excitation)" : ")"),
         .build = builds[i]});
  }
  const ModelFunction convnexts[] = {&ConvNeXtOfRow<0>, &ConvNeXtOfRow<1>, &ConvNeXtOfRow<2>};
  static_assert(std::size(convnexts) == std::size(kConvNeXts));
  for (int i = 0; i < static_cast<int>(std::size(kConvNeXts)); ++i) {
    const ConvNeXtRow& row = kConvNeXts[i];
    models.push_back(
        {.name = row.name,
         .display_name = row.display_name,
         .table_order = 120 + i,
         .image_size = 224,
         .default_batch = 32,
         .description = absl::StrCat(row.display_name,
                                     " (7x7 depthwise, layer norm, GELU, layer scale, stochastic "
                                     "depth ",
                                     row.config.stochastic_depth, ")"),
         .build = convnexts[i]});
  }
  return models;
}

}  // namespace cnnbench
