// Parameter and FLOP counts per descriptor, per-image totals and the
// distinct kernel shapes of a graph.
#include "models/summary.h"

#include <string>

#include "gtest/gtest.h"
#include "models/net_builder.h"
#include "models/zoo.h"

namespace cnnbench {
namespace {

TEST(SummaryTest, ParameterCountPerDescriptor) {
  // 3x3 conv 8 -> 16: 16*8*9 weights, plus 16 biases when present.
  ConvDesc conv;
  conv.n = 4;
  conv.c = 8;
  conv.k = 16;
  conv.h = *MakeWindowDim(10, 3, 1, Padding::kSame);
  conv.w = *MakeWindowDim(10, 3, 1, Padding::kSame);
  EXPECT_EQ(ParameterCount(conv), 16 * 8 * 9);
  conv.bias = true;
  EXPECT_EQ(ParameterCount(conv), 16 * 8 * 9 + 16);
  // Depthwise: one 3x3 filter per channel.
  conv.groups = 8;
  conv.k = 8;
  conv.bias = false;
  EXPECT_EQ(ParameterCount(conv), 8 * 9);

  FcDesc fc{.n = 4, .ic = 2048, .oc = 1000, .bias = true};
  EXPECT_EQ(ParameterCount(fc), 2048 * 1000 + 1000);
  fc.bias = false;
  EXPECT_EQ(ParameterCount(fc), 2048 * 1000);

  BatchNormDesc bn;
  bn.dims = {4, 64, 7, 7};
  EXPECT_EQ(ParameterCount(bn), 2 * 64);  // gamma and beta
  bn.scale = false;
  EXPECT_EQ(ParameterCount(bn), 64);  // beta only; running statistics are state
  EXPECT_EQ(ParameterCount(ReluDesc{{4, 64, 7, 7}}), 0);
}

TEST(SummaryTest, ForwardFlopsCountConvAndFcOnly) {
  FcDesc fc{.n = 2, .ic = 10, .oc = 3, .bias = true};
  EXPECT_EQ(ForwardFlops(fc), 2.0 * 2 * 10 * 3);
  EXPECT_EQ(ForwardFlops(ReluDesc{{2, 3, 4, 4}}), 0);
}

TEST(SummaryTest, TotalsArePerImage) {
  auto summarize = [](int64_t batch) {
    NetBuilder b(batch, 3, 8, 8, 10);
    b.Conv(4, {3, 3});  // conv, relu: 4x8x8 each
    b.Logits();         // fc 256 -> 10, loss
    return Summarize(*std::move(b).Build());
  };
  const ModelSummary one = summarize(1), four = summarize(4);
  EXPECT_EQ(one.parameters, 4 * 3 * 9 + 4 + 256 * 10 + 10);
  EXPECT_EQ(four.parameters, one.parameters);
  EXPECT_EQ(one.forward_flops, 2.0 * (4 * 8 * 8 * 3 * 9 + 256 * 10));
  EXPECT_EQ(four.forward_flops, one.forward_flops);
  // images 3x8x8, conv and relu 4x8x8, logits 10; the loss is a scalar.
  EXPECT_EQ(four.activation_bytes, 4 * (3 * 64 + 2 * 4 * 64 + 10));
  ASSERT_EQ(four.layers.size(), 5u);  // images, conv, relu, fc, loss
  EXPECT_EQ(four.layers[0].op, "images");
  EXPECT_EQ(four.layers[1].op, "conv");
  EXPECT_EQ(four.layers[1].output, (Shape{4, 8, 8}));
  EXPECT_EQ(four.layers[4].op, "softmax_xent");
}

TEST(SummaryTest, DistinctKernelShapesCountRepeats) {
  absl::StatusOr<Graph> graph = BuildModel("resnet50", {.batch = 64});
  ASSERT_TRUE(graph.ok()) << graph.status();
  int layers = 0;
  for (const Node& node : graph->nodes) layers += node.kind == Node::Kind::kOp ? 1 : 0;
  int total = 0;
  for (const KernelShape& shape : DistinctKernelShapes(*graph)) {
    total += shape.count;
    // Every line parses back to a descriptor with the same string.
    absl::StatusOr<OpDesc> parsed = ParseOpDesc(shape.desc);
    ASSERT_TRUE(parsed.ok()) << shape.desc << ": " << parsed.status();
    EXPECT_EQ(OpDescToString(*parsed), shape.desc);
  }
  EXPECT_EQ(total, layers);
  // Stage 1's two identity blocks share their 3x3: 64 -> 64 at 56x56, with
  // the first block's too (stride 1 throughout stage 1).
  const std::string conv3x3 = "conv:mb64_ic64oc64_ih56oh56kh3sh1ph1_iw56ow56kw3sw1pw1";
  int found = 0;
  for (const KernelShape& shape : DistinctKernelShapes(*graph))
    if (shape.desc == conv3x3) found = shape.count;
  EXPECT_EQ(found, 3);
}

}  // namespace
}  // namespace cnnbench
