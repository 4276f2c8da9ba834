// What a model costs, read off its graph without running it: parameters,
// forward FLOPs, output shapes and activation memory per layer, and the
// distinct kernel descriptors (the shapes a per-layer benchmark runs).
#ifndef CNNBENCH_MODELS_SUMMARY_H_
#define CNNBENCH_MODELS_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/shape.h"
#include "kernels/desc.h"
#include "kernels/op_traits.h"
#include "models/graph.h"

namespace cnnbench {

// ParameterCount(op) and ForwardFlops(op) come from each op's traits
// (kernels/op_traits.h): trainable values of one layer (conv K*C/g*R*S
// (+ K bias), fc IC*OC (+ OC bias), batch norm C beta (+ C gamma with
// scale); running statistics are state, not parameters, as torchvision and
// Keras' "trainable" count them), and forward FLOPs (2 per multiply-add)
// for the descriptor's whole batch, which only conv and fc layers have in
// a model (the published model figures count only theirs).

struct LayerSummary {
  std::string name;  // node name ("stage1/block0/conv2")
  std::string op;    // "images", or OpKind: "conv", "pool", ...
  Shape output;      // one image's output: the node's shape without the batch
  int64_t parameters = 0;
  double forward_flops = 0;      // per image
  int64_t activation_bytes = 0;  // per image, fp32
};

struct ModelSummary {
  int64_t batch = 0, classes = 0;
  std::vector<LayerSummary> layers;  // the images, then every layer in graph order
  int64_t parameters = 0;
  double forward_flops = 0;  // per image
  // Per image, fp32: the images and every layer's output, which is what a
  // training step keeps for backward before any buffer reuse (an upper bound
  // on the executor's activation arena).
  int64_t activation_bytes = 0;
};

ModelSummary Summarize(const Graph& graph);

struct KernelShape {
  std::string desc;  // canonical descriptor string (conv:mb64_ic3oc64_...)
  int count = 0;     // layers of the model with exactly this descriptor
};

// Every distinct layer descriptor of the graph (loss included), in order of
// first appearance.
std::vector<KernelShape> DistinctKernelShapes(const Graph& graph);

}  // namespace cnnbench

#endif  // CNNBENCH_MODELS_SUMMARY_H_
