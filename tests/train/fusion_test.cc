// ReLU fusion for training: which layers the pass fuses (and which it must
// leave), and that a fused step trains exactly like the unfused one on both
// CPU backends, including a residual output read by two layers (whose
// gradients the fused add sums itself) and with freed buffers poisoned.
#include "train/fusion.h"

#include <cmath>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "models/net_builder.h"
#include "tests/train/small_cnn.h"
#include "train/trainer.h"

namespace cnnbench {
namespace {

using train_test::kClasses;
using train_test::kSize;
using train_test::MakeBatch;
using train_test::StepAndLoss;

// conv/bn/relu, then two residual blocks (conv/bn/relu, conv/bn, add, relu):
// the first block's output feeds the second block's conv and its add.
// `act`: the activation of every one of them (ReLU, ReLU6).
Graph ResidualNet(int batch = 8, int channels = 8, Activation act = Activation::kRelu) {
  NetBuilder b(batch, 3, kSize, kSize, kClasses);
  b.Conv(channels, {3, 3}, {.activation = act, .batch_norm = 1});
  for (int block = 0; block < 2; ++block) {
    const int shortcut = b.top();
    b.Conv(channels, {3, 3}, {.activation = act, .batch_norm = 1});
    b.Conv(channels, {3, 3}, {.activation = Activation::kNone, .batch_norm = 1});
    b.Add(b.top(), shortcut);
    b.Activate(act);
  }
  b.AvgPool({3, 3}, {.stride = 2, .padding = Padding::kSame});
  b.Logits();
  auto graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return *graph;
}

template <typename Desc>
int Count(const Graph& g, bool relu) {
  int n = 0;
  for (const Node& node : g.nodes)
    if (const auto* d = std::get_if<Desc>(&node.op); d != nullptr && node.kind == Node::Kind::kOp)
      n += (d->activation != ActivationKind::kNone) == relu;
  return n;
}

int CountRelus(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes)
    n += node.kind == Node::Kind::kOp && std::holds_alternative<ReluDesc>(node.op);
  return n;
}

TEST(FuseReluTest, FusesBatchNormAndAddIntoTheirReluAndRemapsNodes) {
  const Graph graph = ResidualNet();
  const FusedGraph fused = FuseRelu(
      graph, [](const OpDesc&) { return true; }, PlanUse::kTraining);
  // The stem and each block's first conv: bn+relu (3); each block's add+relu (2).
  EXPECT_EQ(fused.fused, 5);
  EXPECT_EQ(CountRelus(graph), 5);
  EXPECT_EQ(CountRelus(fused.graph), 0);
  EXPECT_EQ(Count<BatchNormDesc>(fused.graph, true), 3);
  EXPECT_EQ(Count<BatchNormDesc>(fused.graph, false), 2);  // before the adds
  EXPECT_EQ(Count<AddDesc>(fused.graph, true), 2);
  ASSERT_EQ(fused.graph.nodes.size(), graph.nodes.size() - 5);
  ASSERT_EQ(fused.origin.size(), fused.graph.nodes.size());
  ASSERT_EQ(fused.node_of.size(), graph.nodes.size());
  for (size_t k = 0; k < fused.graph.nodes.size(); ++k) {
    const Node& node = fused.graph.nodes[k];
    const Node& given = graph.nodes[fused.origin[k]];
    EXPECT_EQ(fused.node_of[fused.origin[k]], static_cast<int>(k));
    EXPECT_EQ(node.name.rfind(given.name, 0), 0u) << node.name << " from " << given.name;
    EXPECT_EQ(node.output, given.output);
    for (int in : node.inputs) EXPECT_LT(in, static_cast<int>(k)) << node.name;
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    if (node.kind != Node::Kind::kOp || !std::holds_alternative<ReluDesc>(node.op)) continue;
    // An absorbed ReLU is computed by its producer, now named "<producer>+<relu>".
    const Node& by = fused.graph.nodes[fused.node_of[i]];
    EXPECT_EQ(fused.origin[fused.node_of[i]], node.inputs[0]) << node.name;
    EXPECT_NE(by.name.find("+relu"), std::string::npos) << by.name;
  }
  EXPECT_EQ(fused.graph.images, fused.node_of[graph.images]);
  EXPECT_EQ(fused.graph.labels, fused.node_of[graph.labels]);
  EXPECT_EQ(fused.graph.loss, fused.node_of[graph.loss]);
  EXPECT_TRUE(std::holds_alternative<SoftmaxXentDesc>(fused.graph.nodes[fused.graph.loss].op));
  EXPECT_EQ(fused.graph.batch, graph.batch);
}

// ReLU6 fuses where ReLU fuses, as itself: every fused op carries ReLU6.
TEST(FuseReluTest, FusesRelu6AsItFusesRelu) {
  const Graph graph = ResidualNet(8, 8, Activation::kRelu6);
  EXPECT_EQ(CountRelus(graph), 5);
  const FusedGraph fused = FuseRelu(
      graph, [](const OpDesc&) { return true; }, PlanUse::kTraining);
  EXPECT_EQ(fused.fused, 5);
  EXPECT_EQ(CountRelus(fused.graph), 0);
  int relu6 = 0;
  for (const Node& node : fused.graph.nodes)
    relu6 += node.kind == Node::Kind::kOp && FusedActivation(node.op) == ActivationKind::kRelu6;
  EXPECT_EQ(relu6, 5);
  // A backend that runs no fused ReLU6 keeps every one a layer.
  const FusedGraph kept = FuseRelu(
      graph, [](const OpDesc& op) { return FusedActivation(op) != ActivationKind::kRelu6; },
      PlanUse::kTraining);
  EXPECT_EQ(kept.fused, 0);
}

// Inference: every conv -> batch norm folds into a conv with a bias; the
// maps say which batch norm went where, also composed with the ReLU fusion.
TEST(FoldBatchNormTest, FoldsEachConvsBatchNormAndComposesWithTheReluFusion) {
  const Graph graph = ResidualNet();
  auto all = [](const OpDesc&) { return true; };
  const FusedGraph folded = FoldBatchNormForInference(graph, all);
  EXPECT_EQ(folded.fused, 5);  // the stem's and both blocks' two convs
  EXPECT_EQ(Count<BatchNormDesc>(folded.graph, false) + Count<BatchNormDesc>(folded.graph, true),
            0);
  ASSERT_EQ(folded.folded_bn.size(), folded.graph.nodes.size());
  int folded_convs = 0;
  for (size_t k = 0; k < folded.graph.nodes.size(); ++k) {
    if (folded.folded_bn[k] < 0) continue;
    ++folded_convs;
    const Node& conv = folded.graph.nodes[k];
    ASSERT_TRUE(std::holds_alternative<ConvDesc>(conv.op)) << conv.name;
    EXPECT_TRUE(std::get<ConvDesc>(conv.op).bias) << conv.name;
    const int bn = folded.folded_bn[k];
    EXPECT_TRUE(std::holds_alternative<BatchNormDesc>(graph.nodes[bn].op));
    EXPECT_EQ(graph.nodes[bn].inputs[0], folded.origin[k]);  // its own conv's batch norm
    EXPECT_EQ(folded.node_of[bn], static_cast<int>(k));
    EXPECT_NE(conv.name.find("+"), std::string::npos) << conv.name;
  }
  EXPECT_EQ(folded_convs, 5);
  // The ReLUs after folded convs stay; those after the adds fuse into them.
  const FusedGraph both =
      Compose(folded, FuseRelu(
                          folded.graph,
                          [](const OpDesc& op) { return !std::holds_alternative<ConvDesc>(op); },
                          PlanUse::kForwardOnly));
  EXPECT_EQ(both.fused, 5 + 2);
  EXPECT_EQ(CountRelus(both.graph), 3);
  ASSERT_EQ(both.node_of.size(), graph.nodes.size());
  ASSERT_EQ(both.origin.size(), both.graph.nodes.size());
  int carried = 0;
  for (size_t k = 0; k < both.graph.nodes.size(); ++k) {
    EXPECT_EQ(both.node_of[both.origin[k]], static_cast<int>(k));
    if (both.folded_bn[k] >= 0) {
      ++carried;
      EXPECT_EQ(both.node_of[both.folded_bn[k]], static_cast<int>(k));
    }
  }
  EXPECT_EQ(carried, 5);
  // A backend that runs no conv with a bias folds nothing.
  EXPECT_EQ(FoldBatchNormForInference(graph, [](const OpDesc&) { return false; }).fused, 0);
}

// Inference: after the fold, each folded conv takes its ReLU as an
// epilogue (ConvDesc::relu). (Training has no fold: there the ReLUs follow
// batch norms and fuse into those.)
TEST(FoldBatchNormTest, FoldedConvsTakeTheirReluInForwardOnlyPlans) {
  const Graph graph = ResidualNet();
  auto all = [](const OpDesc&) { return true; };
  const FusedGraph folded = FoldBatchNormForInference(graph, all);
  const FusedGraph both = Compose(folded, FuseRelu(folded.graph, all, PlanUse::kForwardOnly));
  // The stem's and each block's first conv (3), each block's add (2).
  EXPECT_EQ(both.fused, 5 + 5);
  EXPECT_EQ(CountRelus(both.graph), 0);
  EXPECT_EQ(Count<ConvDesc>(both.graph, true), 3);
  EXPECT_EQ(Count<AddDesc>(both.graph, true), 2);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    if (node.kind != Node::Kind::kOp || !std::holds_alternative<ReluDesc>(node.op)) continue;
    const Node& by = both.graph.nodes[both.node_of[i]];
    EXPECT_NE(by.name.find("+relu"), std::string::npos) << by.name;
    // A conv epilogue's layer is the conv that also absorbed the batch norm.
    if (const auto* conv = std::get_if<ConvDesc>(&by.op)) {
      EXPECT_TRUE(conv->activation == ActivationKind::kRelu && conv->bias) << by.name;
      EXPECT_GE(both.folded_bn[both.node_of[i]], 0) << by.name;
    }
  }
  // The same graph's training fusion leaves every conv alone (each is read
  // by a batch norm, not a ReLU).
  const FusedGraph training = FuseRelu(graph, all, PlanUse::kTraining);
  EXPECT_EQ(Count<ConvDesc>(training.graph, true), 0);
  // A backend that runs no conv epilogue leaves those ReLUs as layers.
  const FusedGraph no_epilogue =
      Compose(folded, FuseRelu(
                          folded.graph,
                          [](const OpDesc& op) {
                            const auto* conv = std::get_if<ConvDesc>(&op);
                            return conv == nullptr || conv->activation == ActivationKind::kNone;
                          },
                          PlanUse::kForwardOnly));
  EXPECT_EQ(CountRelus(no_epilogue.graph), 3);
}

