// MobileNetV3, the RegNets and the ConvNeXts against torchvision's
// mobilenet_v3_*, regnet_* and convnext_*: parameters at 1000 classes exactly, forward multiply-adds
// within 2% of torchvision's (its weights' `_ops`), each network's blocks
// (squeeze-and-excitation multiplies, residual adds, gates), and each
// family memorising a batch on oneDNN (fp32; bf16 where the CPU has it).
#include <algorithm>
#include <map>
#include <tuple>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "models/summary.h"
#include "models/zoo.h"
#include "tests/models/learn_batch.h"

namespace cnnbench {
namespace {

struct Published {
  const char* name;
  int64_t parameters;  // torchvision's, 1000 classes
  double giga_macs;    // torchvision's weights' _ops, at 224 px
};

constexpr Published kTorchvision[] = {
    {"mobilenet_v3_large", 5'483'032, 0.217}, {"mobilenet_v3_small", 2'542'856, 0.057},
    {"regnet_x_3_2gf", 15'296'552, 3.177},    {"regnet_y_3_2gf", 19'436'338, 3.176},
    {"regnet_y_400mf", 4'344'144, 0.402},     {"convnext_tiny", 28'589'128, 4.456},
    {"convnext_small", 50'223'688, 8.684},    {"convnext_base", 88'591'464, 15.355},
};

TEST(TorchvisionZooTest, ParametersAndMultiplyAddsAreTorchvisions) {
  for (const Published& p : kTorchvision) {
    absl::StatusOr<ModelInfo> info = FindModel(p.name);
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->image_size, 224) << p.name;
    absl::StatusOr<Graph> graph = BuildModel(p.name, {.batch = 1, .classes = 1000});
    ASSERT_TRUE(graph.ok()) << p.name << ": " << graph.status();
    const ModelSummary summary = Summarize(*graph);
    EXPECT_EQ(summary.parameters, p.parameters) << p.name;
    const double giga_macs = summary.forward_flops / 2e9;
    EXPECT_NEAR(giga_macs, p.giga_macs, 0.02 * p.giga_macs) << p.name;
  }
}

// What a network is made of: channel multiplies, adds, and activations by kind.
struct Parts {
  int multiplies = 0, adds = 0;
  std::map<ActivationKind, int> activations;
};
Parts PartsOf(const std::string& name) {
  absl::StatusOr<Graph> graph = BuildModel(name, {.batch = 2});
  EXPECT_TRUE(graph.ok()) << name << ": " << graph.status();
  Parts parts;
  if (!graph.ok()) return parts;
  for (const Node& node : graph->nodes) {
    if (node.kind != Node::Kind::kOp) continue;
    parts.multiplies += std::holds_alternative<ChannelMulDesc>(node.op);
    parts.adds += std::holds_alternative<AddDesc>(node.op);
    if (const auto* relu = std::get_if<ReluDesc>(&node.op)) ++parts.activations[relu->kind];
  }
  return parts;
}

// torchvision's bneck tables: large has squeeze-and-excitation in 8 of its
// 15 blocks and 10 residuals, small in 9 of 11 and 6 residuals; each gate a
// hard-sigmoid.
TEST(TorchvisionZooTest, MobileNetV3BlocksAreTorchvisions) {
  const Parts large = PartsOf("mobilenet_v3_large");
  EXPECT_EQ(large.multiplies, 8);
  EXPECT_EQ(large.adds, 10);
  EXPECT_EQ(large.activations.at(ActivationKind::kHardSigmoid), 8);
  // stem + 9 hard-swish blocks (2 convs each, block 6's expansion among
  // them) + the last conv + the classifier's hidden layer.
  EXPECT_EQ(large.activations.at(ActivationKind::kHardSwish), 1 + 2 * 9 + 1 + 1);
  const Parts small = PartsOf("mobilenet_v3_small");
  EXPECT_EQ(small.multiplies, 9);
  EXPECT_EQ(small.adds, 6);
  EXPECT_EQ(small.activations.at(ActivationKind::kHardSigmoid), 9);
  EXPECT_EQ(small.activations.at(ActivationKind::kHardSwish), 1 + 2 * 8 + 1 + 1);
}

// One residual add (then a ReLU) per block; RegNetY gates every block with
// a sigmoid, RegNetX none. Blocks: torchvision's stage depths (2, 6, 15, 2),
// (2, 5, 13, 1) and (1, 3, 6, 6).
TEST(TorchvisionZooTest, RegNetBlocksAreTorchvisions) {
  for (const auto& [name, blocks, gated] :
       {std::tuple{"regnet_x_3_2gf", 25, false}, std::tuple{"regnet_y_3_2gf", 21, true},
        std::tuple{"regnet_y_400mf", 16, true}}) {
    const Parts parts = PartsOf(name);
    EXPECT_EQ(parts.adds, blocks) << name;
    EXPECT_EQ(parts.multiplies, gated ? blocks : 0) << name;
    EXPECT_EQ(parts.activations.count(ActivationKind::kSigmoid) > 0
                  ? parts.activations.at(ActivationKind::kSigmoid)
                  : 0,
              gated ? blocks : 0)
        << name;
  }
}

// ConvNeXt: layer norm after the stem, in every block, before each
// downsampling and before the logits; GELU once a block; drop-path on
// every block but the first, its rate rising to the row's at the last.
TEST(TorchvisionZooTest, ConvNeXtBlocksAreTorchvisions) {
  for (const auto& [name, blocks, last_rate] :
       {std::tuple{"convnext_tiny", 18, 0.1}, std::tuple{"convnext_small", 36, 0.4},
        std::tuple{"convnext_base", 36, 0.5}}) {
    absl::StatusOr<Graph> graph = BuildModel(name, {.batch = 2});
    ASSERT_TRUE(graph.ok()) << name << ": " << graph.status();
    int norms = 0, drops = 0, adds = 0;
    double last_keep = 1.0;
    for (const Node& node : graph->nodes) {
      if (node.kind != Node::Kind::kOp) continue;
      norms += std::holds_alternative<LayerNormDesc>(node.op);
      adds += std::holds_alternative<AddDesc>(node.op);
      if (const auto* drop = std::get_if<DropPathDesc>(&node.op)) {
        ++drops;
        EXPECT_LT(drop->keep, last_keep) << node.name;
        last_keep = drop->keep;
      }
    }
    EXPECT_EQ(norms, 1 + blocks + 3 + 1) << name;
    EXPECT_EQ(adds, blocks) << name;
    EXPECT_EQ(drops, blocks - 1) << name;
    EXPECT_NEAR(last_keep, 1.0 - last_rate, 1e-12) << name;
    EXPECT_EQ(PartsOf(name).activations.at(ActivationKind::kGelu), blocks) << name;
  }
}

// Each network memorising one batch of 4 at 32 px on oneDNN (dropout
// drawing as in training): a loss after the first well below it.
class TorchvisionZooLearnTest : public ::testing::TestWithParam<const char*> {};

TEST_P(TorchvisionZooLearnTest, LearnsABatch) {
  models_test::ExpectLearnsABatch(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Models, TorchvisionZooLearnTest,
                         ::testing::Values("mobilenet_v3_large", "mobilenet_v3_small",
                                           "regnet_x_3_2gf", "regnet_y_400mf", "convnext_tiny"));

}  // namespace
}  // namespace cnnbench
