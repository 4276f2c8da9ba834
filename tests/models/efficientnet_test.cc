// EfficientNet B0-B7 against torchvision's efficientnet_b0..b7: parameters
// at 1000 classes exactly, forward multiply-adds within 2% of torchvision's
// (its weights' `_ops`, at each one's crop size), and B0's blocks: 16
// inverted residuals, each with a squeeze-and-excitation multiply, 9
// residual adds each after a drop-path whose rate rises to 0.2.
#include <algorithm>
#include <string>
#include <variant>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "models/summary.h"
#include "models/zoo.h"
#include "tests/models/learn_batch.h"

namespace cnnbench {
namespace {

struct Published {
  const char* name;
  int64_t image_size;
  int64_t parameters;  // torchvision's, 1000 classes
  double giga_macs;    // torchvision's weights' _ops
};

constexpr Published kTorchvision[] = {
    {"efficientnet_b0", 224, 5'288'548, 0.386},   {"efficientnet_b1", 240, 7'794'184, 0.687},
    {"efficientnet_b2", 288, 9'109'994, 1.088},   {"efficientnet_b3", 300, 12'233'232, 1.827},
    {"efficientnet_b4", 380, 19'341'616, 4.394},  {"efficientnet_b5", 456, 30'389'784, 10.266},
    {"efficientnet_b6", 528, 43'040'704, 19.068}, {"efficientnet_b7", 600, 66'347'960, 37.746},
};

TEST(EfficientNetTest, ParametersAndMultiplyAddsAreTorchvisions) {
  for (const Published& p : kTorchvision) {
    absl::StatusOr<ModelInfo> info = FindModel(p.name);
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->image_size, p.image_size) << p.name;
    absl::StatusOr<Graph> graph = BuildModel(p.name, {.batch = 1, .classes = 1000});
    ASSERT_TRUE(graph.ok()) << p.name << ": " << graph.status();
    const ModelSummary summary = Summarize(*graph);
    EXPECT_EQ(summary.parameters, p.parameters) << p.name;
    const double giga_macs = summary.forward_flops / 2e9;
    EXPECT_NEAR(giga_macs, p.giga_macs, 0.02 * p.giga_macs) << p.name;
  }
}

TEST(EfficientNetTest, B0HasSixteenBlocksWithSqueezeExcitationAndNineResiduals) {
  absl::StatusOr<Graph> graph = BuildModel("efficientnet_b0", {.batch = 2});
  ASSERT_TRUE(graph.ok()) << graph.status();
  int multiplies = 0, adds = 0, drops = 0, silus = 0;
  double last_keep = 1.0;
  for (const Node& node : graph->nodes) {
    if (node.kind != Node::Kind::kOp) continue;
    multiplies += std::holds_alternative<ChannelMulDesc>(node.op);
    adds += std::holds_alternative<AddDesc>(node.op);
    if (const auto* drop = std::get_if<DropPathDesc>(&node.op)) {
      ++drops;
      EXPECT_LT(drop->keep, last_keep) << node.name << ": the rate rises block by block";
      EXPECT_EQ(drop->ramp_steps, 0);
      last_keep = drop->keep;
    }
    if (const auto* relu = std::get_if<ReluDesc>(&node.op))
      silus += relu->kind == ActivationKind::kSilu;
  }
  EXPECT_EQ(multiplies, 16);
  EXPECT_EQ(adds, 9);
  EXPECT_EQ(drops, 9);
  // Block 14 of 16: the last (192 to 320 channels) adds nothing.
  EXPECT_NEAR(last_keep, 1.0 - 0.2 * 14 / 16, 1e-12);
  // stem + (15 expansions + 16 depthwise + 16 squeezes) + head.
  EXPECT_EQ(silus, 1 + 15 + 16 + 16 + 1);
  EXPECT_EQ(graph->nodes[graph->images].output, (Shape{2, 3, 224, 224}));
}

// B0 memorising one batch of 4 at 32 px on oneDNN, dropout and drop-path
// drawing as in training: a loss after the first well below it, in fp32
// and in bf16 where the CPU has it.
TEST(EfficientNetTest, B0LearnsABatch) {
  models_test::ExpectLearnsABatch("efficientnet_b0");
}

}  // namespace
}  // namespace cnnbench