TEST(FuseReluTest, LeavesWhatItMustNotFuse) {
  // A backend that runs no fused add: only batch norms fuse.
  const Graph graph = ResidualNet();
  const FusedGraph no_add = FuseRelu(
      graph, [](const OpDesc& op) { return !std::holds_alternative<AddDesc>(op); },
      PlanUse::kTraining);
  EXPECT_EQ(no_add.fused, 3);
  EXPECT_EQ(Count<AddDesc>(no_add.graph, true), 0);
  EXPECT_EQ(CountRelus(no_add.graph), 2);

  // A batch norm read by a ReLU and by another layer keeps its output: no
  // fusion. A ReLU after a conv (no batch norm) becomes its epilogue, in
  // either use.
  NetBuilder b(2, 3, 6, 6, kClasses);
  b.Conv(4, {3, 3}, {.activation = Activation::kNone, .batch_norm = 1});
  const int bn = b.top();
  const int relu = b.Relu();
  b.set_top(bn);
  b.Add(relu, bn);
  b.Conv(4, {3, 3}, {.batch_norm = 0});  // conv -> relu
  b.Logits();
  auto graph2 = std::move(b).Build();
  ASSERT_TRUE(graph2.ok()) << graph2.status();
  for (PlanUse use : {PlanUse::kTraining, PlanUse::kForwardOnly}) {
    const FusedGraph fused = FuseRelu(
        *graph2, [](const OpDesc&) { return true; }, use);
    EXPECT_EQ(fused.fused, 1);
    EXPECT_EQ(fused.graph.nodes.size(), graph2->nodes.size() - 1);
    EXPECT_EQ(Count<ConvDesc>(fused.graph, true), 1);
    EXPECT_EQ(Count<BatchNormDesc>(fused.graph, true), 0);
  }
  // A backend that runs no conv epilogue in this use (the cuda backend in
  // training) leaves it a layer.
  const FusedGraph no_epilogue = FuseRelu(
      *graph2,
      [](const OpDesc& op) {
        const auto* conv = std::get_if<ConvDesc>(&op);
        return conv == nullptr || conv->activation == ActivationKind::kNone;
      },
      PlanUse::kTraining);
  EXPECT_EQ(no_epilogue.fused, 0);

  const FusedGraph same = Unfused(graph);
  EXPECT_EQ(same.fused, 0);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    EXPECT_EQ(same.origin[i], static_cast<int>(i));
    EXPECT_EQ(same.node_of[i], static_cast<int>(i));
  }
}

