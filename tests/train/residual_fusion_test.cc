// The residual add run inside the convolution before it (inference plans:
// FuseResidualAdd, ConvDesc::residual): which adds the pass absorbs and
// which it must leave, that the plan writes the convolution's output over
// the shortcut's buffer only where nothing later reads the shortcut, and
// that the fused plan gives the unfused plan's logits on both CPU backends
// (bf16 too where the CPU has it), a shortcut read after the convolution
// included.
#include <cmath>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "models/net_builder.h"
#include "models/zoo.h"
#include "tests/train/small_cnn.h"
#include "train/fusion.h"
#include "train/inference.h"

namespace cnnbench {
namespace {

using train_test::CpuBackend;
using train_test::CpuPlanCase;
using train_test::CpuPlanCaseName;
using train_test::CpuPlanCases;
using train_test::ExpectClose;
using train_test::kClasses;
using train_test::kSize;
using train_test::RandomImages;
using train_test::RunLogits;
using train_test::RunsBf16;

// How the identity block's shortcut is read: by the block's first conv and
// its add (kDead once the add has run); also by a second add after the
// block (kReadLater: read after the convolution that absorbs the block's
// add); or by that convolution itself, the block's only one (kConvInput).
enum class Shortcut { kDead, kReadLater, kConvInput };

// A stem (conv/bn/relu), an identity block (conv/bn/relu, conv/bn, add,
// relu), a projection block (a 1x1 stride-2 conv/bn shortcut beside it),
// then avg pool and logits: two adds, each after a convolution's batch
// norm.
Graph ResidualBlocks(Shortcut shortcut_use = Shortcut::kDead, int batch = 4) {
  NetBuilder b(batch, 3, kSize, kSize, kClasses);
  b.Conv(8, {3, 3}, {.batch_norm = 1});
  const int shortcut = b.top();
  if (shortcut_use != Shortcut::kConvInput) b.Conv(8, {3, 3}, {.batch_norm = 1});
  b.Conv(8, {3, 3}, {.activation = Activation::kNone, .batch_norm = 1});
  b.Add(b.top(), shortcut);
  b.Activate(Activation::kRelu);
  if (shortcut_use == Shortcut::kReadLater) b.Add(b.top(), shortcut);
  const int block = b.top();
  b.Conv(16, {1, 1}, {.stride = 2, .activation = Activation::kNone, .batch_norm = 1});
  const int projection = b.top();
  b.set_top(block);
  b.Conv(16, {3, 3}, {.stride = 2, .batch_norm = 1});
  b.Conv(16, {3, 3}, {.activation = Activation::kNone, .batch_norm = 1});
  b.Add(b.top(), projection);
  b.Activate(Activation::kRelu);
  b.AvgPool({3, 3}, {.stride = 2, .padding = Padding::kSame});
  b.Logits();
  auto graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return *graph;
}

int CountAdds(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes)
    n += node.kind == Node::Kind::kOp && std::holds_alternative<AddDesc>(node.op);
  return n;
}

const auto kAll = [](const OpDesc&) { return true; };

// The inference plan's passes in order: fold, ReLUs, then the adds.
FusedGraph InferenceFusion(const Graph& graph) {
  const FusedGraph folded = FoldBatchNormForInference(graph, kAll);
  const FusedGraph relu = Compose(folded, FuseRelu(folded.graph, kAll, PlanUse::kForwardOnly));
  return Compose(relu, FuseResidualAdd(relu.graph, kAll));
}

TEST(FuseResidualAddTest, EachAddAfterAFoldedConvRunsInThatConv) {
  const Graph graph = ResidualBlocks();
  const FusedGraph fused = InferenceFusion(graph);
  EXPECT_EQ(CountAdds(graph), 2);
  EXPECT_EQ(CountAdds(fused.graph), 0);
  ASSERT_EQ(fused.node_of.size(), graph.nodes.size());
  ASSERT_EQ(fused.origin.size(), fused.graph.nodes.size());
  int residual = 0;
  for (size_t k = 0; k < fused.graph.nodes.size(); ++k) {
    const Node& node = fused.graph.nodes[k];
    for (int in : node.inputs) EXPECT_LT(in, static_cast<int>(k)) << node.name;
    const auto* conv = std::get_if<ConvDesc>(&node.op);
    if (conv == nullptr || !conv->residual) continue;
    ++residual;
    // y = relu(conv(x) + b + shortcut): the add's ReLU, after the bias of the fold.
    EXPECT_EQ(conv->activation, ActivationKind::kRelu) << node.name;
    EXPECT_TRUE(conv->bias) << node.name;
    ASSERT_EQ(node.inputs.size(), 2u) << node.name;
    EXPECT_NE(node.name.find("+add"), std::string::npos) << node.name;
    EXPECT_EQ(fused.graph.nodes[node.inputs[1]].output, node.output) << node.name;
  }
  EXPECT_EQ(residual, 2);
  // The given graph's adds and their ReLUs are computed by those convs,
  // and the shortcut each conv reads is what the add read.
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& add = graph.nodes[i];
    if (add.kind != Node::Kind::kOp || !std::holds_alternative<AddDesc>(add.op)) continue;
    const Node& by = fused.graph.nodes[fused.node_of[i]];
    ASSERT_TRUE(std::holds_alternative<ConvDesc>(by.op)) << by.name;
    const int shortcut = by.inputs[1];
    EXPECT_TRUE(shortcut == fused.node_of[add.inputs[0]] ||
                shortcut == fused.node_of[add.inputs[1]])
        << by.name;
    EXPECT_NE(fused.node_of[i], shortcut) << by.name;
  }
}

