// The zoo's entries, one function per family (models/registry_*.cc); zoo.cc
// joins them in this order. Only zoo.cc includes this.
#ifndef CNNBENCH_MODELS_ZOO_REGISTRY_H_
#define CNNBENCH_MODELS_ZOO_REGISTRY_H_

#include <vector>

#include "models/zoo.h"

namespace cnnbench {

std::vector<ModelInfo> ClassicModels();  // trivial ... inception4
std::vector<ModelInfo> ResNetModels();   // the ImageNet ResNets
std::vector<ModelInfo> MobileModels();   // MobileNetV2, v1, EfficientNet, MobileNetV3
std::vector<ModelInfo> RegNetModels();   // torchvision's RegNets and ConvNeXts
std::vector<ModelInfo> NasNetModels();   // NASNet-A
std::vector<ModelInfo> CifarModels();    // tf_cnn_benchmarks' CIFAR-10 models

}  // namespace cnnbench

#endif  // CNNBENCH_MODELS_ZOO_REGISTRY_H_