struct TrainedRun {
  std::vector<float> losses;
  std::vector<float> weights;  // the first conv's, after the steps
  std::vector<float> last_conv;
  int fused = 0;
  std::vector<std::string> profile_names;
};

TrainedRun Train(const char* backend_name, bool fuse, bool poison, int steps = 4,
                 Activation act = Activation::kRelu) {
  TrainedRun run;
  auto backend = CreateBackend(backend_name, Device::Cpu());
  EXPECT_TRUE(backend.ok()) << backend.status();
  if (!backend.ok()) return run;
  TrainOptions options;
  options.learning_rate = 0.05;
  options.fuse_relu = fuse;
  options.poison_freed = poison;
  options.profile = true;
  const Graph graph = ResidualNet(8, 8, act);
  auto trainer = Trainer::Compile(graph, backend->get(), options);
  EXPECT_TRUE(trainer.ok()) << trainer.status();
  if (!trainer.ok()) return run;
  std::vector<float> images;
  std::vector<int32_t> labels;
  for (int step = 0; step < steps; ++step) {
    MakeBatch(step, &images, &labels, graph.batch);
    EXPECT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
    auto loss = StepAndLoss(**trainer);
    EXPECT_TRUE(loss.ok()) << loss.status();
    run.losses.push_back(loss.ok() ? *loss : NAN);
  }
  // Node 2 is the stem conv, in the given graph's numbering either way.
  auto w = (*trainer)->ReadParameter(2, 0);
  EXPECT_TRUE(w.ok()) << w.status();
  if (w.ok()) run.weights = *w;
  int last_conv = -1;
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (std::holds_alternative<ConvDesc>(graph.nodes[i].op)) last_conv = static_cast<int>(i);
  auto lw = (*trainer)->ReadParameter(last_conv, 0);
  EXPECT_TRUE(lw.ok()) << lw.status();
  if (lw.ok()) run.last_conv = *lw;
  run.fused = (*trainer)->fused_relus();
  for (const LayerTime& t : (*trainer)->profile()) run.profile_names.push_back(t.name);
  return run;
}