TEST(FuseResidualAddTest, LeavesWhatItMustNotFuse) {
  const Graph graph = ResidualBlocks();
  // Unfolded, each add reads a batch norm: nothing to absorb it.
  EXPECT_EQ(FuseResidualAdd(graph, kAll).fused, 0);
  // A backend that runs no residual convolution.
  const FusedGraph folded = FoldBatchNormForInference(graph, kAll);
  const FusedGraph refused = FuseResidualAdd(folded.graph, [](const OpDesc& op) {
    const auto* conv = std::get_if<ConvDesc>(&op);
    return conv == nullptr || !conv->residual;
  });
  EXPECT_EQ(refused.fused, 0);
  EXPECT_EQ(CountAdds(refused.graph), 2);
  // The second add of `read_later` reads an add, not a conv: it stays.
  EXPECT_EQ(CountAdds(InferenceFusion(ResidualBlocks(Shortcut::kReadLater)).graph), 1);

  // A conv with a ReLU epilogue before the add (relu(conv) + x is not
  // relu(conv + x)), and a conv another layer reads too: neither absorbs it.
  NetBuilder b(2, 8, 6, 6, kClasses);
  const int images = b.top();
  b.Conv(8, {3, 3}, {.batch_norm = 0});  // conv + ReLU
  b.Add(b.top(), images);
  const int first = b.top();
  b.Conv(8, {3, 3}, {.activation = Activation::kNone, .batch_norm = 0});
  const int shared = b.top();
  b.Add(shared, first);
  b.Add(b.top(), shared);
  b.Logits();
  auto graph2 = std::move(b).Build();
  ASSERT_TRUE(graph2.ok()) << graph2.status();
  const FusedGraph relu = FuseRelu(*graph2, kAll, PlanUse::kForwardOnly);
  EXPECT_EQ(FuseResidualAdd(relu.graph, kAll).fused, 0);
}

class ResidualPlanTest : public ::testing::TestWithParam<CpuPlanCase> {};

