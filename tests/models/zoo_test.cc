// The zoo against independently known figures: tf_cnn_benchmarks' names,
// image and batch sizes; torchvision's parameter counts where the
// definitions agree, hand-derived counts where they differ; published
// multiply-add counts; the stage shapes of the definitions' comments.
#include "models/zoo.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "models/summary.h"

namespace cnnbench {
namespace {

int64_t Parameters(const std::string& model, int64_t classes) {
  ModelOptions options;
  options.batch = 1;
  options.classes = classes;
  absl::StatusOr<Graph> graph = BuildModel(model, options);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? Summarize(*graph).parameters : -1;
}

// Forward multiply-adds per image at the model's own image size.
double GigaMacs(const std::string& model) {
  absl::StatusOr<Graph> graph = BuildModel(model, {.batch = 2});
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? Summarize(*graph).forward_flops / 2e9 : -1;
}

// One image's output, (C, H, W), of the node named `name`, or of a scope's
// last node when `name` ends in '/'.
Shape OutputOf(const Graph& graph, absl::string_view name) {
  const bool scope = absl::EndsWith(name, "/");
  for (auto it = graph.nodes.rbegin(); it != graph.nodes.rend(); ++it)
    if (scope ? absl::StartsWith(it->name, name) : it->name == name)
      return Shape(std::vector<int64_t>(it->output.dims().begin() + 1, it->output.dims().end()));
  ADD_FAILURE() << "no node named " << name;
  return Shape{};
}

Graph Build(const std::string& model, ModelOptions options = {.batch = 1}) {
  absl::StatusOr<Graph> graph = BuildModel(model, options);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? *std::move(graph) : Graph{};
}

TEST(ZooTest, NamesImageSizesAndBatchesAreTfCnnBenchmarks) {
  struct Expected {
    const char* name;
    int64_t image_size, batch;
  };
  // model_config.py's ImageNet names; sizes and batches from each model's
  // constructor (ResNet-18/34: ResnetModel's default of 32).
  const Expected expected[] = {
      {"trivial", 227, 32},
      {"lenet", 28, 32},
      {"alexnet", 227, 512},
      {"overfeat", 231, 32},
      {"vgg11", 224, 64},
      {"vgg16", 224, 64},
      {"vgg19", 224, 64},
      {"googlenet", 224, 32},
      {"inception3", 299, 32},
      {"inception4", 299, 32},
      {"resnet18", 224, 32},
      {"resnet34", 224, 32},
      {"resnet50", 224, 64},
      {"resnet50_v1.5", 224, 64},
      {"resnet50_v2", 224, 64},
      {"resnet101", 224, 32},
      {"resnet101_v2", 224, 32},
      {"resnet152", 224, 32},
      {"resnet152_v2", 224, 32},
      // official_resnet_model.py: batch 128 for depth 50, else 32.
      {"official_resnet18", 224, 32},
      {"official_resnet34", 224, 32},
      {"official_resnet50", 224, 128},
      {"official_resnet101", 224, 32},
      {"official_resnet152", 224, 32},
      {"official_resnet200", 224, 32},
      {"official_resnet18_v2", 224, 32},
      {"official_resnet34_v2", 224, 32},
      {"official_resnet50_v2", 224, 128},
      {"official_resnet101_v2", 224, 32},
      {"official_resnet152_v2", 224, 32},
      {"official_resnet200_v2", 224, 32},
      {"mobilenet", 224, 32},
      {"mobilenet_v1", 224, 32},  // not tf_cnn_benchmarks': its mobilenet is v2
      // Not tf_cnn_benchmarks': torchvision's efficientnet_b0..b7 at its
      // weights' crop sizes; the batches are the suite's own.
      {"efficientnet_b0", 224, 32},
      {"efficientnet_b1", 240, 32},
      {"efficientnet_b2", 288, 32},
      {"efficientnet_b3", 300, 32},
      {"efficientnet_b4", 380, 16},
      {"efficientnet_b5", 456, 16},
      {"efficientnet_b6", 528, 8},
      {"efficientnet_b7", 600, 8},
      // torchvision's mobilenet_v3_*, at its weights' crop size.
      {"mobilenet_v3_large", 224, 32},
      {"mobilenet_v3_small", 224, 32},
      // NasnetModel, NasnetLargeModel, NasnetCifarModel (tf_cnn's CIFAR `nasnet`).
      {"nasnet", 224, 32},
      {"nasnetlarge", 331, 16},
      {"nasnet_cifar", 32, 32},
      // The CIFAR-10 models (ResnetCifar10Model: 32 px, batch 128).
      {"resnet20", 32, 128},
      {"resnet32", 32, 128},
      {"resnet44", 32, 128},
      {"resnet56", 32, 128},
      {"resnet110", 32, 128},
      {"resnet20_v2", 32, 128},
      {"resnet32_v2", 32, 128},
      {"resnet44_v2", 32, 128},
      {"resnet56_v2", 32, 128},
      {"resnet110_v2", 32, 128},
      // DensenetCifar10Model: batch 64; AlexnetCifar10Model: 128;
      // TrivialCifar10Model: 32.
      {"densenet40_k12", 32, 64},
      {"densenet100_k12", 32, 64},
      {"densenet100_k24", 32, 64},
      {"alexnet_cifar", 32, 128},
      {"trivial_cifar", 32, 32},
      // torchvision's regnet_*, at its weights' crop size.
      {"regnet_x_3_2gf", 224, 32},
      {"regnet_y_3_2gf", 224, 32},
      {"regnet_y_400mf", 224, 32},
      // torchvision's convnext_*, at its weights' crop size.
      {"convnext_tiny", 224, 32},
      {"convnext_small", 224, 32},
      {"convnext_base", 224, 32},
  };
  const std::vector<ModelInfo>& models = ListModels();
  ASSERT_EQ(models.size(), std::size(expected));
  for (size_t i = 0; i < models.size(); ++i) {
    EXPECT_EQ(models[i].name, expected[i].name);
    EXPECT_EQ(models[i].image_size, expected[i].image_size) << models[i].name;
    EXPECT_EQ(models[i].default_batch, expected[i].batch) << models[i].name;
    Graph graph = Build(models[i].name, {});
    EXPECT_EQ(graph.nodes[graph.images].output,
              (Shape{expected[i].batch, 3, expected[i].image_size, expected[i].image_size}));
    EXPECT_EQ(graph.nodes[graph.logits].output, (Shape{expected[i].batch, 1001}));
  }
}

TEST(ZooTest, ParameterCountsMatchTorchvision) {
  // torchvision's published counts (1000 classes; BN gamma and beta, convs
  // without bias before BN, fc with bias). ResNet v1 moves the stride but
  // not a weight, so resnet50/101/152 equal torchvision's v1.5 counts too.
  const std::map<std::string, int64_t> torchvision = {
      {"resnet18", 11'689'512},      {"resnet34", 21'797'672},  {"resnet50", 25'557'032},
      {"resnet50_v1.5", 25'557'032}, {"resnet101", 44'549'160}, {"resnet152", 60'192'808},
      {"vgg11", 132'863'336},        {"vgg16", 138'357'544},    {"vgg19", 143'667'240},
  };
  for (const auto& [model, count] : torchvision) EXPECT_EQ(Parameters(model, 1000), count) << model;
}

TEST(ZooTest, ParameterCountsDerivedFromTheDefinitions) {
  // By hand, 1000 classes. conv(C->K, RxS) = C*K*R*S (+K bias, or +K beta
  // when batch norm without gamma follows, +2K with gamma); fc(I->O) = I*O+O.
  //
  // trivial: fc(227*227*3 -> 1) 154,588 + fc(1 -> 4096) 8,192 + logits
  //   fc(4096 -> 1000) 4,097,000 = 4,259,780.
  // lenet: conv(3->32,5x5) 2,432 + conv(32->64,5x5) 51,264 + fc(3136->512)
  //   1,606,144 + logits fc(512->1000) 513,000 = 2,172,840.
  // alexnet (conv 64,192,384,384,256 with bias; torchvision's has 384,256,256):
  //   23,296 + 307,392 + 663,936 + 1,327,488 + 884,992 + fc(9216->4096)
  //   37,752,832 + fc(4096->4096) 16,781,312 + logits 4,097,000 = 61,838,248.
  // overfeat: conv 34,944 + 614,656 + 1,180,160 + 4,719,616 + 9,438,208 +
  //   fc(36864->3072) 113,249,280 + fc(3072->4096) 12,587,008 + logits
  //   4,097,000 = 145,920,872.
  // googlenet (convs with bias, no BN; torchvision's has BN and aux heads):
  //   stem 9,472 + 4,160 + 110,784 = 124,416; modules 3a 163,696, 3b
  //   388,736, 4a 376,176, 4b 449,160, 4c 510,104, 4d 605,376, 4e 868,352,
  //   5a 1,043,456, 5b 1,444,080; logits fc(1024->1000) 1,025,000
  //   = 6,998,552.
  // inception3 (BN without gamma after every conv, no aux head): stem
  //   172,272; a 255,440 + 276,976 + 284,656; b 1,152,640; c 1,295,872 +
  //   1,689,280 + 1,689,280 + 2,140,032; d 1,697,024; e 5,041,344 +
  //   6,073,536; logits fc(2048->1000) 2,049,000 = 23,817,352 (Keras'
  //   InceptionV3 trainable count, the same architecture).
  // inception4 (likewise): stem 28,640; sa 55,392; sb 188,864; sc 331,968;
  //   4 x a 317,024; ra 2,305,056; 7 x b 2,933,984; rb 2,745,856; 3 x c
  //   4,549,824; logits fc(1536->1000) 1,537,000 = 42,648,232.
  // resnetN_v2: the v1 count less the gammas of the BNs that became bare
  //   pre-activations (beta only, no gamma) and of the BNs after the
  //   projection and last convs, which v2 drops (with no bias). Per block
  //   (C in, K out, W = K/4): beta C + [C*K if C != K] + C*W + 2W + 9W^2 + 2W
  //   + W*K; stem 9,408 + 128; final BN beta 2,048; logits 2,049,000.
  //   resnet50_v2 = 25,534,312; resnet101_v2 = 44,509,032; resnet152_v2 =
  //   60,137,320.
  // mobilenet_v1 (1.0/224; BN with gamma): conv(3->32) 864 + 64; per
  //   separable block (C -> F) 9C + 2C + C*F + 2F; 13 blocks 3,206,112 in
  //   all; logits fc(1024->1000) 1,025,000 = 4,231,976 (Keras' MobileNet
  //   trainable count).
  const std::map<std::string, int64_t> by_hand = {
      {"trivial", 4'259'780},       {"lenet", 2'172'840},        {"alexnet", 61'838'248},
      {"overfeat", 145'920'872},    {"googlenet", 6'998'552},    {"inception3", 23'817'352},
      {"inception4", 42'648'232},   {"resnet50_v2", 25'534'312}, {"resnet101_v2", 44'509'032},
      {"resnet152_v2", 60'137'320}, {"mobilenet_v1", 4'231'976},
  };
  for (const auto& [model, count] : by_hand) EXPECT_EQ(Parameters(model, 1000), count) << model;
}

TEST(ZooTest, CifarResNetParameterCountsAreTfCnnBenchmarks) {
  // ResnetCifar10Model (v1), 10 classes, by hand from its definition: the
  // stem conv(3->16) 432 + BN 32; stage 1: 2n conv(16->16) 2304 + BN 32;
  // stage 2: conv(16->32) 4608 + BN 64, then 2n-1 conv(32->32) 9216 + BN 64;
  // stage 3: conv(32->64) 18432 + BN 128, then 2n-1 conv(64->64) 36864 +
  // BN 128; the zero-padded shortcuts have none; fc(64->10) 650. (The
  // paper's 0.27M, 0.46M, 0.66M, 0.85M and 1.7M.)
  auto count = [](int64_t n) {
    return 464 + 2 * n * 2336 + 4672 + (2 * n - 1) * 9280 + 18560 + (2 * n - 1) * 36992 + 650;
  };
  const std::map<std::string, int64_t> expected = {
      {"resnet20", 269'722}, {"resnet32", 464'154},    {"resnet44", 658'586},
      {"resnet56", 853'018}, {"resnet110", 1'727'962},
  };
  const std::map<std::string, int64_t> blocks = {
      {"resnet20", 3}, {"resnet32", 5}, {"resnet44", 7}, {"resnet56", 9}, {"resnet110", 18}};
  for (const auto& [model, params] : expected) {
    EXPECT_EQ(count(blocks.at(model)), params) << model;
    EXPECT_EQ(Parameters(model, 10), params) << model;
    // 6n + 2 weighted layers: 6n + 1 convs and the logits.
    Graph graph = Build(model, {.classes = 10});
    int convs = 0, pads = 0;
    for (const Node& node : graph.nodes) {
      convs += std::holds_alternative<ConvDesc>(node.op) && node.kind == Node::Kind::kOp;
      pads += std::holds_alternative<ChannelPadDesc>(node.op) && node.kind == Node::Kind::kOp;
    }
    EXPECT_EQ(convs, 6 * blocks.at(model) + 1) << model;
    EXPECT_EQ(pads, 2) << model;  // where 16 -> 32 and 32 -> 64
    EXPECT_EQ(graph.nodes[graph.logits].output, (Shape{128, 10})) << model;
  }
}

TEST(ZooTest, EveryModelIsCounted) {
  // 1001 classes (the default) add one logit row: the features plus a bias.
  for (const ModelInfo& info : ListModels()) {
    Graph graph = Build(info.name);
    const auto& logits = std::get<FcDesc>(graph.nodes[graph.logits].op);
    EXPECT_EQ(Parameters(info.name, 1001) - Parameters(info.name, 1000), logits.ic + 1)
        << info.name;
  }
}

TEST(ZooTest, ForwardMultiplyAddsMatchPublishedFigures) {
  // v1.5 is the 4.1 GMACs ResNet-50 (torchvision's 4.09 G).
  EXPECT_NEAR(GigaMacs("resnet50_v1.5"), 4.1, 0.01 * 4.1);
  // v1 runs the first 1x1 of stages 2-4 at the subsampled size: each is
  // 56*56*256*128 MACs in v1.5 and a quarter of it in v1, so v1 is 3 * 3/4 *
  // 25.69 M = 231.2 M fewer (3.86 G: the paper's "3.8 x 10^9").
  EXPECT_NEAR(GigaMacs("resnet50_v1.5") - GigaMacs("resnet50"),
              3 * 0.75 * 56 * 56 * 256 * 128 / 1e9, 1e-9);
  EXPECT_NEAR(GigaMacs("resnet50"), 3.86, 0.01 * 3.86);
  // He et al. 2015, Table 1 (ResNet-18 1.8, 34 3.6, 101 7.6, 152 11.3).
  EXPECT_NEAR(GigaMacs("resnet18"), 1.8, 0.01 * 1.8);
  EXPECT_NEAR(GigaMacs("resnet34"), 3.6, 0.02 * 3.6);
  EXPECT_NEAR(GigaMacs("resnet101"), 7.6, 0.01 * 7.6);
  EXPECT_NEAR(GigaMacs("resnet152"), 11.3, 0.01 * 11.3);
  // VGG-16 15.5 G and Inception v3 5.7 G as usually quoted; MobileNet v1
  // 569 M (Howard et al. 2017).
  EXPECT_NEAR(GigaMacs("vgg16"), 15.5, 0.01 * 15.5);
  EXPECT_NEAR(GigaMacs("inception3"), 5.7, 0.01 * 5.7);
  EXPECT_NEAR(GigaMacs("mobilenet_v1"), 0.569, 0.01 * 0.569);
}

TEST(ZooTest, InceptionV3StageShapes) {
  Graph graph = Build("inception3");
  EXPECT_EQ(OutputOf(graph, "incept_v3_a0/"), (Shape{256, 35, 35}));
  EXPECT_EQ(OutputOf(graph, "incept_v3_a2/"), (Shape{288, 35, 35}));
  EXPECT_EQ(OutputOf(graph, "incept_v3_b0/"), (Shape{768, 17, 17}));
  EXPECT_EQ(OutputOf(graph, "incept_v3_c3/"), (Shape{768, 17, 17}));
  EXPECT_EQ(OutputOf(graph, "incept_v3_d0/"), (Shape{1280, 8, 8}));
  EXPECT_EQ(OutputOf(graph, "incept_v3_e1/"), (Shape{2048, 8, 8}));
}

TEST(ZooTest, InceptionV4StageShapes) {
  Graph graph = Build("inception4");
  EXPECT_EQ(OutputOf(graph, "incept_v4_sa0/"), (Shape{160, 73, 73}));
  EXPECT_EQ(OutputOf(graph, "incept_v4_sb0/"), (Shape{192, 71, 71}));
  EXPECT_EQ(OutputOf(graph, "incept_v4_sc0/"), (Shape{384, 35, 35}));
  EXPECT_EQ(OutputOf(graph, "incept_v4_a3/"), (Shape{384, 35, 35}));
  EXPECT_EQ(OutputOf(graph, "incept_v4_ra0/"), (Shape{1024, 17, 17}));
  EXPECT_EQ(OutputOf(graph, "incept_v4_b6/"), (Shape{1024, 17, 17}));
  EXPECT_EQ(OutputOf(graph, "incept_v4_rb0/"), (Shape{1536, 8, 8}));
  EXPECT_EQ(OutputOf(graph, "incept_v4_c2/"), (Shape{1536, 8, 8}));
}

TEST(ZooTest, GoogLeNetStageShapes) {
  Graph graph = Build("googlenet");
  EXPECT_EQ(OutputOf(graph, "maxpool1"), (Shape{192, 28, 28}));
  EXPECT_EQ(OutputOf(graph, "incept_v1_0/"), (Shape{256, 28, 28}));
  EXPECT_EQ(OutputOf(graph, "incept_v1_1/"), (Shape{480, 28, 28}));
  EXPECT_EQ(OutputOf(graph, "incept_v1_5/"), (Shape{528, 14, 14}));
  EXPECT_EQ(OutputOf(graph, "incept_v1_6/"), (Shape{832, 14, 14}));
  EXPECT_EQ(OutputOf(graph, "incept_v1_8/"), (Shape{1024, 7, 7}));
}

TEST(ZooTest, ResNetStageShapes) {
  for (const char* model : {"resnet18", "resnet50", "resnet50_v1.5", "resnet152_v2"}) {
    SCOPED_TRACE(model);
    Graph graph = Build(model);
    const int64_t expansion = absl::StartsWith(model, "resnet18") ? 1 : 4;
    EXPECT_EQ(OutputOf(graph, "maxpool0"), (Shape{64, 56, 56}));
    EXPECT_EQ(OutputOf(graph, "stage1/"), (Shape{64 * expansion, 56, 56}));
    EXPECT_EQ(OutputOf(graph, "stage2/"), (Shape{128 * expansion, 28, 28}));
    EXPECT_EQ(OutputOf(graph, "stage3/"), (Shape{256 * expansion, 14, 14}));
    EXPECT_EQ(OutputOf(graph, "stage4/"), (Shape{512 * expansion, 7, 7}));
  }
}

TEST(ZooTest, ResNetStridePlacement) {
  // The first block of stage 2: v1 subsamples in its first 1x1 conv, v1.5
  // in its 3x3, v2 in its first 1x1 (after the pre-activation).
  auto first_strides = [](const std::string& model) {
    Graph graph = Build(model);
    std::vector<int64_t> strides;  // of the main path's convs, shortcut excluded
    for (const Node& node : graph.nodes)
      if (absl::StartsWith(node.name, "stage2/block0/"))
        if (const auto* conv = std::get_if<ConvDesc>(&node.op))
          if (!(conv->h.kernel == 1 && conv->k == 512 && conv->c == 256))
            strides.push_back(conv->h.stride);
    return strides;
  };
  EXPECT_EQ(first_strides("resnet50"), (std::vector<int64_t>{2, 1, 1}));
  EXPECT_EQ(first_strides("resnet50_v1.5"), (std::vector<int64_t>{1, 2, 1}));
  EXPECT_EQ(first_strides("resnet50_v2"), (std::vector<int64_t>{2, 1, 1}));
}

TEST(ZooTest, OtherStageShapes) {
  Graph alexnet = Build("alexnet");
  EXPECT_EQ(OutputOf(alexnet, "conv0"), (Shape{64, 55, 55}));
  EXPECT_EQ(OutputOf(alexnet, "maxpool0"), (Shape{64, 27, 27}));
  EXPECT_EQ(OutputOf(alexnet, "maxpool1"), (Shape{192, 13, 13}));
  EXPECT_EQ(OutputOf(alexnet, "maxpool2"), (Shape{256, 6, 6}));
  Graph overfeat = Build("overfeat");
  EXPECT_EQ(OutputOf(overfeat, "conv0"), (Shape{96, 56, 56}));
  EXPECT_EQ(OutputOf(overfeat, "conv1"), (Shape{256, 24, 24}));
  EXPECT_EQ(OutputOf(overfeat, "maxpool2"), (Shape{1024, 6, 6}));
  Graph vgg = Build("vgg19");
  EXPECT_EQ(OutputOf(vgg, "stage1/"), (Shape{64, 112, 112}));
  EXPECT_EQ(OutputOf(vgg, "stage5/"), (Shape{512, 7, 7}));
  Graph lenet = Build("lenet");
  EXPECT_EQ(OutputOf(lenet, "maxpool1"), (Shape{64, 7, 7}));
  Graph mobilenet = Build("mobilenet_v1");
  EXPECT_EQ(OutputOf(mobilenet, "relu0"), (Shape{32, 112, 112}));
  EXPECT_EQ(OutputOf(mobilenet, "relu2"), (Shape{64, 112, 112}));
  EXPECT_EQ(OutputOf(mobilenet, "relu26"), (Shape{1024, 7, 7}));
}

TEST(ZooTest, MobileNetV1IsDepthwiseSeparable) {
  Graph graph = Build("mobilenet_v1");
  int depthwise = 0;
  for (const Node& node : graph.nodes)
    if (const auto* conv = std::get_if<ConvDesc>(&node.op))
      if (conv->groups > 1) {
        EXPECT_EQ(conv->groups, conv->c);
        EXPECT_EQ(conv->k, conv->c);
        ++depthwise;
      }
  EXPECT_EQ(depthwise, 13);
}

TEST(ZooTest, AlexNetAndGoogLeNetHaveNoLrn) {
  for (const char* model : {"alexnet", "googlenet"})
    for (const Node& node : Build(model).nodes)
      EXPECT_FALSE(std::holds_alternative<LrnDesc>(node.op)) << model << " " << node.name;
}

TEST(ZooTest, UnknownModelListsTheKnownNames) {
  absl::StatusOr<Graph> graph = BuildModel("resnet51");
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kNotFound);
  const std::string message(graph.status().message());
  EXPECT_TRUE(absl::StrContains(message, "resnet51")) << message;
  for (const ModelInfo& info : ListModels())
    EXPECT_TRUE(absl::StrContains(message, info.name)) << message;
}

TEST(ZooTest, BatchNormSwitch) {
  auto count = [](const Graph& graph, auto predicate) {
    int n = 0;
    for (const Node& node : graph.nodes) n += predicate(node) ? 1 : 0;
    return n;
  };
  auto is_bn = [](const Node& node) { return std::holds_alternative<BatchNormDesc>(node.op); };
  auto is_biased_conv = [](const Node& node) {
    const auto* conv = std::get_if<ConvDesc>(&node.op);
    return conv != nullptr && conv->bias;
  };
  // VGG-16 with the switch on: 13 convs, each followed by BN and without bias.
  Graph vgg_bn = Build("vgg16", {.batch = 1, .batch_norm = true});
  EXPECT_EQ(count(vgg_bn, is_bn), 13);
  EXPECT_EQ(count(vgg_bn, is_biased_conv), 0);
  EXPECT_EQ(count(Build("vgg16"), is_bn), 0);
  // Inception v3 with it off: biases instead of BN.
  Graph inception = Build("inception3", {.batch = 1, .batch_norm = false});
  EXPECT_EQ(count(inception, is_bn), 0);
  EXPECT_EQ(count(inception, is_biased_conv), 94);
  // Asking a model for what it already has is fine; ResNet cannot drop it.
  EXPECT_TRUE(BuildModel("resnet50", {.batch = 1, .batch_norm = true}).ok());
  absl::StatusOr<Graph> resnet = BuildModel("resnet50", {.batch = 1, .batch_norm = false});
  ASSERT_FALSE(resnet.ok());
  EXPECT_EQ(resnet.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ZooTest, BatchNormFollowsTfCnnBenchmarksConfig) {
  // ResNet's conv BNs: gamma, epsilon 1e-5, decay 0.9. v2's pre-activations
  // and Inception's: the builder defaults (no gamma, 1e-3, 0.999).
  Graph resnet = Build("resnet50_v2");
  int with_gamma = 0, without_gamma = 0;
  for (const Node& node : resnet.nodes) {
    if (const auto* bn = std::get_if<BatchNormDesc>(&node.op)) {
      if (bn->scale) {
        ++with_gamma;
        EXPECT_EQ(bn->epsilon, 1e-5);
        EXPECT_EQ(bn->momentum, 0.9);
      } else {
        ++without_gamma;
        EXPECT_EQ(bn->epsilon, 1e-3);
        EXPECT_EQ(bn->momentum, 0.999);
      }
    }
  }
  EXPECT_EQ(with_gamma, 1 + 2 * 16);  // the stem and two per block
  EXPECT_EQ(without_gamma, 16 + 1);   // a pre-activation per block and the last
  for (const Node& node : Build("inception3").nodes) {
    if (const auto* bn = std::get_if<BatchNormDesc>(&node.op)) {
      EXPECT_FALSE(bn->scale);
    }
  }
}

TEST(ZooTest, OptionsOverrideBatchClassesAndImageSize) {
  Graph graph = Build("resnet50", {.batch = 3, .classes = 1000, .image_size = 128});
  EXPECT_EQ(graph.nodes[graph.images].output, (Shape{3, 3, 128, 128}));
  EXPECT_EQ(OutputOf(graph, "stage4/"), (Shape{2048, 4, 4}));
  EXPECT_EQ(graph.nodes[graph.logits].output, (Shape{3, 1000}));
  // The final pools are global, so other sizes keep the feature count.
  Graph googlenet = Build("googlenet", {.batch = 1, .image_size = 160});
  EXPECT_EQ(std::get<FcDesc>(googlenet.nodes[googlenet.logits].op).ic, 1024);
  // Too small for the architecture: the error names the model and the layer.
  absl::StatusOr<Graph> tiny = BuildModel("inception3", {.batch = 1, .image_size = 32});
  ASSERT_FALSE(tiny.ok());
  EXPECT_TRUE(absl::StrContains(tiny.status().message(), "inception3 at 32x32")) << tiny.status();
  EXPECT_FALSE(BuildModel("vgg16", {.batch = -1}).ok());
  EXPECT_FALSE(BuildModel("vgg16", {.classes = 0}).ok());
}

}  // namespace
}  // namespace cnnbench

namespace cnnbench {
namespace {

// The report's tables read each model's display name and place from the
// zoo: every model has a distinct display name and a distinct place 1..N,
// and the five published columns come first, in the published page's order.
// A batch whose activations' element counts overflow is out of memory
// (as a batch that merely does not fit is), never a layer with a garbled
// field; a large batch that does not overflow still builds.
TEST(ZooTest, ABatchPastAnyMemoryIsOutOfMemoryNotAGarbledLayer) {
  for (int64_t batch : {int64_t{100000000000000000}, int64_t{1} << 62}) {
    ModelOptions options;
    options.batch = batch;
    for (const char* model : {"lenet", "resnet50"}) {
      absl::StatusOr<Graph> graph = BuildModel(model, options);
      ASSERT_FALSE(graph.ok()) << model << " " << batch;
      EXPECT_EQ(graph.status().code(), absl::StatusCode::kResourceExhausted) << graph.status();
      EXPECT_TRUE(absl::StartsWith(graph.status().message(), "OOM: ")) << graph.status();
    }
  }
  ModelOptions large;
  large.batch = int64_t{1} << 24;
  absl::StatusOr<Graph> graph = BuildModel("lenet", large);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->batch, int64_t{1} << 24);
}

TEST(ZooTest, DisplayNamesAndTablePlacesAreOnePerModel) {
  const std::vector<ModelInfo>& models = ListModels();
  std::set<std::string> displays;
  std::set<int> places;
  std::map<int, std::string> published;
  for (const ModelInfo& m : models) {
    EXPECT_FALSE(m.display_name.empty()) << m.name;
    EXPECT_NE(m.display_name, m.name) << m.name;
    EXPECT_TRUE(displays.insert(m.display_name).second) << "twice: " << m.display_name;
    EXPECT_TRUE(places.insert(m.table_order).second) << m.name << " shares place " << m.table_order;
    EXPECT_GE(m.table_order, 1) << m.name;
    if (m.published) published[m.table_order] = m.name;
  }
  const std::map<int, std::string> columns = {
      {1, "inception3"}, {2, "resnet50"}, {3, "resnet152"}, {4, "alexnet"}, {5, "vgg16"}};
  EXPECT_EQ(published, columns);
}

}  // namespace
}  // namespace cnnbench