class FusedTrainingTest : public ::testing::TestWithParam<const char*> {};

// The fused run took the unfused run's steps: the same losses (relative
// `rtol`) and the same first and last conv weights (within `atol`), and the
// losses moved (not a comparison of two frozen runs).
void ExpectSameSteps(const TrainedRun& plain, const TrainedRun& fused, double rtol, double atol) {
  ASSERT_EQ(plain.losses.size(), fused.losses.size());
  for (size_t s = 0; s < plain.losses.size(); ++s) {
    ASSERT_TRUE(std::isfinite(fused.losses[s]));
    EXPECT_NEAR(fused.losses[s], plain.losses[s], rtol * std::fabs(plain.losses[s]) + 1e-6)
        << "step " << s;
  }
  EXPECT_NE(plain.losses.front(), plain.losses.back());
  for (const auto* pair : {&plain.weights, &plain.last_conv}) {
    const std::vector<float>& a = *pair;
    const std::vector<float>& b = pair == &plain.weights ? fused.weights : fused.last_conv;
    ASSERT_EQ(a.size(), b.size());
    ASSERT_FALSE(a.empty());
    for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(b[i], a[i], atol) << "weight " << i;
  }
}

// Fused or not, the same network from the same seed takes the same steps:
// the same ops in the same order (a ReLU applied inside the batch norm or
// the sum, the gradients of two consumers summed inside the fused add).
TEST_P(FusedTrainingTest, TrainsLikeTheUnfusedGraph) {
  const TrainedRun plain = Train(GetParam(), /*fuse=*/false, /*poison=*/false);
  const TrainedRun fused = Train(GetParam(), /*fuse=*/true, /*poison=*/false);
  EXPECT_EQ(plain.fused, 0);
  EXPECT_EQ(fused.fused, 5);
  ExpectSameSteps(plain, fused, 1e-5, 1e-5);
  // The profile names fused layers "<producer>+<relu>" and has no ReLU of its own.
  int joined = 0;
  for (const std::string& name : fused.profile_names) {
    joined += name.find("+relu") != std::string::npos;
    EXPECT_EQ(name.rfind("relu", 0), std::string::npos) << name;
  }
  EXPECT_EQ(joined, 5);
  EXPECT_EQ(plain.profile_names.size(), fused.profile_names.size() + 5);
}