// Fused (the default) against conv_add = false, the plan before it, on the
// same initial weights: the same logits; with the shortcut read later, or
// read by the convolution itself, the add still absorbed but y not written
// over the shortcut there.
TEST_P(ResidualPlanTest, GivesTheUnfusedLogitsAndWritesOverOnlyWhatIsDead) {
  auto backend = CpuBackend(GetParam().backend);
  ASSERT_NE(backend, nullptr);
  const bool bf16 = GetParam().precision == Precision::kBf16;
  InferOptions fused;
  fused.precision = GetParam().precision;
  fused.fold_batch_norm = true;
  if (bf16 && !RunsBf16(*backend)) GTEST_SKIP() << "no bf16 on this CPU";
  InferOptions apart = fused;
  apart.conv_add = false;
  for (Shortcut use : {Shortcut::kDead, Shortcut::kReadLater, Shortcut::kConvInput}) {
    const Graph graph = ResidualBlocks(use);
    const std::string what = use == Shortcut::kDead        ? "blocks"
                             : use == Shortcut::kReadLater ? "shortcut read later"
                                                           : "shortcut the conv's input";
    auto with = Inferencer::Compile(graph, backend.get(), fused);
    ASSERT_TRUE(with.ok()) << what << ": " << with.status();
    auto without = Inferencer::Compile(graph, backend.get(), apart);
    ASSERT_TRUE(without.ok()) << what << ": " << without.status();
    const StepPlan& plan = (*with)->step_plan();
    EXPECT_EQ((*with)->conv_residual_adds(), 2) << what;
    EXPECT_EQ((*without)->conv_residual_adds(), 0) << what;
    EXPECT_EQ(plan.layers.size() + 2, (*without)->step_plan().layers.size()) << what;
    // (oneDNN may read the shortcut through a reorder into a buffer of the
    // conv's own, which it may then write over: the reference reorders none.)
    if (use == Shortcut::kDead || GetParam().backend == std::string("reference")) {
      EXPECT_EQ(plan.outputs_in_place, use == Shortcut::kDead ? 2 : 1) << what;
    } else {
      EXPECT_GE(plan.outputs_in_place, 1) << what;
    }
    EXPECT_EQ((*without)->step_plan().outputs_in_place, 0) << what;
    for (const auto& layer : plan.layers) {
      const auto* conv = std::get_if<ConvDesc>(&plan.graph.nodes[layer->node].op);
      if (layer->y_over_input < 0) continue;
      ASSERT_TRUE(conv != nullptr && conv->residual) << layer->name;
      EXPECT_EQ(layer->y, layer->inputs[layer->y_over_input].buffer) << layer->name;
      EXPECT_NE(layer->y, layer->inputs[0].buffer) << layer->name;  // not over what it reads
    }
    const std::vector<float> images = RandomImages(graph, 5);
    const std::vector<float> want = RunLogits(**without, images);
    ExpectClose(RunLogits(**with, images), want, bf16 ? 3e-2 : 1e-5, what);
    // Run again: the shortcut written over is computed afresh each run.
    ExpectClose(RunLogits(**with, images), want, bf16 ? 3e-2 : 1e-5, what + ", run twice");
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, ResidualPlanTest, ::testing::ValuesIn(CpuPlanCases()),
                         CpuPlanCaseName);

// resnet50_v1.5 at 32 px on oneDNN: each of its 16 blocks' adds runs in the
// block's last convolution, over the shortcut's buffer, and the logits are
// the unfused plan's.
TEST(ResidualPlanZooTest, Resnet50RunsEveryAddInItsLastConv) {
  auto graph = BuildModel("resnet50_v1.5", {.batch = 1, .image_size = 32});
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto backend = CpuBackend("onednn");
  ASSERT_NE(backend, nullptr);
  InferOptions fused;
  fused.fold_batch_norm = true;
  InferOptions apart = fused;
  apart.conv_add = false;
  auto with = Inferencer::Compile(*graph, backend.get(), fused);
  ASSERT_TRUE(with.ok()) << with.status();
  auto without = Inferencer::Compile(*graph, backend.get(), apart);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ((*with)->conv_residual_adds(), 16);
  EXPECT_EQ((*with)->step_plan().outputs_in_place, 16);
  EXPECT_EQ(CountAdds((*with)->step_plan().graph), 0);
  const std::vector<float> images = RandomImages(*graph, 9);
  ExpectClose(RunLogits(**with, images), RunLogits(**without, images), 1e-4, "resnet50_v1.5");
}

}  // namespace
}  // namespace cnnbench
