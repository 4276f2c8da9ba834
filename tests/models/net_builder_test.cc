#include "models/net_builder.h"

#include "gtest/gtest.h"

namespace cnnbench {
namespace {

TEST(NetBuilderTest, TracksShapesThroughLayers) {
  NetBuilder b(2, 3, 227, 227, 1001);
  b.Conv(64, {11, 11}, {.stride = 4, .padding = Padding::kValid});
  EXPECT_EQ(b.top_shape(), (Shape{2, 64, 55, 55}));
  b.MaxPool({3, 3}, {.stride = 2});
  EXPECT_EQ(b.top_shape(), (Shape{2, 64, 27, 27}));
  b.Conv(192, {5, 5});
  EXPECT_EQ(b.top_shape(), (Shape{2, 192, 27, 27}));
  b.Fc(4096);
  EXPECT_EQ(b.top_shape(), (Shape{2, 4096}));
  b.Dropout(0.5);
  b.Logits();
  auto graph = std::move(b).Build();
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->nodes[graph->logits].output, (Shape{2, 1001}));
  EXPECT_EQ(graph->nodes[graph->loss].output, Shape{});
  // conv, relu, pool, conv, relu, fc, relu, dropout, fc, loss + images, labels.
  EXPECT_EQ(graph->nodes.size(), 12u);
  for (size_t i = 0; i < graph->nodes.size(); ++i)
    for (int in : graph->nodes[i].inputs) EXPECT_LT(in, static_cast<int>(i));
}

TEST(NetBuilderTest, BatchNormConvHasNoBias) {
  NetBuilder b(1, 3, 8, 8, 10, /*batch_norm_by_default=*/true);
  const int conv_node = b.Conv(4, {3, 3}) - 2;  // conv -> bn -> relu (the top)
  b.Logits();
  auto graph = std::move(b).Build();
  ASSERT_TRUE(graph.ok());
  const auto& conv = std::get<ConvDesc>(graph->nodes[conv_node].op);
  EXPECT_FALSE(conv.bias);
  EXPECT_TRUE(std::holds_alternative<BatchNormDesc>(graph->nodes[conv_node + 1].op));
  EXPECT_TRUE(std::holds_alternative<ReluDesc>(graph->nodes[conv_node + 2].op));
}

TEST(NetBuilderTest, BranchesConcatAndResidual) {
  NetBuilder b(2, 8, 16, 16, 10);
  const int in = b.top();
  const int a = b.Conv(16, {1, 1});
  b.set_top(in);
  const int c = b.Conv(32, {3, 3});
  b.Concat({a, c});
  EXPECT_EQ(b.top_shape(), (Shape{2, 48, 16, 16}));
  const int shortcut = b.top();
  b.Conv(48, {3, 3}, {.activation = Activation::kNone});
  b.Add(b.top(), shortcut);
  EXPECT_EQ(b.top_shape(), (Shape{2, 48, 16, 16}));
  b.Logits();
  EXPECT_TRUE(std::move(b).Build().ok());
}

TEST(NetBuilderTest, KernelLargerThanInputNamesTheLayer) {
  NetBuilder b(1, 3, 5, 5, 10);
  b.Conv(4, {3, 3});
  b.Conv(4, {7, 7}, {.padding = Padding::kValid});  // 5x5 input, 7x7 VALID kernel
  b.Logits();
  auto graph = std::move(b).Build();
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(graph.status().message().find("conv1"), absl::string_view::npos)
      << graph.status().message();
}

TEST(NetBuilderTest, ConcatMismatchNamesBothInputs) {
  NetBuilder b(1, 3, 8, 8, 10);
  const int in = b.top();
  const int a = b.Conv(4, {3, 3});
  b.set_top(in);
  const int c = b.Conv(4, {3, 3}, {.stride = 2});
  b.Concat({a, c});
  b.Logits();
  auto graph = std::move(b).Build();
  ASSERT_FALSE(graph.ok());
  const std::string msg(graph.status().message());
  EXPECT_NE(msg.find("concat"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[1,4,4,4]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[1,4,8,8]"), std::string::npos) << msg;
}

// The channel multiply takes (N,C,1,1) or an fc's (N,C) scales; another
// shape is an error naming both layers and the shapes it takes.
TEST(NetBuilderTest, ChannelMulTakesPerChannelScalesOnly) {
  NetBuilder b(2, 3, 8, 8, 10);
  const int x = b.Conv(16, {3, 3});
  b.SpatialMean();
  b.Conv(16, {1, 1}, {.activation = Activation::kSigmoid});
  b.ChannelMul(x, b.top());
  EXPECT_EQ(b.top_shape(), (Shape{2, 16, 8, 8}));
  b.Fc(16, {.activation = Activation::kHardSigmoid});
  b.ChannelMul(x, b.top());
  EXPECT_EQ(b.top_shape(), (Shape{2, 16, 8, 8}));
  b.Logits();
  EXPECT_TRUE(std::move(b).Build().ok());

  NetBuilder bad(2, 3, 8, 8, 10);
  const int y = bad.Conv(16, {3, 3});
  bad.Fc(8);
  bad.ChannelMul(y, bad.top());
  bad.Logits();
  auto graph = std::move(bad).Build();
  ASSERT_FALSE(graph.ok());
  const std::string msg(graph.status().message());
  EXPECT_NE(msg.find("chmul"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[2,8]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("needs (2,16,1,1) or (2,16)"), std::string::npos) << msg;
}

TEST(NetBuilderTest, MissingLogitsAndBadInput) {
  NetBuilder b(1, 3, 8, 8, 10);
  b.Conv(4, {3, 3});
  EXPECT_FALSE(std::move(b).Build().ok());
  NetBuilder bad(0, 3, 8, 8, 10);
  bad.Logits();
  EXPECT_FALSE(std::move(bad).Build().ok());
}

}  // namespace
}  // namespace cnnbench

namespace cnnbench {
namespace {

TEST(NetBuilderTest, SpatialMeanAveragesTheWholeImage) {
  NetBuilder b(2, 3, 9, 7, 10);
  b.Conv(4, {3, 3});
  const int mean = b.SpatialMean();
  EXPECT_EQ(b.top_shape(), (Shape{2, 4, 1, 1}));
  b.Logits();
  auto graph = std::move(b).Build();
  ASSERT_TRUE(graph.ok()) << graph.status();
  const auto& pool = std::get<PoolDesc>(graph->nodes[mean].op);
  EXPECT_EQ(pool.h.kernel, 9);
  EXPECT_EQ(pool.w.kernel, 7);
  EXPECT_NE(pool.algorithm, PoolAlgorithm::kMax);
}

TEST(NetBuilderTest, ConvBiasCanBeTurnedOff) {
  NetBuilder b(1, 3, 8, 8, 10);
  const int with_bias = b.Conv(4, {1, 1}, {.activation = Activation::kNone});
  const int without = b.Conv(4, {1, 1}, {.activation = Activation::kNone, .bias = false});
  b.Logits();
  auto graph = std::move(b).Build();
  ASSERT_TRUE(graph.ok());
  EXPECT_TRUE(std::get<ConvDesc>(graph->nodes[with_bias].op).bias);
  EXPECT_FALSE(std::get<ConvDesc>(graph->nodes[without].op).bias);
}

TEST(NetBuilderTest, ConvBatchNormTakesTheBuilderConfig) {
  NetBuilder b(1, 3, 8, 8, 10, /*batch_norm_by_default=*/true);
  b.set_conv_batch_norm({.epsilon = 1e-5, .momentum = 0.9, .scale = false});
  const int bn = b.Conv(4, {3, 3}, {.activation = Activation::kNone});
  const int explicit_bn = b.BatchNorm();  // its own (default) options
  b.Logits();
  auto graph = std::move(b).Build();
  ASSERT_TRUE(graph.ok());
  const auto& conv_bn = std::get<BatchNormDesc>(graph->nodes[bn].op);
  EXPECT_EQ(conv_bn.epsilon, 1e-5);
  EXPECT_EQ(conv_bn.momentum, 0.9);
  EXPECT_FALSE(conv_bn.scale);
  EXPECT_TRUE(std::get<BatchNormDesc>(graph->nodes[explicit_bn].op).scale);
}

}  // namespace
}  // namespace cnnbench