// With ReLU6 the same on both CPU backends: every ReLU6 fused (3 batch
// norms, 2 adds: the plan has no ReLU6 layer left) and equal steps, also
// with freed buffers poisoned (the fused backward reads y).
TEST_P(FusedTrainingTest, Relu6TrainsLikeTheUnfusedGraph) {
  const TrainedRun plain = Train(GetParam(), false, false, 4, Activation::kRelu6);
  const TrainedRun fused = Train(GetParam(), true, false, 4, Activation::kRelu6);
  const TrainedRun poisoned = Train(GetParam(), true, true, 4, Activation::kRelu6);
  EXPECT_EQ(poisoned.losses, fused.losses);
  EXPECT_EQ(poisoned.weights, fused.weights);
  EXPECT_EQ(poisoned.last_conv, fused.last_conv);
  EXPECT_EQ(plain.fused, 0);
  EXPECT_EQ(fused.fused, 5);
  int joined = 0;
  for (const std::string& name : fused.profile_names) {
    joined += name.find("+relu") != std::string::npos;
    EXPECT_EQ(name.rfind("relu", 0), std::string::npos) << name;
  }
  EXPECT_EQ(joined, 5);
  EXPECT_EQ(plain.profile_names.size(), fused.profile_names.size() + 5);
  ExpectSameSteps(plain, fused, 1e-5, 1e-5);
}

// SiLU and hard-swish: each batch norm takes its activation in training
// (3 of them; the adds' stay layers, a fused curved add having no
// backward), and the steps equal the unfused graph's to fp32's rounding on
// oneDNN (its fused loops' exponential against oneDNN's eltwise), also
// with freed buffers poisoned (the fused backward reads x, not y).
TEST_P(FusedTrainingTest, CurvedKindsAfterBatchNormTrainLikeTheUnfusedGraph) {
  for (Activation act : {Activation::kSilu, Activation::kHardSwish}) {
    SCOPED_TRACE(ActivationSuffix(act));
    const TrainedRun plain = Train(GetParam(), false, false, 4, act);
    const TrainedRun fused = Train(GetParam(), true, false, 4, act);
    const TrainedRun poisoned = Train(GetParam(), true, true, 4, act);
    EXPECT_EQ(poisoned.losses, fused.losses);
    EXPECT_EQ(poisoned.weights, fused.weights);
    EXPECT_EQ(poisoned.last_conv, fused.last_conv);
    EXPECT_EQ(plain.fused, 0);
    EXPECT_EQ(fused.fused, 3);
    const std::string suffix = absl::StrCat("+", ActivationSuffix(act) + 1);
    int joined = 0;
    for (const std::string& name : fused.profile_names)
      joined +=
          name.find("batchnorm") != std::string::npos && name.find(suffix) != std::string::npos;
    EXPECT_EQ(joined, 3);
    EXPECT_EQ(plain.profile_names.size(), fused.profile_names.size() + 3);
    ExpectSameSteps(plain, fused, 1e-4, 1e-4);
  }
}

