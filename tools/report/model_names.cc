#include "tools/report/model_names.h"

#include <tuple>

namespace cnnbench::report {
namespace {

struct ModelName {
  absl::string_view model;
  absl::string_view display;
};

// Table order. The first five are the published pages' columns.
constexpr ModelName kModels[] = {
    {"inception3", "InceptionV3"},
    {"resnet50", "ResNet-50"},
    {"resnet152", "ResNet-152"},
    {"alexnet", "AlexNet"},
    {"vgg16", "VGG16"},
    {"googlenet", "GoogLeNet"},
    {"inception4", "InceptionV4"},
    {"resnet18", "ResNet-18"},
    {"resnet34", "ResNet-34"},
    {"resnet101", "ResNet-101"},
    {"resnet50_v1.5", "ResNet-50 v1.5"},
    {"resnet50_v2", "ResNet-50 v2"},
    {"resnet101_v2", "ResNet-101 v2"},
    {"resnet152_v2", "ResNet-152 v2"},
    {"vgg11", "VGG11"},
    {"vgg19", "VGG19"},
    {"overfeat", "OverFeat"},
    {"mobilenet", "MobileNet"},
    {"lenet", "LeNet"},
    {"trivial", "Trivial"},
};
constexpr int kModelCount = sizeof(kModels) / sizeof(kModels[0]);

int Rank(absl::string_view model) {
  for (int i = 0; i < kModelCount; ++i) {
    if (kModels[i].model == model) return i;
  }
  return kModelCount;
}

}  // namespace

std::string ModelDisplayName(absl::string_view model) {
  int rank = Rank(model);
  return std::string(rank < kModelCount ? kModels[rank].display : model);
}

bool IsKnownModel(absl::string_view model) { return Rank(model) < kModelCount; }

bool ModelBefore(absl::string_view a, absl::string_view b) {
  return std::make_tuple(Rank(a), a) < std::make_tuple(Rank(b), b);
}

}  // namespace cnnbench::report
