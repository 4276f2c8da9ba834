// The architectures of the zoo, one function per model family, each written
// against NetBuilder from the images up to (not including) the logits. Only
// zoo.cc and the tests include this; users go through BuildModel().
#ifndef CNNBENCH_MODELS_ZOO_MODELS_H_
#define CNNBENCH_MODELS_ZOO_MODELS_H_

#include <array>
#include <cstdint>

#include "models/net_builder.h"

namespace cnnbench {

// tf_cnn_benchmarks' ConvNetBuilder.batch_norm() defaults: what a conv gets
// from the builder-wide `use_batch_norm` switch (Inception v3/v4), and what a
// bare batch_norm() call gets (ResNet v2's pre-activations). No gamma.
inline constexpr BatchNormOptions kTfCnnBatchNorm = {
    .epsilon = 1e-3, .momentum = 0.999, .scale = false};

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

}  // namespace cnnbench

#endif  // CNNBENCH_MODELS_ZOO_MODELS_H_