// Poisoning fills each buffer with NaN when its planned lifetime ends: the
// shared gradient of a fused add and the gradients it sums must live until
// their last reader, or the loss and weights change.
TEST_P(FusedTrainingTest, PlanHoldsWhenFreedBuffersArePoisoned) {
  const TrainedRun clean = Train(GetParam(), true, false, 3);
  const TrainedRun poisoned = Train(GetParam(), true, true, 3);
  EXPECT_EQ(clean.losses, poisoned.losses);
  EXPECT_EQ(clean.weights, poisoned.weights);
  EXPECT_EQ(clean.last_conv, poisoned.last_conv);
}

// No layout changes inside the network: layers pass their output's layout
// on (fused or not); a reorder happens only where the plain images enter
// or where a matrix layer (the logits' fc) reads a 4-D activation. (With 16
// channels every convolution picks one blocked layout; with fewer, a
// shortcut may come in another layout than the branch it joins, and a fused
// add reads it reordered: that edge is then listed too.)
TEST_P(FusedTrainingTest, ReordersOnlyAtTheNetworksEdges) {
  auto backend = CreateBackend(GetParam(), Device::Cpu());
  ASSERT_TRUE(backend.ok()) << backend.status();
  const Graph graph = ResidualNet(/*batch=*/4, /*channels=*/16);
  for (bool fuse : {false, true}) {
    TrainOptions options;
    options.fuse_relu = fuse;
    auto trainer = Trainer::Compile(graph, backend->get(), options);
    ASSERT_TRUE(trainer.ok()) << trainer.status();
    const std::vector<std::string> edges = (*trainer)->ReorderedEdges();
    EXPECT_LE(edges.size(), 2u) << "fuse " << fuse;
    for (const std::string& edge : edges)
      EXPECT_TRUE(edge.rfind("images -> ", 0) == 0 || edge.find(" -> fc") != std::string::npos)
          << edge << " (fuse " << fuse << ")";
  }
}

// conv -> ReLU without batch norms (the AlexNet, VGG and GoogLeNet shape):
// a stem read by two branches (its gradient a sum of two), their concat,
// read by two pools (the concat's backward then sums their gradients slice
// by slice on oneDNN), and a residual sum of two conv+ReLU outputs (one
// gradient buffer shared by both producers, which the epilogue's mask must
// not write). `act`: every conv's activation (ReLU, ReLU6).
Graph PlainNet(Activation act = Activation::kRelu) {
  NetBuilder b(4, 3, kSize, kSize, kClasses);
  const int stem = b.Conv(16, {3, 3}, {.activation = act, .batch_norm = 0});
  const int left = b.Conv(16, {1, 1}, {.activation = act, .batch_norm = 0});
  b.set_top(stem);
  const int right = b.Conv(16, {3, 3}, {.activation = act, .batch_norm = 0});
  const int cat = b.Concat({left, right});
  const int max = b.MaxPool({2, 2}, {.stride = 2});
  b.set_top(cat);
  const int avg = b.AvgPool({2, 2}, {.stride = 2});
  b.Concat({max, avg});
  const int a = b.Conv(16, {3, 3}, {.activation = act, .batch_norm = 0});
  const int c = b.Conv(16, {1, 1}, {.activation = act, .batch_norm = 0});
  b.Add(a, c);
  b.AvgPool({3, 3}, {.stride = 2, .padding = Padding::kSame});
  b.Logits();
  auto graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return *graph;
}

