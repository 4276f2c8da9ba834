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
