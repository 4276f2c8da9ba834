// Layer fusion for the training step and the inference plan: a batch norm
// or residual add whose only consumer is a ReLU absorbs it
// (BatchNormDesc::relu, AddDesc::relu), where the backend runs the fused
// op. The ReLU's pass over memory, forward and backward, goes away: oneDNN
// applies it inside the batch norm (a mask in its workspace) or as a
// post-op of the sum, and the backward of a fused add is one masked pass
// that also sums the gradients of its consumers. In forward-only plans a
// convolution absorbs its ReLU too (ConvDesc::relu: oneDNN's eltwise
// post-op, an epilogue on the GPU); which op takes a ReLU in which plan is
// the op's fact (kernels/op_traits.h WithRelu).
#ifndef CNNBENCH_TRAIN_FUSION_H_
#define CNNBENCH_TRAIN_FUSION_H_

#include <functional>
#include <vector>

#include "kernels/desc.h"
#include "kernels/op_traits.h"
#include "models/graph.h"

namespace cnnbench {

struct FusedGraph {
  Graph graph;
  // Per node of `graph`: the node of the original graph it computes (a
  // fused layer: the batch norm or add).
  std::vector<int> origin;
  // Per node of the original graph: the node of `graph` that computes its
  // output (an absorbed ReLU: the layer it was fused into).
  std::vector<int> node_of;
  int fused = 0;  // ReLUs absorbed (batch norms folded, by FoldBatchNormForInference)
  // Per node of `graph`: the node of the original graph whose batch norm was
  // folded into it (FoldBatchNormForInference), or -1.
  std::vector<int> folded_bn;
};

// `runs(op)`: whether the backend runs the fused descriptor; `use`: the
// plan's (a training plan fuses only what has a backward). The fused layer
// is named "<producer>+<relu's last name part>", e.g.
// "stage1/block0/batchnorm1+relu1".
FusedGraph FuseRelu(const Graph& graph, const std::function<bool(const OpDesc&)>& runs,
                    PlanUse use);

// The graph as it is: origin and node_of are the identity.
FusedGraph Unfused(const Graph& graph);

// Inference: dropout and drop-path, the identity outside training, leave
// the graph; each one's readers read its input (node_of maps it to the
// node computing that input), so nothing is copied and the layers around
// it can fuse (a residual add after a drop-path into the convolution
// before it). `fused` counts them.
FusedGraph SkipIdentitiesForInference(const Graph& graph);

// Inference: each batch norm whose input is a convolution read by nothing
// else is folded into it, a convolution with a bias whose weights and bias
// absorb the normalisation with the running statistics (per output channel
// s = gamma / sqrt(var + eps): w' = w s, b' = (b - mean) s + beta), where
// the backend runs the convolution with a bias (`runs`). The folded layer is
// named "<conv>+<batch norm's last name part>"; a ReLU after it stays its own
// layer. origin: the convolution; node_of maps the batch norm to it.
FusedGraph FoldBatchNormForInference(const Graph& graph,
                                     const std::function<bool(const OpDesc&)>& runs);

// Inference: an add whose later input is a convolution read by nothing else
// (no activation of its own, the add's shape) is absorbed into it, a
// convolution with a residual input (ConvDesc::residual: y = f(conv(x) + b
// + shortcut), f the add's fused activation), where the backend runs it
// (`runs`); the shortcut, the add's other input, comes before the
// convolution in the graph. Named "<conv>+<add's last name part>" (after
// FuseRelu: "stage1/block0/conv3+add+relu"); `fused` counts the adds.
FusedGraph FuseResidualAdd(const Graph& graph, const std::function<bool(const OpDesc&)>& runs);

// `second` applied to `first.graph`, as one fusion of `first`'s original
// graph (origin, node_of and folded_bn composed; the counts added).
FusedGraph Compose(const FusedGraph& first, FusedGraph second);

}  // namespace cnnbench

#endif  // CNNBENCH_TRAIN_FUSION_H_