struct ConvReluRun {
  std::vector<float> losses;
  std::vector<std::vector<float>> weights;  // every conv's, after the steps
  int epilogues = 0;
  int summing_concats = 0;  // concats handed their readers' gradients as parts
};

ConvReluRun TrainPlain(const char* backend_name, bool conv_relu, bool poison,
                       Activation act = Activation::kRelu) {
  ConvReluRun run;
  auto backend = CreateBackend(backend_name, Device::Cpu());
  EXPECT_TRUE(backend.ok()) << backend.status();
  if (!backend.ok()) return run;
  TrainOptions options;
  options.learning_rate = 0.05;
  options.conv_relu = conv_relu;
  options.poison_freed = poison;
  const Graph graph = PlainNet(act);
  auto trainer = Trainer::Compile(graph, backend->get(), options);
  EXPECT_TRUE(trainer.ok()) << trainer.status();
  if (!trainer.ok()) return run;
  run.epilogues = (*trainer)->step_plan().conv_relu_epilogues;
  for (const auto& layer : (*trainer)->step_plan().layers)
    run.summing_concats +=
        layer->grad_edges.size() > 1 && layer->kernel->signature().sums_output_gradient &&
        std::holds_alternative<ConcatDesc>((*trainer)->step_plan().graph.nodes[layer->node].op);
  std::vector<float> images;
  std::vector<int32_t> labels;
  for (int step = 0; step < 4; ++step) {
    MakeBatch(step, &images, &labels, graph.batch);
    EXPECT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
    auto loss = StepAndLoss(**trainer);
    EXPECT_TRUE(loss.ok()) << loss.status();
    run.losses.push_back(loss.ok() ? *loss : NAN);
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (graph.nodes[i].kind == Node::Kind::kOp &&
        std::holds_alternative<ConvDesc>(graph.nodes[i].op)) {
      auto w = (*trainer)->ReadParameter(static_cast<int>(i), 0);
      EXPECT_TRUE(w.ok()) << w.status();
      run.weights.push_back(w.ok() ? *w : std::vector<float>());
    }
  return run;
}

// A ReLU (or ReLU6) as its convolution's epilogue trains as the layer
// does: the same forward values, dy masked by y > 0 (0 < y < 6) where the
// layer masked it by x > 0 (0 < x < 6; the same set), so the same steps;
// also with freed buffers poisoned (the epilogue's backward reads y: it
// must live until then).
TEST_P(FusedTrainingTest, ConvEpilogueTrainsLikeTheReluLayer) {
  for (Activation act : {Activation::kRelu, Activation::kRelu6}) {
    SCOPED_TRACE(act == Activation::kRelu ? "relu" : "relu6");
    const ConvReluRun apart = TrainPlain(GetParam(), /*conv_relu=*/false, /*poison=*/false, act);
    const ConvReluRun fused = TrainPlain(GetParam(), /*conv_relu=*/true, /*poison=*/false, act);
    const ConvReluRun poisoned = TrainPlain(GetParam(), /*conv_relu=*/true, /*poison=*/true, act);
    EXPECT_EQ(apart.epilogues, 0);
    EXPECT_EQ(fused.epilogues, 5);
    ASSERT_EQ(fused.losses.size(), apart.losses.size());
    for (size_t s = 0; s < apart.losses.size(); ++s) {
      ASSERT_TRUE(std::isfinite(fused.losses[s]));
      EXPECT_NEAR(fused.losses[s], apart.losses[s], 1e-5 * std::fabs(apart.losses[s]) + 1e-6)
          << "step " << s;
    }
    EXPECT_NE(apart.losses.front(), apart.losses.back());
    ASSERT_EQ(fused.weights.size(), apart.weights.size());
    for (size_t l = 0; l < apart.weights.size(); ++l) {
      ASSERT_EQ(fused.weights[l].size(), apart.weights[l].size());
      for (size_t i = 0; i < apart.weights[l].size(); ++i)
        ASSERT_NEAR(fused.weights[l][i], apart.weights[l][i], 1e-5) << "conv " << l << " " << i;
    }
    EXPECT_EQ(poisoned.losses, fused.losses);
    EXPECT_EQ(poisoned.weights, fused.weights);
  }
}

// The same network on oneDNN (conv epilogues, the concat summing its two
// readers' gradients itself) takes the reference's steps.
TEST(ConvEpilogueTrainingTest, OneDnnFollowsTheReference) {
  const ConvReluRun reference = TrainPlain("reference", true, false);
  const ConvReluRun onednn = TrainPlain("onednn", true, false);
  EXPECT_EQ(onednn.summing_concats, 1);
  EXPECT_EQ(reference.summing_concats, 0);
  ASSERT_EQ(onednn.losses.size(), reference.losses.size());
  for (size_t s = 0; s < reference.losses.size(); ++s)
    EXPECT_NEAR(onednn.losses[s], reference.losses[s], 1e-4 * std::fabs(reference.losses[s]))
        << "step " << s;
  ASSERT_EQ(onednn.weights.size(), reference.weights.size());
  for (size_t l = 0; l < reference.weights.size(); ++l)
    for (size_t i = 0; i < reference.weights[l].size(); ++i)
      ASSERT_NEAR(onednn.weights[l][i], reference.weights[l][i], 1e-4) << "conv " << l << " " << i;
}

INSTANTIATE_TEST_SUITE_P(CpuBackends, FusedTrainingTest, ::testing::Values("reference", "onednn"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace cnnbench

namespace cnnbench {
namespace {

// Inference leaves out dropout and drop-path (the identity there): their
// readers read their inputs, and an add after a drop-path then has the
// conv before it as its input, which FuseResidualAdd absorbs it into.
TEST(SkipIdentitiesTest, DropoutAndDropPathLeaveAndTheirReadersReadTheirInputs) {
  NetBuilder b(4, 3, kSize, kSize, kClasses);
  b.Conv(8, {3, 3}, {.activation = Activation::kRelu});
  const int shortcut = b.top();
  const int conv = b.Conv(8, {3, 3}, {.activation = Activation::kNone});
  const int drop_path = b.DropPath(0.8, 0);
  const int add = b.Add(shortcut, b.top());
  b.SpatialMean();
  const int dropout = b.Dropout(0.2);
  b.Logits();
  auto graph = std::move(b).Build();
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto all = [](const OpDesc&) { return true; };
  EXPECT_EQ(FuseResidualAdd(*graph, all).fused, 0) << "the add reads the drop-path, no conv";
  const FusedGraph skipped = SkipIdentitiesForInference(*graph);
  EXPECT_EQ(skipped.fused, 2);
  ASSERT_EQ(skipped.graph.nodes.size(), graph->nodes.size() - 2);
  for (const Node& node : skipped.graph.nodes) {
    EXPECT_FALSE(std::holds_alternative<DropoutDesc>(node.op)) << node.name;
    EXPECT_FALSE(std::holds_alternative<DropPathDesc>(node.op)) << node.name;
  }
  // Each skipped node is computed by its input's node.
  EXPECT_EQ(skipped.node_of[drop_path], skipped.node_of[conv]);
  EXPECT_EQ(skipped.node_of[dropout], skipped.node_of[graph->nodes[dropout].inputs[0]]);
  const Node& sum = skipped.graph.nodes[skipped.node_of[add]];
  EXPECT_EQ(sum.inputs[1], skipped.node_of[conv]);
  EXPECT_EQ(skipped.graph.logits, skipped.node_of[graph->logits]);
  const FusedGraph both = Compose(skipped, FuseResidualAdd(skipped.graph, all));
  EXPECT_EQ(both.fused, 3);
  EXPECT_TRUE(std::get<ConvDesc>(both.graph.nodes[both.node_of[conv]].op).residual);
  EXPECT_EQ(both.node_of[add], both.node_of[conv]);
}

}  // namespace
}  // namespace cnnbench
