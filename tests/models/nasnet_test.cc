// NASNet-A (mobile, large, CIFAR) against figures derived here from the
// cell tables and against TF-slim's published table (parameters 5.3 M and
// 88.9 M, 564 M and 23.8 G multiply-adds, rounded); the output shapes after
// the stem, each reduction and the last cell (filters times the states a
// cell concatenates); the drop-path schedule (per cell, ramped by the
// step) and where the graph puts it; and each model learning a batch on
// the oneDNN backend (fp32, and bf16 where the CPU has it).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/random.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "kernels/drop_path.h"
#include "models/summary.h"
#include "models/zoo.h"
#include "models/zoo_models.h"
#include "tests/models/learn_batch.h"
#include "train/trainer.h"

namespace cnnbench {
namespace {

using models_test::CpuRunsBf16;
using models_test::Losses;

// ---- Parameters derived from the cell tables, independently of the builder.

struct State {
  int64_t channels, height;
};

int64_t ConvBn(int64_t in, int64_t out) { return in * out + 2 * out; }  // 1x1, BN gamma+beta
int64_t Half(int64_t h) { return (h + 1) / 2; }

struct Counter {
  int64_t parameters = 0;
  // factorized_reduction to `filters` (stride 2: two halves; 1: a 1x1).
  State Reduce(State s, int64_t filters, bool stride2) {
    parameters += ConvBn(s.channels, filters);
    return {filters, stride2 ? Half(s.height) : s.height};
  }
  State Op(NasNetOp op, State s, int64_t filters, int64_t stride) {
    const int64_t h = stride > 1 ? Half(s.height) : s.height;
    const int64_t k = NasNetOpKernel(op);
    switch (op) {
      case NasNetOp::kSeparable3x3:
      case NasNetOp::kSeparable5x5:
      case NasNetOp::kSeparable7x7:  // two (depthwise, pointwise, BN)
        parameters += s.channels * k * k + ConvBn(s.channels, filters);
        parameters += filters * k * k + ConvBn(filters, filters);
        return {filters, h};
      case NasNetOp::kIdentity:
        if (stride == 1 && s.channels == filters) return s;
        parameters += ConvBn(s.channels, filters);
        return {filters, h};
      case NasNetOp::kAvgPool3x3:
      case NasNetOp::kMaxPool3x3:
        if (s.channels != filters) parameters += ConvBn(s.channels, filters);
        return {filters, h};
    }
    return s;
  }
  State Cell(const NasNetCell& cell, State net, const State* prev, int64_t filters,
             int64_t stride) {
    State p = prev == nullptr ? net : *prev;
    if (prev != nullptr && p.height != net.height) {
      p = Reduce(p, filters, true);
    } else if (prev != nullptr && p.channels != filters) {
      p = Reduce(p, filters, false);
    }
    parameters += ConvBn(net.channels, filters);
    std::vector<State> hidden = {{filters, net.height}, p};
    for (const auto& combination : cell.ops) {
      const State a = Op(combination[0].op, hidden[combination[0].state], filters,
                         combination[0].state < 2 ? stride : 1);
      Op(combination[1].op, hidden[combination[1].state], filters,
         combination[1].state < 2 ? stride : 1);
      hidden.push_back(a);
    }
    int64_t channels = 0;
    for (size_t i = 0; i < hidden.size(); ++i) {
      if (cell.used[i]) continue;
      State s = hidden[i];
      if (s.height != hidden.back().height || s.channels != filters)
        s = Reduce(s, filters, s.height != hidden.back().height);
      channels += s.channels;
    }
    return {channels, hidden.back().height};
  }
};

int64_t DerivedParameters(const NasNetConfig& c, int64_t image, int64_t classes) {
  Counter n;
  std::vector<State> outputs;
  if (c.imagenet_stem) {
    const int64_t stem = static_cast<int64_t>(32 * c.stem_multiplier);
    n.parameters += 3 * 3 * 3 * stem + 2 * stem;
    outputs.push_back({stem, (image - 3) / 2 + 1});
    outputs.push_back(n.Cell(kNasNetAReductionCell, outputs[0], nullptr, c.filters / 4, 2));
    outputs.push_back(n.Cell(kNasNetAReductionCell, outputs[1], &outputs[0], c.filters / 2, 2));
  } else {
    const int64_t stem = c.filters * static_cast<int64_t>(c.stem_multiplier);
    n.parameters += 3 * 3 * 3 * stem + 2 * stem;
    outputs.push_back({stem, image});
  }
  int64_t filters = c.filters;
  const std::vector<int> reductions = NasNetReductionIndices(c.num_cells);
  for (int cell = 0; cell < c.num_cells; ++cell) {
    const State* before = outputs.size() >= 2 ? &outputs[outputs.size() - 2] : nullptr;
    State skip = before != nullptr ? *before : State{};
    if (cell == reductions[0] || cell == reductions[1]) {
      filters *= 2;
      outputs.push_back(n.Cell(kNasNetAReductionCell, outputs.back(), before, filters, 2));
    }
    const State* prev = outputs.size() >= 2 ? &outputs[outputs.size() - 2] : nullptr;
    if (c.skip_reduction_layer_input && before != nullptr) prev = &skip;
    outputs.push_back(n.Cell(kNasNetANormalCell, outputs.back(), prev, filters, 1));
  }
  return n.parameters + outputs.back().channels * classes + classes;
}

Graph Build(const std::string& model, ModelOptions options = {.batch = 1}) {
  absl::StatusOr<Graph> graph = BuildModel(model, options);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? *std::move(graph) : Graph{};
}

// The batch norms' moving mean and variance: 2 values per channel.
int64_t RunningStatistics(const Graph& graph) {
  int64_t count = 0;
  for (const Node& node : graph.nodes)
    if (const auto* bn = std::get_if<BatchNormDesc>(&node.op); node.kind == Node::Kind::kOp && bn)
      count += 2 * bn->dims.c;
  return count;
}

TEST(NasNetTest, ParameterCountsAreTheCellTablesAndTfSlims) {
  const int64_t mobile = Summarize(Build("nasnet")).parameters;
  const int64_t large = Summarize(Build("nasnetlarge")).parameters;
  const int64_t cifar = Summarize(Build("nasnet_cifar")).parameters;
  EXPECT_EQ(mobile, DerivedParameters(kNasNetMobile, 224, 1001));
  EXPECT_EQ(large, DerivedParameters(kNasNetLarge, 331, 1001));
  EXPECT_EQ(cifar, DerivedParameters(kNasNetCifar, 32, 1001));
  // TF-slim's table (and the paper, and Keras' applications table): 5.3 M
  // and 88.9 M, to their rounding, at ImageNet's 1000 classes. Those count
  // every variable, the batch norms' moving mean and variance too (2 per
  // channel); ours are the trained values only.
  for (const auto& [model, published] : {std::pair{"nasnet", 5.3}, {"nasnetlarge", 88.9}}) {
    const Graph graph = Build(model, {.batch = 1, .classes = 1000});
    const int64_t all = Summarize(graph).parameters + RunningStatistics(graph);
    EXPECT_GE(all / 1e6, published - 0.05) << model << ": " << all;
    EXPECT_LT(all / 1e6, published + 0.05) << model << ": " << all;
  }
  // The paper's CIFAR NASNet-A (6 @ 768): 3.3 M at 10 classes.
  EXPECT_NEAR(Summarize(Build("nasnet_cifar", {.batch = 1, .classes = 10})).parameters / 1e6, 3.3,
              0.05);
}

// TF-slim's table: 564 M multiply-adds (mobile), 23.8 G (large), per image.
TEST(NasNetTest, ForwardMultiplyAddsMatchTfSlims) {
  const double mobile = Summarize(Build("nasnet")).forward_flops / 2;
  const double large = Summarize(Build("nasnetlarge")).forward_flops / 2;
  EXPECT_NEAR(mobile / 1e6, 564, 0.01 * 564) << mobile;
  EXPECT_NEAR(large / 1e9, 23.8, 0.01 * 23.8) << large;
}

// One image's output (C, H, W) of a scope's last node.
Shape OutputOf(const Graph& graph, const std::string& scope) {
  for (auto it = graph.nodes.rbegin(); it != graph.nodes.rend(); ++it)
    if (absl::StartsWith(it->name, scope))
      return Shape(std::vector<int64_t>(it->output.dims().begin() + 1, it->output.dims().end()));
  ADD_FAILURE() << "no scope " << scope;
  return Shape{};
}

// A normal cell concatenates 6 states of `filters`, a reduction cell 4;
// reductions double the filters and halve the size (SAME: rounding up).
TEST(NasNetTest, StageShapes) {
  const Graph mobile = Build("nasnet");
  EXPECT_EQ(OutputOf(mobile, "stem/"), (Shape{32, 111, 111}));
  EXPECT_EQ(OutputOf(mobile, "stem_cell0/"), (Shape{4 * 11, 56, 56}));
  EXPECT_EQ(OutputOf(mobile, "stem_cell1/"), (Shape{4 * 22, 28, 28}));
  EXPECT_EQ(OutputOf(mobile, "cell3/"), (Shape{6 * 44, 28, 28}));
  EXPECT_EQ(OutputOf(mobile, "reduction_cell0/"), (Shape{4 * 88, 14, 14}));
  EXPECT_EQ(OutputOf(mobile, "reduction_cell1/"), (Shape{4 * 176, 7, 7}));
  EXPECT_EQ(OutputOf(mobile, "cell11/"), (Shape{6 * 176, 7, 7}));  // 1056
  const Graph large = Build("nasnetlarge");
  EXPECT_EQ(OutputOf(large, "stem/"), (Shape{96, 165, 165}));
  EXPECT_EQ(OutputOf(large, "stem_cell0/"), (Shape{4 * 42, 83, 83}));
  EXPECT_EQ(OutputOf(large, "stem_cell1/"), (Shape{4 * 84, 42, 42}));
  EXPECT_EQ(OutputOf(large, "reduction_cell0/"), (Shape{4 * 336, 21, 21}));
  EXPECT_EQ(OutputOf(large, "reduction_cell1/"), (Shape{4 * 672, 11, 11}));
  EXPECT_EQ(OutputOf(large, "cell17/"), (Shape{6 * 672, 11, 11}));  // 4032
  const Graph cifar = Build("nasnet_cifar");
  EXPECT_EQ(OutputOf(cifar, "stem/"), (Shape{96, 32, 32}));
  EXPECT_EQ(OutputOf(cifar, "cell5/"), (Shape{6 * 32, 32, 32}));
  EXPECT_EQ(OutputOf(cifar, "reduction_cell0/"), (Shape{4 * 64, 16, 16}));
  EXPECT_EQ(OutputOf(cifar, "reduction_cell1/"), (Shape{4 * 128, 8, 8}));
  EXPECT_EQ(OutputOf(cifar, "cell17/"), (Shape{6 * 128, 8, 8}));  // 768
}

// nasnet_utils: keep 1 - (cell + 1) / cells * (1 - keep), then ramped by
// min(1, step / total_training_steps).
TEST(NasNetTest, DropPathKeepsPerCellAndStep) {
  EXPECT_DOUBLE_EQ(NasNetCellKeep(0.7, 0, 22), 1 - 0.3 / 22);
  EXPECT_DOUBLE_EQ(NasNetCellKeep(0.7, 21, 22), 0.7);
  EXPECT_DOUBLE_EQ(NasNetCellKeep(0.6, 9, 20), 0.8);
  const double last = NasNetCellKeep(0.7, 21, 22);
  EXPECT_EQ(DropPathKeepAt(last, 250000, 0), 1.0);
  EXPECT_DOUBLE_EQ(DropPathKeepAt(last, 250000, 125000), 0.85);
  EXPECT_DOUBLE_EQ(DropPathKeepAt(last, 250000, 500000), 0.7);
  // A benchmark's hundred-odd steps: about 1.
  EXPECT_GT(DropPathKeepAt(NasNetCellKeep(0.6, 19, 20), 937500, 200), 0.9999);
}

// Drop-path follows every op but the identity: 8 per normal cell, 9 per
// reduction cell; none in the mobile network (keep 1).
TEST(NasNetTest, DropPathFollowsEachNonIdentityOp) {
  struct Expected {
    const char* model;
    int count, cells;
    double keep;
    int64_t ramp;
  };
  for (const Expected& e : {Expected{"nasnet", 0, 16, 1.0, 250000},
                            Expected{"nasnetlarge", 18 * 8 + 4 * 9, 22, 0.7, 250000},
                            Expected{"nasnet_cifar", 18 * 8 + 2 * 9, 20, 0.6, 937500}}) {
    const Graph graph = Build(e.model);
    std::vector<const DropPathDesc*> ops;
    for (const Node& node : graph.nodes)
      if (const auto* d = std::get_if<DropPathDesc>(&node.op); node.kind == Node::Kind::kOp && d)
        ops.push_back(d);
    ASSERT_EQ(static_cast<int>(ops.size()), e.count) << e.model;
    if (ops.empty()) continue;
    EXPECT_DOUBLE_EQ(ops.front()->keep, NasNetCellKeep(e.keep, 0, e.cells)) << e.model;
    EXPECT_DOUBLE_EQ(ops.back()->keep, e.keep) << e.model;
    EXPECT_EQ(ops.back()->ramp_steps, e.ramp) << e.model;
  }
}

// The shift sits only on factorized reductions' second path: one per
// stride-2 reduction of a previous output.
TEST(NasNetTest, TheShiftIsThePadAndCropByOne) {
  const Graph graph = Build("nasnet");
  int shifts = 0;
  for (const Node& node : graph.nodes)
    if (const auto* d = std::get_if<SpatialPadDesc>(&node.op); node.kind == Node::Kind::kOp && d) {
      ++shifts;
      EXPECT_EQ(absl::StrCat(d->top, d->bottom, d->left, d->right), "-11-11");
    }
  // Stem cell 1, cell 0, and the cell after each reduction.
  EXPECT_EQ(shifts, 4);
}

struct LearnCase {
  const char* model;
  int64_t batch, image;
  double learning_rate;
  bool bf16;  // also in bf16, where the CPU runs it
};

constexpr int kSteps = 5;

class NasNetLearnTest : public ::testing::TestWithParam<LearnCase> {};

// Memorising one small batch: a loss after the first well below it (the
// lowest: at these rates a 5-step curve on 4 images is not monotonic, and
// which step dips depends on the kernels' summation order). bf16 on the
// CIFAR network only: the bf16 kernels are the same for all three.
TEST_P(NasNetLearnTest, LossFalls) {
  const LearnCase c = GetParam();
  std::vector<Precision> precisions = {Precision::kFp32};
  if (c.bf16 && CpuRunsBf16()) precisions.push_back(Precision::kBf16);
  for (Precision p : precisions) {
    const std::vector<float> losses = Losses(c.model, c.batch, c.image, p, kSteps, c.learning_rate);
    ASSERT_EQ(losses.size(), static_cast<size_t>(kSteps)) << PrecisionName(p);
    std::string curve;
    for (float l : losses) absl::StrAppend(&curve, " ", l);
    EXPECT_LT(*std::min_element(losses.begin() + 1, losses.end()), 0.5 * losses.front())
        << c.model << " " << PrecisionName(p) << ":" << curve;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, NasNetLearnTest,
                         ::testing::Values(LearnCase{"nasnet_cifar", 4, 16, 0.05, true},
                                           LearnCase{"nasnet", 4, 32, 0.01, false},
                                           LearnCase{"nasnetlarge", 2, 32, 0.01, false}),
                         [](const ::testing::TestParamInfo<LearnCase>& info) {
                           return std::string(info.param.model);
                         });

}  // namespace
}  // namespace cnnbench
