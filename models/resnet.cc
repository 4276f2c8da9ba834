// ResNet v1, v1.5 and v2 for ImageNet as tf_cnn_benchmarks defines them
// (He et al. 2015 and 2016), plus the basic-block ResNet-18/34 that
// tf_cnn_benchmarks only gets from TensorFlow's official models.
#include <string>

#include "absl/strings/str_cat.h"
#include "models/zoo_models.h"

namespace cnnbench {
namespace {

// tf_cnn_benchmarks' batch_norm_config for ResNet; torchvision's BN has the
// same epsilon and (as 1 - 0.9) momentum.
constexpr BatchNormOptions kResNetBatchNorm = {.epsilon = 1e-5, .momentum = 0.9, .scale = true};

// tf_cnn_benchmarks' SAME_RESNET: at stride 1 TensorFlow's SAME; at a larger
// stride a fixed (k-1)/2 on each side, so the output does not depend on the
// parity of the input (and matches torchvision's padding=k/2).
ConvOptions ResNetConv(int64_t kernel, int64_t stride, Activation activation, int batch_norm) {
  ConvOptions options{.stride = stride, .activation = activation, .batch_norm = batch_norm};
  if (stride > 1) {
    options.padding = Padding::kExplicit;
    options.pad_h = options.pad_w = (kernel - 1) / 2;
  }
  return options;
}

constexpr int kWithBatchNorm = 1;
constexpr int kNoBatchNorm = 0;

// The shortcut when the block keeps its depth: the input itself, or its
// every stride-th pixel (a 1x1 average pool) when the block subsamples.
int IdentityShortcut(NetBuilder& b, int in, int64_t stride) {
  if (stride == 1) return in;
  b.set_top(in);
  return b.AvgPool({1, 1}, {.stride = stride});
}

void BottleneckV1(NetBuilder& b, int64_t depth, int64_t bottleneck, int64_t stride,
                  bool stride_in_3x3) {
  const int in = b.top();
  const int shortcut =
      b.top_shape()[1] == depth
          ? IdentityShortcut(b, in, stride)
          : b.Conv(depth, {1, 1}, ResNetConv(1, stride, Activation::kNone, kWithBatchNorm));
  b.set_top(in);
  b.Conv(bottleneck, {1, 1},
         ResNetConv(1, stride_in_3x3 ? 1 : stride, Activation::kRelu, kWithBatchNorm));
  b.Conv(bottleneck, {3, 3},
         ResNetConv(3, stride_in_3x3 ? stride : 1, Activation::kRelu, kWithBatchNorm));
  const int residual = b.Conv(depth, {1, 1}, ResNetConv(1, 1, Activation::kNone, kWithBatchNorm));
  b.Add(shortcut, residual);
  b.Relu();
}

// Pre-activation: BN and ReLU open the block and feed both paths; the block's
// output is the bare sum. The opening BN is tf_cnn_benchmarks' bare
// batch_norm() (no gamma), and the projection and last conv have neither BN
// nor bias.
void BottleneckV2(NetBuilder& b, int64_t depth, int64_t bottleneck, int64_t stride) {
  const int in = b.top();
  b.BatchNorm(kTfCnnBatchNorm);
  const int preact = b.Relu();
  ConvOptions projection = ResNetConv(1, stride, Activation::kNone, kNoBatchNorm);
  projection.bias = false;
  const int shortcut =
      b.shape(in)[1] == depth ? IdentityShortcut(b, in, stride) : b.Conv(depth, {1, 1}, projection);
  b.set_top(preact);
  b.Conv(bottleneck, {1, 1}, ResNetConv(1, stride, Activation::kRelu, kWithBatchNorm));
  b.Conv(bottleneck, {3, 3}, ResNetConv(3, 1, Activation::kRelu, kWithBatchNorm));
  ConvOptions last = ResNetConv(1, 1, Activation::kNone, kNoBatchNorm);
  last.bias = false;
  const int residual = b.Conv(depth, {1, 1}, last);
  b.Add(shortcut, residual);
}

// Two 3x3 convs; a 1x1 projection (with BN) when the shape changes, as
// torchvision's BasicBlock and the official TensorFlow ResNet v1.
void BasicBlockV1(NetBuilder& b, int64_t depth, int64_t stride) {
  const int in = b.top();
  const int shortcut =
      b.top_shape()[1] == depth && stride == 1
          ? in
          : b.Conv(depth, {1, 1}, ResNetConv(1, stride, Activation::kNone, kWithBatchNorm));
  b.set_top(in);
  b.Conv(depth, {3, 3}, ResNetConv(3, stride, Activation::kRelu, kWithBatchNorm));
  const int residual = b.Conv(depth, {3, 3}, ResNetConv(3, 1, Activation::kNone, kWithBatchNorm));
  b.Add(shortcut, residual);
  b.Relu();
}

}  // namespace

// tf_cnn_benchmarks' residual_block (v1): two 3x3 convs with batch norm,
// the second without a ReLU, summed with the shortcut and then a ReLU; where
// the depth grows, the shortcut is the input's every stride-th pixel (a 1x1
// average pool) with zero channels on both sides ("plan A": no parameters).
void CifarBlock(NetBuilder& b, int64_t depth, int64_t stride) {
  const int in = b.top();
  const int64_t in_depth = b.top_shape()[1];
  int shortcut = IdentityShortcut(b, in, stride);
  if (in_depth != depth) {
    b.set_top(shortcut);
    const int64_t pad = (depth - in_depth) / 2;
    shortcut = b.PadChannels(pad, depth - in_depth - pad);
  }
  b.set_top(in);
  b.Conv(depth, {3, 3},
         {.stride = stride,
          .padding = Padding::kSame,
          .activation = Activation::kRelu,
          .batch_norm = kWithBatchNorm});
  const int residual = b.Conv(depth, {3, 3},
                              {.stride = 1,
                               .padding = Padding::kSame,
                               .activation = Activation::kNone,
                               .batch_norm = kWithBatchNorm});
  b.Add(shortcut, residual);
  b.Relu();
}

void ResNet(NetBuilder& b, const ResNetConfig& config) {
  b.set_conv_batch_norm(kResNetBatchNorm);
  b.Conv(64, {7, 7}, ResNetConv(7, 2, Activation::kRelu, kWithBatchNorm));  // 112 x 112 x 64
  b.MaxPool({3, 3}, {.stride = 2, .padding = Padding::kSame});              // 56 x 56 x 64
  // Stage outputs at 224: 56 x 56, 28 x 28, 14 x 14, 7 x 7; depth 4x the
  // bottleneck width (64 << stage) for bottleneck blocks.
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t width = int64_t{64} << stage;
    for (int block = 0; block < config.blocks_per_stage[stage]; ++block) {
      b.set_scope(absl::StrCat("stage", stage + 1, "/block", block, "/"));
      const int64_t stride = stage > 0 && block == 0 ? 2 : 1;
      if (!config.bottleneck) {
        BasicBlockV1(b, width, stride);
      } else if (config.version == ResNetVersion::kV2) {
        BottleneckV2(b, 4 * width, width, stride);
      } else {
        BottleneckV1(b, 4 * width, width, stride, config.version == ResNetVersion::kV1_5);
      }
    }
  }
  b.set_scope("");
  if (config.bottleneck && config.version == ResNetVersion::kV2) {
    b.BatchNorm(kTfCnnBatchNorm);
    b.Relu();
  }
  b.SpatialMean();
}

void ResNetCifar(NetBuilder& b, int blocks_per_stage) {
  b.set_conv_batch_norm(kResNetBatchNorm);  // decay 0.9, epsilon 1e-5, scale
  // The stem has no ReLU in v1 (tf_cnn_benchmarks: activation=None).
  b.Conv(16, {3, 3},
         {.stride = 1,
          .padding = Padding::kSame,
          .activation = Activation::kNone,
          .batch_norm = kWithBatchNorm});
  for (int stage = 0; stage < 3; ++stage)
    for (int block = 0; block < blocks_per_stage; ++block) {
      b.set_scope(absl::StrCat("stage", stage + 1, "/block", block, "/"));
      CifarBlock(b, int64_t{16} << stage, stage > 0 && block == 0 ? 2 : 1);
    }
  b.set_scope("");
  b.SpatialMean();
}

}  // namespace cnnbench
