// The architectures of the zoo, one function per model family, each written
// against NetBuilder from the images up to (not including) the logits. Only
// zoo.cc and the tests include this; users go through BuildModel().
#ifndef CNNBENCH_MODELS_ZOO_MODELS_H_
#define CNNBENCH_MODELS_ZOO_MODELS_H_

#include <array>
#include <cstdint>
#include <vector>

#include "models/net_builder.h"

namespace cnnbench {

// tf_cnn_benchmarks' ConvNetBuilder.batch_norm() defaults: what a conv gets
// from the builder-wide `use_batch_norm` switch (Inception v3/v4), and what a
// bare batch_norm() call gets (ResNet v2's pre-activations). No gamma.
inline constexpr BatchNormOptions kTfCnnBatchNorm = {
    .epsilon = 1e-3, .momentum = 0.999, .scale = false};

// efficientnet.cc: one definition scaled by width and depth (torchvision's
// width_mult and depth_mult), with its dropout before the logits and the
// stochastic depth rate its last block reaches.
struct EfficientNetConfig {
  double width = 1.0, depth = 1.0;
  double dropout = 0.2;
  double stochastic_depth = 0.2;
};
void EfficientNet(NetBuilder& b, const EfficientNetConfig& config);
// mobilenet_v3.cc: torchvision's mobilenet_v3_large and mobilenet_v3_small,
// up to the dropout before the logits (the classifier's hidden layer
// included).
enum class MobileNetV3Size { kLarge, kSmall };
void MobileNetV3(NetBuilder& b, MobileNetV3Size size);
// regnet.cc: torchvision's RegNets (Radosavovic et al. 2020), from the
// design space's parameters: `depth` blocks whose widths follow
// w_0 + w_a * i quantised to powers of w_m (multiples of 8), grouped
// convolutions of `group_width` channels per group, squeeze-and-excitation
// at `se_ratio` of each block's input (0: none, RegNetX).
struct RegNetConfig {
  int64_t depth = 16;
  double w_0 = 48, w_a = 27.89, w_m = 2.09;
  int64_t group_width = 8;
  double se_ratio = 0.25;
};
void RegNet(NetBuilder& b, const RegNetConfig& config);
// convnext.cc: torchvision's ConvNeXts (Liu et al. 2022): four stages of
// `widths` channels and `depths` blocks, stochastic depth rising to
// `stochastic_depth` at the last block.
struct ConvNeXtConfig {
  std::array<int64_t, 4> widths = {96, 192, 384, 768};
  std::array<int64_t, 4> depths = {3, 3, 9, 3};
  double stochastic_depth = 0.1;
};
void ConvNeXt(NetBuilder& b, const ConvNeXtConfig& config);
// simple.cc
void Trivial(NetBuilder& b);
void LeNet(NetBuilder& b);
void OverFeat(NetBuilder& b);
// alexnet.cc
void AlexNet(NetBuilder& b);
// vgg.cc: convolutions per stage, {1,1,2,2,2} (A, vgg11) to {2,2,4,4,4} (E, vgg19).
void Vgg(NetBuilder& b, const std::array<int, 5>& convs_per_stage);
// googlenet.cc
void GoogLeNet(NetBuilder& b);
// inception.cc
void InceptionV3(NetBuilder& b);
void InceptionV4(NetBuilder& b);

// resnet.cc
enum class ResNetVersion {
  kV1,    // stride in the first 1x1 conv of a bottleneck (the paper's Caffe model)
  kV1_5,  // stride in the 3x3 conv (fb.resnet.torch, torchvision)
  kV2,    // pre-activation (He et al., "Identity Mappings in Deep Residual Networks")
};
// Whose definition: tf_cnn_benchmarks' resnet_model.py, or TensorFlow's
// official models' resnet_model.py (tf_cnn_benchmarks' official_resnet*).
// The official one puts a bottleneck's stride in its 3x3 conv in v1 and v2
// alike (so its v1 is what tf_cnn_benchmarks calls v1.5), projects on every
// stage's first block (ResNet-18/34's first too), gives every batch norm
// gamma, decay 0.997 and epsilon 1e-5, and starts v2 with a bare conv.
enum class ResNetSource { kTfCnnBenchmarks, kOfficial };
struct ResNetConfig {
  std::array<int, 4> blocks_per_stage = {3, 4, 6, 3};
  bool bottleneck = true;  // false: two 3x3 convs per block (ResNet-18/34)
  ResNetVersion version = ResNetVersion::kV1;
  ResNetSource source = ResNetSource::kTfCnnBenchmarks;
};
void ResNet(NetBuilder& b, const ResNetConfig& config);
// tf_cnn_benchmarks' CIFAR-10 ResNet (He et al. 2015, section 4.2; v2: He
// et al. 2016) of depth 6n + 2: a 3x3 conv of 16, three stages of n basic
// blocks (16, 32, 64 channels at 32, 16, 8 px), the depth growing through a
// zero-padded subsampled shortcut. kV1 or kV2.
void ResNetCifar(NetBuilder& b, int blocks_per_stage,
                 ResNetVersion version = ResNetVersion::kV1);

// mobilenet.cc
void MobileNetV1(NetBuilder& b);
// MobileNetV2 (Sandler et al. 2018), up to the dropout before the logits.
void MobileNetV2(NetBuilder& b);

// The CIFAR-10 forms (32 x 32 images); trivial's is Trivial() itself.
// alexnet.cc: TensorFlow's CIFAR-10 tutorial network.
void AlexNetCifar(NetBuilder& b);
// densenet.cc: Huang et al. 2017's DenseNet for CIFAR (no bottleneck, no
// compression), three dense blocks of `layers_per_block` layers, each adding
// `growth_rate` channels.
void DenseNetCifar(NetBuilder& b, int layers_per_block, int64_t growth_rate);

// nasnet.cc: NASNet-A. A cell's operations, as nasnet_utils names them
// (separable_kxk_2: two stacked separable convs; none: the identity).
enum class NasNetOp {
  kSeparable3x3,
  kSeparable5x5,
  kSeparable7x7,
  kAvgPool3x3,
  kMaxPool3x3,
  kIdentity
};
// A cell as data: five combinations, each the sum of two (operation, hidden
// state) pairs; hidden states are 0 (this cell's input after ReLU, 1x1 conv
// and batch norm), 1 (the previous cell's output, matched in size), then
// each combination's sum in order. The cell's output concatenates the
// states no combination used.
struct NasNetCell {
  struct Input {
    NasNetOp op;
    int state;
  };
  std::array<std::array<Input, 2>, 5> ops;
  std::array<bool, 7> used;
};
extern const NasNetCell kNasNetANormalCell;
extern const NasNetCell kNasNetAReductionCell;
// nasnet_model.py's configurations (mobile, large, CIFAR).
struct NasNetConfig {
  int num_cells = 12;  // normal cells (the reduction and stem cells come on top)
  int64_t filters = 44;
  double stem_multiplier = 1.0;
  bool imagenet_stem = true;  // conv 3x3 stride 2 and two reduction cells; else CIFAR's conv
  bool skip_reduction_layer_input = false;
  double drop_path_keep = 1.0;  // 1: no drop-path
  int64_t total_training_steps = 250000;
  BatchNormOptions batch_norm = {.epsilon = 1e-3, .momentum = 0.9997, .scale = true};
};
inline constexpr NasNetConfig kNasNetMobile = {};
inline constexpr NasNetConfig kNasNetLarge = {.num_cells = 18,
                                              .filters = 168,
                                              .stem_multiplier = 3.0,
                                              .skip_reduction_layer_input = true,
                                              .drop_path_keep = 0.7};
inline constexpr NasNetConfig kNasNetCifar = {
    .num_cells = 18,
    .filters = 32,
    .stem_multiplier = 3.0,
    .imagenet_stem = false,
    .drop_path_keep = 0.6,
    .total_training_steps = 937500,
    .batch_norm = {.epsilon = 1e-5, .momentum = 0.9, .scale = true}};
void NasNet(NetBuilder& b, const NasNetConfig& config);
// Drop-path's keep probability of a cell (nasnet_utils' layer scaling):
// 1 - (cell_num + 1) / total_cells * (1 - keep); the kernel ramps it with
// the step (kernels/drop_path.h).
double NasNetCellKeep(double keep, int cell_num, int total_cells);
// The normal cells a reduction cell precedes (calc_reduction_layers).
std::vector<int> NasNetReductionIndices(int num_cells);
// The kernel size of a separable or pooling op (1 for the identity).
int64_t NasNetOpKernel(NasNetOp op);

}  // namespace cnnbench

#endif  // CNNBENCH_MODELS_ZOO_MODELS_H_
