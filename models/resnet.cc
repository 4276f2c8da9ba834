// ResNet v1, v1.5 and v2 for ImageNet as tf_cnn_benchmarks defines them
// (He et al. 2015 and 2016), the basic-block ResNet-18/34 that
// tf_cnn_benchmarks only gets from TensorFlow's official models, those
// official models themselves (official_resnet*), and the CIFAR-10 ResNets
// v1 and v2.
#include <string>

#include "absl/strings/str_cat.h"
#include "models/zoo_models.h"

namespace cnnbench {
namespace {

// tf_cnn_benchmarks' batch_norm_config for ResNet; torchvision's BN has the
// same epsilon and (as 1 - 0.9) momentum.
constexpr BatchNormOptions kResNetBatchNorm = {.epsilon = 1e-5, .momentum = 0.9, .scale = true};
// TensorFlow's official resnet_model: every batch norm (v2's
// pre-activations too) has gamma and beta, decay 0.997, epsilon 1e-5.
constexpr BatchNormOptions kOfficialBatchNorm = {.epsilon = 1e-5, .momentum = 0.997, .scale = true};

// tf_cnn_benchmarks' SAME_RESNET: at stride 1 TensorFlow's SAME; at a larger
// stride a fixed (k-1)/2 on each side, so the output does not depend on the
// parity of the input (and matches torchvision's padding=k/2). The official
// models' fixed_padding pads (k-1)/2 before and k-1-(k-1)/2 after, the same
// for the odd kernels ResNet has, so both sources share it.
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

// A conv with neither batch norm nor bias (v2's projections and last convs).
ConvOptions BareConv(int64_t kernel, int64_t stride) {
  ConvOptions options = ResNetConv(kernel, stride, Activation::kNone, kNoBatchNorm);
  options.bias = false;
  return options;
}

// The shortcut when the block keeps its depth: the input itself, or its
// every stride-th pixel (a 1x1 average pool) when the block subsamples.
int IdentityShortcut(NetBuilder& b, int in, int64_t stride) {
  if (stride == 1) return in;
  b.set_top(in);
  return b.AvgPool({1, 1}, {.stride = stride});
}

// One residual block of an ImageNet ResNet.
struct Block {
  int64_t depth;       // output channels
  int64_t bottleneck;  // the bottleneck convs' width; 0: a basic block (two 3x3 convs)
  int64_t stride;
  bool project;        // a 1x1 projection shortcut (else the identity)
  bool stride_in_3x3;  // a bottleneck's stride in its 3x3 conv (else in its first 1x1)
};

// The main path's convs up to the last one, from the top: a bottleneck's
// 1x1 and 3x3, or a basic block's first 3x3, each with batch norm and ReLU.
void MainPathHead(NetBuilder& b, const Block& k) {
  if (k.bottleneck == 0) {
    b.Conv(k.depth, {3, 3}, ResNetConv(3, k.stride, Activation::kRelu, kWithBatchNorm));
    return;
  }
  const int64_t stride_1x1 = k.stride_in_3x3 ? 1 : k.stride;
  const int64_t stride_3x3 = k.stride_in_3x3 ? k.stride : 1;
  b.Conv(k.bottleneck, {1, 1}, ResNetConv(1, stride_1x1, Activation::kRelu, kWithBatchNorm));
  b.Conv(k.bottleneck, {3, 3}, ResNetConv(3, stride_3x3, Activation::kRelu, kWithBatchNorm));
}

// v1: the projection (with batch norm) or identity, the main path's convs
// with batch norm, the last without ReLU, summed with the shortcut, ReLU.
void BlockV1(NetBuilder& b, const Block& k) {
  const int in = b.top();
  const int shortcut =
      k.project
          ? b.Conv(k.depth, {1, 1}, ResNetConv(1, k.stride, Activation::kNone, kWithBatchNorm))
          : IdentityShortcut(b, in, k.stride);
  b.set_top(in);
  MainPathHead(b, k);
  const int64_t last = k.bottleneck > 0 ? 1 : 3;
  const int residual =
      b.Conv(k.depth, {last, last}, ResNetConv(last, 1, Activation::kNone, kWithBatchNorm));
  b.Add(shortcut, residual);
  b.Relu();
}

// Pre-activation: batch norm and ReLU open the block and feed both paths
// (the projection reads the pre-activation, the identity the bare input);
// the projection and the last conv have neither batch norm nor bias; the
// block's output is the bare sum. `preact` is tf_cnn_benchmarks' bare
// batch_norm() (no gamma) or the official models' batch norm.
void BlockV2(NetBuilder& b, const Block& k, const BatchNormOptions& preact) {
  const int in = b.top();
  b.BatchNorm(preact);
  const int activated = b.Relu();
  const int shortcut = k.project ? b.Conv(k.depth, {1, 1}, BareConv(1, k.stride))
                                 : IdentityShortcut(b, in, k.stride);
  b.set_top(activated);
  MainPathHead(b, k);
  const int64_t last = k.bottleneck > 0 ? 1 : 3;
  const int residual = b.Conv(k.depth, {last, last}, BareConv(last, 1));
  b.Add(shortcut, residual);
}

// tf_cnn_benchmarks' residual_block: v1 is two 3x3 convs with batch norm,
// the second without a ReLU, summed with the shortcut and then a ReLU; v2
// opens with the bare pre-activation (batch norm without gamma, ReLU) of
// the main path only, its second conv has neither batch norm nor bias, and
// the block's output is the bare sum. Where the depth grows, the shortcut
// is the input's every stride-th pixel (a 1x1 average pool) with zero
// channels on both sides ("plan A": no parameters).
void CifarBlock(NetBuilder& b, int64_t depth, int64_t stride, ResNetVersion version) {
  const bool v2 = version == ResNetVersion::kV2;
  const int in = b.top();
  const int64_t in_depth = b.top_shape()[1];
  int shortcut = IdentityShortcut(b, in, stride);
  if (in_depth != depth) {
    b.set_top(shortcut);
    const int64_t pad = (depth - in_depth) / 2;
    shortcut = b.PadChannels(pad, depth - in_depth - pad);
  }
  b.set_top(in);
  if (v2) {
    b.BatchNorm(kTfCnnBatchNorm);
    b.Relu();
  }
  b.Conv(depth, {3, 3},
         {.stride = stride,
          .padding = Padding::kSame,
          .activation = Activation::kRelu,
          .batch_norm = kWithBatchNorm});
  const int residual = b.Conv(depth, {3, 3},
                              {.stride = 1,
                               .padding = Padding::kSame,
                               .activation = Activation::kNone,
                               .batch_norm = v2 ? kNoBatchNorm : kWithBatchNorm,
                               .bias = false});
  b.Add(shortcut, residual);
  if (!v2) b.Relu();
}

}  // namespace

void ResNet(NetBuilder& b, const ResNetConfig& config) {
  const bool official = config.source == ResNetSource::kOfficial;
  const bool v2 = config.version == ResNetVersion::kV2;
  b.set_conv_batch_norm(official ? kOfficialBatchNorm : kResNetBatchNorm);
  // The official v2 stem is a bare conv: the first block's pre-activation
  // normalises it.
  b.Conv(64, {7, 7},
         official && v2 ? BareConv(7, 2)
                        : ResNetConv(7, 2, Activation::kRelu, kWithBatchNorm));  // 112 x 112 x 64
  b.MaxPool({3, 3}, {.stride = 2, .padding = Padding::kSame});                   // 56 x 56 x 64
  const BatchNormOptions preact = official ? kOfficialBatchNorm : kTfCnnBatchNorm;
  // Stage outputs at 224: 56 x 56, 28 x 28, 14 x 14, 7 x 7; depth 4x the
  // bottleneck width (64 << stage) for bottleneck blocks.
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t width = int64_t{64} << stage;
    for (int block = 0; block < config.blocks_per_stage[stage]; ++block) {
      b.set_scope(absl::StrCat("stage", stage + 1, "/block", block, "/"));
      Block k{.depth = config.bottleneck ? 4 * width : width,
              .bottleneck = config.bottleneck ? width : 0,
              .stride = stage > 0 && block == 0 ? 2 : 1,
              .project = false,
              .stride_in_3x3 = official || config.version == ResNetVersion::kV1_5};
      // tf_cnn_benchmarks and torchvision project where the shape changes;
      // the official models on every stage's first block, even where it
      // does not (ResNet-18/34's first).
      k.project = block == 0 && (official || k.stride > 1 || b.top_shape()[1] != k.depth);
      if (v2) {
        BlockV2(b, k, preact);
      } else {
        BlockV1(b, k);
      }
    }
  }
  b.set_scope("");
  if (v2) {
    b.BatchNorm(preact);
    b.Relu();
  }
  b.SpatialMean();
}

void ResNetCifar(NetBuilder& b, int blocks_per_stage, ResNetVersion version) {
  const bool v2 = version == ResNetVersion::kV2;
  b.set_conv_batch_norm(kResNetBatchNorm);  // decay 0.9, epsilon 1e-5, scale
  // The stem has no ReLU in v1 (tf_cnn_benchmarks: activation=None), one in v2.
  b.Conv(16, {3, 3},
         {.stride = 1,
          .padding = Padding::kSame,
          .activation = v2 ? Activation::kRelu : Activation::kNone,
          .batch_norm = kWithBatchNorm});
  for (int stage = 0; stage < 3; ++stage)
    for (int block = 0; block < blocks_per_stage; ++block) {
      b.set_scope(absl::StrCat("stage", stage + 1, "/block", block, "/"));
      CifarBlock(b, int64_t{16} << stage, stage > 0 && block == 0 ? 2 : 1, version);
    }
  b.set_scope("");
  if (v2) {
    b.BatchNorm(kTfCnnBatchNorm);
    b.Relu();
  }
  b.SpatialMean();
}

}  // namespace cnnbench
