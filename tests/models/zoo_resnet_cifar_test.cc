// tf_cnn_benchmarks' official_resnet* (TensorFlow's official models) and its
// CIFAR-10 models beside the ResNets (resnet*_v2, densenet*, alexnet_cifar,
// trivial_cifar) against their definitions: parameter counts derived here,
// block by block, from official/r1/resnet/resnet_model.py and
// tf_cnn_benchmarks' models/*.py (and torchvision's published counts where
// the networks agree), the stride's place, FLOPs and stage shapes.
#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "models/summary.h"
#include "models/zoo.h"

namespace cnnbench {
namespace {

Graph Build(const std::string& model, ModelOptions options = {.batch = 1}) {
  absl::StatusOr<Graph> graph = BuildModel(model, options);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? *std::move(graph) : Graph{};
}

int64_t Parameters(const std::string& model, int64_t classes) {
  return Summarize(Build(model, {.batch = 1, .classes = classes})).parameters;
}

// conv(C->K, RxS) without bias; batch norm with gamma and beta.
int64_t Conv(int64_t c, int64_t k, int64_t r) { return c * k * r * r; }
int64_t Bn(int64_t c) { return 2 * c; }

// official/r1/resnet/resnet_model.py at 224 px: conv 7x7/2 of 64 (with BN
// and ReLU in v1, bare in v2), then four stages of blocks whose first
// always has a 1x1 projection (with BN in v1, bare in v2; convs have no
// bias, every BN has gamma and beta); v2 ends in a BN; fc(F -> classes).
int64_t OfficialCount(const std::array<int, 4>& blocks, bool bottleneck, bool v2, int64_t classes) {
  int64_t count = Conv(3, 64, 7) + (v2 ? 0 : Bn(64));
  int64_t in = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t width = int64_t{64} << stage;
    const int64_t out = bottleneck ? 4 * width : width;
    for (int block = 0; block < blocks[stage]; ++block) {
      const int64_t c = block == 0 ? in : out;
      if (block == 0) count += Conv(c, out, 1) + (v2 ? 0 : Bn(out));  // projection
      if (v2) count += Bn(c);                                         // pre-activation
      if (bottleneck) {
        // 1x1 C->W, 3x3 W->W, 1x1 W->K; the last BN only in v1.
        count += Conv(c, width, 1) + Bn(width) + Conv(width, width, 3) + Bn(width) +
                 Conv(width, out, 1) + (v2 ? 0 : Bn(out));
      } else {
        // 3x3 C->K, 3x3 K->K; the second BN only in v1.
        count += Conv(c, out, 3) + Bn(out) + Conv(out, out, 3) + (v2 ? 0 : Bn(out));
      }
    }
    in = out;
  }
  if (v2) count += Bn(in);
  return count + in * classes + classes;
}

TEST(OfficialResNetTest, ParameterCountsMatchTorchvisionAndTheDefinition) {
  struct Case {
    int depth;
    std::array<int, 4> blocks;
  };
  const Case cases[] = {{18, {2, 2, 2, 2}},   {34, {3, 4, 6, 3}},   {50, {3, 4, 6, 3}},
                        {101, {3, 4, 23, 3}}, {152, {3, 8, 36, 3}}, {200, {3, 24, 36, 3}}};
  for (const Case& c : cases) {
    const bool bottleneck = c.depth >= 50;
    const std::string v1 = absl::StrCat("official_resnet", c.depth);
    EXPECT_EQ(Parameters(v1, 1000), OfficialCount(c.blocks, bottleneck, false, 1000)) << v1;
    EXPECT_EQ(Parameters(v1 + "_v2", 1000), OfficialCount(c.blocks, bottleneck, true, 1000)) << v1;
    EXPECT_EQ(Parameters(v1 + "_v2", 1001), OfficialCount(c.blocks, bottleneck, true, 1001)) << v1;
  }
  // torchvision's published counts (1000 classes). Its bottleneck networks
  // are the official v1 ones (both project on stage 1's first block, where
  // 64 -> 256), so they agree; the formula above gives the same figures.
  EXPECT_EQ(Parameters("official_resnet50", 1000), 25'557'032);
  EXPECT_EQ(Parameters("official_resnet101", 1000), 44'549'160);
  EXPECT_EQ(Parameters("official_resnet152", 1000), 60'192'808);
  EXPECT_EQ(OfficialCount({3, 4, 23, 3}, true, false, 1000), 44'549'160);
  EXPECT_EQ(OfficialCount({3, 8, 36, 3}, true, false, 1000), 60'192'808);
  // The basic-block ones differ from torchvision's by stage 1's first
  // block: block_layer() hands every stage's first block a projection,
  // which there maps 64 -> 64 at stride 1 (conv 64*64 + BN 2*64), where
  // torchvision keeps the identity.
  const int64_t stage1_projection = 64 * 64 + 2 * 64;
  EXPECT_EQ(Parameters("official_resnet18", 1000), 11'689'512 + stage1_projection);
  EXPECT_EQ(stage1_projection, 4'224);
  EXPECT_EQ(Parameters("official_resnet200", 1000), 64'673'832);  // docs/models.md
  EXPECT_EQ(Parameters("official_resnet200_v2", 1000), 64'666'152);
  EXPECT_EQ(Parameters("official_resnet34", 1000), 21'797'672 + stage1_projection);
  EXPECT_EQ(Parameters("resnet18", 1000), 11'689'512);  // ours: torchvision's
  // official_resnet50 is resnet50_v1.5's network.
  EXPECT_EQ(Parameters("official_resnet50", 1000), Parameters("resnet50_v1.5", 1000));
  EXPECT_EQ(Parameters("official_resnet50", 1001), Parameters("resnet50_v1.5", 1001));
}

// One image's output shapes of the main path's first 1x1 conv (C -> 128)
// and 3x3 conv of stage 2's first block, a downsampling block.
std::vector<Shape> Stage2Block0Shapes(const std::string& model) {
  std::vector<Shape> shapes;
  for (const Node& node : Build(model).nodes) {
    if (!absl::StartsWith(node.name, "stage2/block0/")) continue;
    const auto* conv = std::get_if<ConvDesc>(&node.op);
    if (conv == nullptr || conv->k != 128) continue;  // the projection and last 1x1 make 512
    shapes.push_back(Shape{node.output[1], node.output[2], node.output[3]});
  }
  return shapes;
}

TEST(OfficialResNetTest, StrideIsInThe3x3) {
  // Official v1 and v2: the 1x1 keeps 56 x 56, the 3x3 subsamples to 28.
  const std::vector<Shape> in_3x3 = {Shape{128, 56, 56}, Shape{128, 28, 28}};
  EXPECT_EQ(Stage2Block0Shapes("official_resnet101"), in_3x3);
  EXPECT_EQ(Stage2Block0Shapes("official_resnet101_v2"), in_3x3);
  EXPECT_EQ(Stage2Block0Shapes("official_resnet50"), in_3x3);
  // tf_cnn_benchmarks' own resnet101 (v1) subsamples in the first 1x1.
  const std::vector<Shape> in_1x1 = {Shape{128, 28, 28}, Shape{128, 28, 28}};
  EXPECT_EQ(Stage2Block0Shapes("resnet101"), in_1x1);
}

TEST(OfficialResNetTest, ForwardFlops) {
  // The same network as resnet50_v1.5, so the same FLOPs (4.09 G MACs).
  EXPECT_EQ(Summarize(Build("official_resnet50")).forward_flops,
            Summarize(Build("resnet50_v1.5")).forward_flops);
  // ResNet-18: ours (torchvision's) plus stage 1's 1x1 projection,
  // 56*56*64*64 multiply-adds.
  EXPECT_DOUBLE_EQ(Summarize(Build("official_resnet18")).forward_flops,
                   Summarize(Build("resnet18")).forward_flops + 2.0 * 56 * 56 * 64 * 64);
  // v2 moves batch norms, not convs: the same FLOPs as v1.
  for (const char* depth : {"18", "50", "200"})
    EXPECT_EQ(Summarize(Build(absl::StrCat("official_resnet", depth))).forward_flops,
              Summarize(Build(absl::StrCat("official_resnet", depth, "_v2"))).forward_flops)
        << depth;
}

TEST(OfficialResNetTest, BatchNormAndStem) {
  for (const char* model : {"official_resnet18", "official_resnet50_v2"}) {
    SCOPED_TRACE(model);
    Graph graph = Build(model);
    int bns = 0;
    for (const Node& node : graph.nodes)
      if (const auto* bn = std::get_if<BatchNormDesc>(&node.op)) {
        ++bns;
        EXPECT_TRUE(bn->scale) << node.name;
        EXPECT_EQ(bn->epsilon, 1e-5) << node.name;
        EXPECT_EQ(bn->momentum, 0.997) << node.name;
      }
    // v1 18: the stem, two per block (8) and the four projections; v2 50:
    // a pre-activation and two inner ones per block (16) and the last.
    EXPECT_EQ(bns, absl::StrContains(model, "_v2") ? 3 * 16 + 1 : 1 + 2 * 8 + 4);
  }
  // The v2 stem is a bare conv (no bias) straight into the max pool.
  Graph v2 = Build("official_resnet50_v2");
  const std::vector<std::vector<int>> consumers = v2.Consumers();
  for (size_t i = 0; i < v2.nodes.size(); ++i) {
    if (v2.nodes[i].name != "conv0") continue;
    ASSERT_TRUE(std::holds_alternative<ConvDesc>(v2.nodes[i].op));
    EXPECT_FALSE(std::get<ConvDesc>(v2.nodes[i].op).bias);
    ASSERT_EQ(consumers[i].size(), 1u);
    EXPECT_TRUE(std::holds_alternative<PoolDesc>(v2.nodes[consumers[i][0]].op))
        << v2.nodes[consumers[i][0]].name;
  }
}

TEST(OfficialResNetTest, StageShapes) {
  for (const char* model : {"official_resnet18", "official_resnet34_v2", "official_resnet200",
                            "official_resnet152_v2"}) {
    SCOPED_TRACE(model);
    Graph graph = Build(model);
    const bool basic = absl::StrContains(model, "18") || absl::StrContains(model, "34");
    const int64_t expansion = basic ? 1 : 4;
    int64_t hw = 56;
    for (int stage = 1; stage <= 4; ++stage, hw /= 2) {
      const std::string scope = absl::StrCat("stage", stage, "/");
      const Node* last = nullptr;
      for (const Node& node : graph.nodes)
        if (absl::StartsWith(node.name, scope)) last = &node;
      ASSERT_NE(last, nullptr) << scope;
      EXPECT_EQ(last->output, (Shape{1, (int64_t{64} << (stage - 1)) * expansion, hw, hw}))
          << scope;
    }
  }
}

// tf_cnn_benchmarks' CIFAR-10 models at the data set's 10 classes.
constexpr int64_t kCifarClasses = 10;

int Count(const Graph& graph, bool (*is)(const Node&)) {
  int n = 0;
  for (const Node& node : graph.nodes) n += node.kind == Node::Kind::kOp && is(node) ? 1 : 0;
  return n;
}
bool IsConv(const Node& node) { return std::holds_alternative<ConvDesc>(node.op); }
bool IsRelu(const Node& node) { return std::holds_alternative<ReluDesc>(node.op); }
bool IsConcat(const Node& node) { return std::holds_alternative<ConcatDesc>(node.op); }
bool IsChannelPad(const Node& node) { return std::holds_alternative<ChannelPadDesc>(node.op); }
bool IsLrn(const Node& node) { return std::holds_alternative<LrnDesc>(node.op); }

// The last node of a scope ("block1/"): one image's (C, H, W).
Shape ScopeOutput(const Graph& graph, const std::string& scope) {
  const Node* last = nullptr;
  for (const Node& node : graph.nodes)
    if (absl::StartsWith(node.name, scope)) last = &node;
  if (last == nullptr) {
    ADD_FAILURE() << "no scope " << scope;
    return Shape{};
  }
  return Shape{last->output[1], last->output[2], last->output[3]};
}

TEST(CifarModelsTest, ResNetV2ParameterCounts) {
  // create_resnet<6n+2>_v2_cifar_model: conv(3->16) with BN (gamma: the
  // model's batch_norm_config) and ReLU; per block C -> K a bare
  // pre-activation BN (beta only), conv(C->K) with BN, conv(K->K) with
  // neither BN nor bias, a zero-padded shortcut; a bare BN (64 betas) at
  // the end; fc(64 -> 10).
  auto count = [](int n) {
    int64_t total = Conv(3, 16, 3) + Bn(16);
    int64_t in = 16;
    for (int stage = 0; stage < 3; ++stage) {
      const int64_t k = int64_t{16} << stage;
      for (int block = 0; block < n; ++block) {
        const int64_t c = block == 0 ? in : k;
        total += c + Conv(c, k, 3) + Bn(k) + Conv(k, k, 3);
      }
      in = k;
    }
    return total + 64 + 64 * kCifarClasses + kCifarClasses;
  };
  for (const auto& [depth, n] :
       std::vector<std::pair<int, int>>{{20, 3}, {32, 5}, {44, 7}, {56, 9}, {110, 18}}) {
    const std::string model = absl::StrCat("resnet", depth, "_v2");
    EXPECT_EQ(Parameters(model, kCifarClasses), count(n)) << model;
    // v2 trades v1's second BN per block (2K) and the stem's missing ReLU
    // for the pre-activation's betas: a few hundred fewer parameters.
    EXPECT_LT(Parameters(model, kCifarClasses),
              Parameters(absl::StrCat("resnet", depth), kCifarClasses))
        << model;
    Graph graph = Build(model, {.batch = 1, .classes = kCifarClasses});
    EXPECT_EQ(Count(graph, IsConv), 6 * n + 1) << model;  // 6n + 2 weighted layers
    EXPECT_EQ(Count(graph, IsChannelPad), 2) << model;
    // The stem's ReLU, a pre-activation and the first conv's per block, the
    // last: none after the sums (v1 has one there and none at the stem).
    EXPECT_EQ(Count(graph, IsRelu), 6 * n + 2) << model;
    EXPECT_EQ(Count(Build(absl::StrCat("resnet", depth)), IsRelu), 6 * n) << model;
    EXPECT_EQ(ScopeOutput(graph, "stage3/"), (Shape{64, 8, 8})) << model;
  }
  // As docs/models.md gives them.
  EXPECT_EQ(count(3), 269'402);
  EXPECT_EQ(count(5), 463'610);
  EXPECT_EQ(count(7), 657'818);
  EXPECT_EQ(count(9), 852'026);
  EXPECT_EQ(count(18), 1'725'962);
}

// densenet_model.py: conv(3->16, 3x3) with bias; per dense layer on C
// channels BN(C) (gamma and beta), ReLU, conv(C->k, 3x3) with bias, concat
// (C + k); per transition on C: BN(C), ReLU, conv(C->C, 1x1) with bias and
// ReLU, 2x2 average pool; a last BN; fc(C -> 10).
int64_t DenseNetCount(int layers, int64_t k, int64_t classes) {
  int64_t total = Conv(3, 16, 3) + 16;
  int64_t c = 16;
  for (int block = 0; block < 3; ++block) {
    for (int layer = 0; layer < layers; ++layer, c += k) total += Bn(c) + Conv(c, k, 3) + k;
    if (block < 2) total += Bn(c) + Conv(c, c, 1) + c;
  }
  return total + Bn(c) + c * classes + classes;
}

TEST(CifarModelsTest, DenseNetParameterCountsAndShapes) {
  struct Case {
    const char* model;
    int layers;
    int64_t growth;
    int64_t paper;  // Huang et al. 2017, Table 2, in 0.1 M (27.2 M for 27.25 M)
  };
  for (const Case& c :
       {Case{"densenet40_k12", 12, 12, 1'000'000}, Case{"densenet100_k12", 32, 12, 7'000'000},
        Case{"densenet100_k24", 32, 24, 27'200'000}}) {
    SCOPED_TRACE(c.model);
    const int64_t params = Parameters(c.model, kCifarClasses);
    EXPECT_EQ(params, DenseNetCount(c.layers, c.growth, kCifarClasses));
    EXPECT_NEAR(params, c.paper, 60'000);
    Graph graph = Build(c.model, {.batch = 1, .classes = kCifarClasses});
    // Depth 3n + 4: the stem, 3n dense layers, two transitions, the logits.
    EXPECT_EQ(Count(graph, IsConv), 3 * c.layers + 3);
    EXPECT_EQ(Count(graph, IsConcat), 3 * c.layers);
    const int64_t b1 = 16 + c.layers * c.growth, b2 = b1 + c.layers * c.growth,
                  b3 = b2 + c.layers * c.growth;
    EXPECT_EQ(ScopeOutput(graph, "block1/"), (Shape{b1, 32, 32}));
    EXPECT_EQ(ScopeOutput(graph, "transition1/"), (Shape{b1, 16, 16}));
    EXPECT_EQ(ScopeOutput(graph, "block2/"), (Shape{b2, 16, 16}));
    EXPECT_EQ(ScopeOutput(graph, "transition2/"), (Shape{b2, 8, 8}));
    EXPECT_EQ(ScopeOutput(graph, "block3/"), (Shape{b3, 8, 8}));
    EXPECT_EQ(std::get<FcDesc>(graph.nodes[graph.logits].op).ic, b3);
  }
  // As docs/models.md gives them.
  EXPECT_EQ(DenseNetCount(12, 12, 10), 1'020'634);
  EXPECT_EQ(DenseNetCount(32, 12, 10), 6'981'994);
  EXPECT_EQ(DenseNetCount(32, 24, 10), 27'253'738);
}

TEST(CifarModelsTest, AlexNetAndTrivialParameterCounts) {
  // AlexnetCifar10Model: conv(3->64, 5x5) and conv(64->64, 5x5) with
  // biases, SAME 3x3/2 pools (32 -> 16 -> 8), fc(8*8*64 -> 384),
  // fc(384 -> 192), fc(192 -> 10).
  const int64_t alexnet = (Conv(3, 64, 5) + 64) + (Conv(64, 64, 5) + 64) +
                          (8 * 8 * 64 * 384 + 384) + (384 * 192 + 192) +
                          (192 * kCifarClasses + kCifarClasses);
  EXPECT_EQ(alexnet, 1'756'426);
  EXPECT_EQ(Parameters("alexnet_cifar", kCifarClasses), alexnet);
  Graph graph = Build("alexnet_cifar", {.batch = 1, .classes = kCifarClasses});
  EXPECT_EQ(Count(graph, IsLrn), 2);
  EXPECT_EQ(ScopeOutput(graph, "maxpool0"), (Shape{64, 16, 16}));
  EXPECT_EQ(ScopeOutput(graph, "maxpool1"), (Shape{64, 8, 8}));
  // TrivialCifar10Model: fc(32*32*3 -> 1), fc(1 -> 4096), fc(4096 -> 10).
  const int64_t trivial =
      (32 * 32 * 3 + 1) + (4096 + 4096) + (4096 * kCifarClasses + kCifarClasses);
  EXPECT_EQ(trivial, 52'235);
  EXPECT_EQ(Parameters("trivial_cifar", kCifarClasses), trivial);
}

}  // namespace
}  // namespace cnnbench
