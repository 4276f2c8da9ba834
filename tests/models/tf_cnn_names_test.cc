// Every model name tf_cnn_benchmarks knows builds a model here, under the
// name a user moving from it types. The list is written out from
// tensorflow/benchmarks' scripts/tf_cnn_benchmarks/models/model_config.py:
// its ImageNet and CIFAR-10 maps and the TF1-only registrations
// (register_tf1_models), less `ncf` (not a CNN) and the other data sets'
// models (ssd300 on COCO, deepspeech2 on LibriSpeech, trivial's SSD form).
// A CIFAR-10 name that is also an ImageNet name takes the suffix `_cifar`
// (the data set is not a setting of a run, so one name must mean one network).
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "models/zoo.h"

namespace cnnbench {
namespace {

struct TfCnnName {
  const char* dataset;  // "imagenet" or "cifar10"
  const char* name;     // as model_config.py writes it
};

// model_config.py's _model_name_to_imagenet_model, then its
// _model_name_to_cifar_model, then register_tf1_models' imagenet and cifar10
// registrations.
constexpr TfCnnName kTfCnnNames[] = {
    {"imagenet", "vgg11"},
    {"imagenet", "vgg16"},
    {"imagenet", "vgg19"},
    {"imagenet", "lenet"},
    {"imagenet", "googlenet"},
    {"imagenet", "overfeat"},
    {"imagenet", "alexnet"},
    {"imagenet", "trivial"},
    {"imagenet", "inception3"},
    {"imagenet", "inception4"},
    {"imagenet", "official_resnet18_v2"},
    {"imagenet", "official_resnet34_v2"},
    {"imagenet", "official_resnet50_v2"},
    {"imagenet", "official_resnet101_v2"},
    {"imagenet", "official_resnet152_v2"},
    {"imagenet", "official_resnet200_v2"},
    {"imagenet", "official_resnet18"},
    {"imagenet", "official_resnet34"},
    {"imagenet", "official_resnet50"},
    {"imagenet", "official_resnet101"},
    {"imagenet", "official_resnet152"},
    {"imagenet", "official_resnet200"},
    {"imagenet", "resnet50"},
    {"imagenet", "resnet50_v1.5"},
    {"imagenet", "resnet50_v2"},
    {"imagenet", "resnet101"},
    {"imagenet", "resnet101_v2"},
    {"imagenet", "resnet152"},
    {"imagenet", "resnet152_v2"},
    {"cifar10", "alexnet"},
    {"cifar10", "resnet20"},
    {"cifar10", "resnet20_v2"},
    {"cifar10", "resnet32"},
    {"cifar10", "resnet32_v2"},
    {"cifar10", "resnet44"},
    {"cifar10", "resnet44_v2"},
    {"cifar10", "resnet56"},
    {"cifar10", "resnet56_v2"},
    {"cifar10", "resnet110"},
    {"cifar10", "resnet110_v2"},
    {"cifar10", "trivial"},
    {"cifar10", "densenet40_k12"},
    {"cifar10", "densenet100_k12"},
    {"cifar10", "densenet100_k24"},
    {"imagenet", "mobilenet"},
    {"imagenet", "nasnet"},
    {"imagenet", "nasnetlarge"},
    {"cifar10", "nasnet"},
};

std::set<std::string> ImageNetNames() {
  std::set<std::string> names;
  for (const TfCnnName& n : kTfCnnNames)
    if (std::string(n.dataset) == "imagenet") names.insert(n.name);
  return names;
}

// The zoo's name for a tf_cnn_benchmarks name.
std::string ZooName(const TfCnnName& n) {
  const bool clashes = std::string(n.dataset) == "cifar10" && ImageNetNames().count(n.name) > 0;
  return clashes ? absl::StrCat(n.name, "_cifar") : std::string(n.name);
}

TEST(TfCnnNamesTest, EveryNameBuildsAModel) {
  for (const TfCnnName& n : kTfCnnNames) {
    const std::string name = ZooName(n);
    absl::StatusOr<ModelInfo> info = FindModel(name);
    ASSERT_TRUE(info.ok()) << n.dataset << " " << n.name << ": " << info.status();
    EXPECT_EQ(info->name, name) << "an alias, not the model's own name";
    absl::StatusOr<Graph> graph = BuildModel(name, {.batch = 1});
    EXPECT_TRUE(graph.ok()) << name << ": " << graph.status();
  }
}

TEST(TfCnnNamesTest, CifarModelsTakeCifarImagesAndImageNetModelsDoNot) {
  // model_config.py picks the network by the data set; here the name does,
  // so each name's image size must be its data set's.
  for (const TfCnnName& n : kTfCnnNames) {
    absl::StatusOr<ModelInfo> info = FindModel(ZooName(n));
    ASSERT_TRUE(info.ok()) << info.status();
    if (std::string(n.dataset) == "cifar10")
      EXPECT_EQ(info->image_size, 32) << info->name;
    else if (info->name != "lenet")  // in the ImageNet map, at MNIST's 28 px (Lenet5Model)
      EXPECT_GT(info->image_size, 32) << info->name;
  }
}

TEST(TfCnnNamesTest, ListedNamesAreDistinctAfterTheSuffix) {
  std::set<std::string> seen;
  for (const TfCnnName& n : kTfCnnNames)
    EXPECT_TRUE(seen.insert(ZooName(n)).second) << "twice: " << ZooName(n);
  EXPECT_EQ(seen.count("alexnet_cifar") + seen.count("trivial_cifar") + seen.count("nasnet_cifar"),
            3u);
}

TEST(TfCnnNamesTest, MobilenetIsVersionTwoAndVersionOneKeepsAName) {
  // tf_cnn_benchmarks' `mobilenet` is MobileNetV2 (tf1_only/mobilenet_v2.py).
  absl::StatusOr<ModelInfo> v2 = FindModel("mobilenet_v2");
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_EQ(v2->name, "mobilenet");
  EXPECT_GE(v2->definition_version, 2) << "the name meant MobileNet v1 before";
  absl::StatusOr<ModelInfo> v1 = FindModel("mobilenet_v1");
  ASSERT_TRUE(v1.ok()) << v1.status();
  EXPECT_EQ(v1->name, "mobilenet_v1");
}

TEST(TfCnnNamesTest, UnknownNameListsTheKnownOnes) {
  absl::StatusOr<ModelInfo> info = FindModel("ssd300");
  ASSERT_FALSE(info.ok());
  EXPECT_NE(info.status().message().find("nasnetlarge"), std::string::npos) << info.status();
  EXPECT_NE(info.status().message().find("official_resnet200_v2"), std::string::npos)
      << info.status();
}

}  // namespace
}  // namespace cnnbench
