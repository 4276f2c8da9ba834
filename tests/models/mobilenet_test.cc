// MobileNetV2 (the zoo's `mobilenet`, tf_cnn_benchmarks' name) and its other
// name, against published figures and a count derived here from the
// paper's Table 2; MobileNet v1 as `mobilenet_v1`.
#include <algorithm>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "models/summary.h"
#include "models/zoo.h"

namespace cnnbench {
namespace {

Graph Build(const std::string& model, int64_t classes = 1001) {
  ModelOptions options;
  options.batch = 1;
  options.classes = classes;
  absl::StatusOr<Graph> graph = BuildModel(model, options);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? *std::move(graph) : Graph{};
}

int64_t Parameters(const std::string& model, int64_t classes) {
  return Summarize(Build(model, classes)).parameters;
}

// One image's output, (C, H, W), of the last node whose name starts with `prefix`.
Shape OutputOf(const Graph& graph, absl::string_view prefix) {
  for (auto it = graph.nodes.rbegin(); it != graph.nodes.rend(); ++it)
    if (absl::StartsWith(it->name, prefix))
      return Shape(std::vector<int64_t>(it->output.dims().begin() + 1, it->output.dims().end()));
  ADD_FAILURE() << "no node named " << prefix << "...";
  return Shape{};
}

// The paper's Table 2: (t, c, n, s) per stage.
struct Stage {
  int64_t t, c, n, s;
};
constexpr Stage kTable2[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2},  {6, 64, 4, 2},
                             {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};

TEST(MobileNetTest, ParametersAreTorchvisionsMobileNetV2) {
  // torchvision's mobilenet_v2 at 1000 classes: 3,504,872 parameters (its
  // weights table, MobileNet_V2_Weights.IMAGENET1K_V1 num_params; Keras'
  // MobileNetV2 has the same trainable count).
  EXPECT_EQ(Parameters("mobilenet", 1000), 3'504'872);
  // By hand from Table 2 (BN gamma and beta, convs without bias): the stem
  // conv(3->32) 864 + 64; a block of C in, H = tC hidden, F out: expansion
  // C*H + 2H (none when t = 1), depthwise 9H + 2H, projection H*F + 2F; the
  // last conv(320->1280) + 2,560; logits fc(1280 -> classes) with bias.
  for (const int64_t classes : {int64_t{1000}, int64_t{1001}, int64_t{10}}) {
    int64_t count = 27 * 32 + 2 * 32, channels = 32;
    for (const Stage& stage : kTable2) {
      for (int64_t i = 0; i < stage.n; ++i) {
        const int64_t hidden = channels * stage.t;
        if (stage.t != 1) count += channels * hidden + 2 * hidden;
        count += 9 * hidden + 2 * hidden + hidden * stage.c + 2 * stage.c;
        channels = stage.c;
      }
    }
    count += 320 * 1280 + 2 * 1280 + 1280 * classes + classes;
    EXPECT_EQ(Parameters("mobilenet", classes), count) << classes << " classes";
  }
}

TEST(MobileNetTest, ForwardMultiplyAddsAreThePapers) {
  // Sandler et al. 2018, Table 4: 300 M multiply-adds at 224 px (0.60
  // GFLOPs); within 1% (ours: convs and the logits, as the paper counts).
  absl::StatusOr<Graph> graph = BuildModel("mobilenet", {.batch = 2});
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_NEAR(Summarize(*graph).forward_flops / 2e9, 0.300, 0.01 * 0.300);
}

TEST(MobileNetTest, InvertedResidualBlocks) {
  const Graph graph = Build("mobilenet");
  int depthwise = 0, adds = 0, relu6 = 0, other_activations = 0;
  for (const Node& node : graph.nodes) {
    if (const auto* conv = std::get_if<ConvDesc>(&node.op)) {
      if (conv->groups > 1) {
        EXPECT_EQ(conv->groups, conv->c) << node.name;
        EXPECT_EQ(conv->k, conv->c) << node.name;
        ++depthwise;
      }
    }
    adds += std::holds_alternative<AddDesc>(node.op);
    if (const auto* act = std::get_if<ReluDesc>(&node.op))
      (act->kind == ActivationKind::kRelu6 ? relu6 : other_activations) += 1;
  }
  int blocks = 0, residuals = 0, expanding = 0;
  int64_t channels = 32;
  for (const Stage& stage : kTable2) {
    blocks += stage.n;
    expanding += stage.t != 1 ? stage.n : 0;
    // Every block but the first of a stage, and the first too where it
    // keeps both the size and the channels.
    residuals += stage.n - 1 + (stage.s == 1 && channels == stage.c ? 1 : 0);
    channels = stage.c;
  }
  EXPECT_EQ(blocks, 17);
  EXPECT_EQ(depthwise, blocks);
  EXPECT_EQ(adds, residuals);
  EXPECT_EQ(residuals, 10);
  // ReLU6 after the stem, each expansion, each depthwise and the last conv;
  // none after a projection (linear bottleneck), no ReLU anywhere.
  EXPECT_EQ(relu6, 1 + expanding + blocks + 1);
  EXPECT_EQ(other_activations, 0);
}

TEST(MobileNetTest, StageShapesAndTheHead) {
  const Graph graph = Build("mobilenet");
  EXPECT_EQ(OutputOf(graph, "block0/"), (Shape{16, 112, 112}));
  EXPECT_EQ(OutputOf(graph, "block2/"), (Shape{24, 56, 56}));
  EXPECT_EQ(OutputOf(graph, "block5/"), (Shape{32, 28, 28}));
  EXPECT_EQ(OutputOf(graph, "block9/"), (Shape{64, 14, 14}));
  EXPECT_EQ(OutputOf(graph, "block12/"), (Shape{96, 14, 14}));
  EXPECT_EQ(OutputOf(graph, "block15/"), (Shape{160, 7, 7}));
  EXPECT_EQ(OutputOf(graph, "block16/"), (Shape{320, 7, 7}));
  // 1x1 conv to 1280, spatial mean, dropout 0.2, logits.
  const Node& logits = graph.nodes[graph.logits];
  EXPECT_EQ(std::get<FcDesc>(logits.op).ic, 1280);
  ASSERT_EQ(logits.inputs.size(), 1u);
  const auto* dropout = std::get_if<DropoutDesc>(&graph.nodes[logits.inputs[0]].op);
  ASSERT_NE(dropout, nullptr);
  EXPECT_DOUBLE_EQ(dropout->rate, 0.2);
}

TEST(MobileNetTest, OtherNamesFindTheCanonicalEntry) {
  absl::StatusOr<ModelInfo> v2 = FindModel("mobilenet_v2");
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_EQ(v2->name, "mobilenet");  // cases, JSON and tables use this one
  EXPECT_EQ(v2->definition_version, 2);  // the name meant MobileNet v1 before
  EXPECT_EQ(Parameters("mobilenet_v2", 1000), Parameters("mobilenet", 1000));
  absl::StatusOr<ModelInfo> v1 = FindModel("mobilenet_v1");
  ASSERT_TRUE(v1.ok()) << v1.status();
  EXPECT_EQ(v1->name, "mobilenet_v1");
  EXPECT_EQ(v1->definition_version, 1);
  // An unknown name lists the names and the other names.
  absl::StatusOr<ModelInfo> unknown = FindModel("mobilenet_v3");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  const std::string message(unknown.status().message());
  EXPECT_TRUE(absl::StrContains(message, "unknown model 'mobilenet_v3'")) << message;
  EXPECT_TRUE(absl::StrContains(message, "mobilenet_v2 (mobilenet)")) << message;
  EXPECT_TRUE(absl::StrContains(message, "mobilenet_v1")) << message;
  // No alias is also a model's name, and none is given twice.
  std::vector<std::string> seen;
  for (const ModelInfo& info : ListModels()) seen.push_back(info.name);
  for (const ModelInfo& info : ListModels()) {
    EXPECT_GE(info.definition_version, 1) << info.name;
    for (const std::string& alias : info.aliases) {
      EXPECT_EQ(std::count(seen.begin(), seen.end(), alias), 0) << alias;
      seen.push_back(alias);
    }
  }
}

}  // namespace
}  // namespace cnnbench
