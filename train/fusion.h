// Layer fusion for the training step: a batch norm or residual add whose
// only consumer is a ReLU absorbs it (BatchNormDesc::relu, AddDesc::relu),
// where the backend runs the fused op. The ReLU's pass over memory, forward
// and backward, goes away: oneDNN applies it inside the batch norm (a mask
// in its workspace) or as a post-op of the sum, and the backward of a fused
// add is one masked pass that also sums the gradients of its consumers.
#ifndef CNNBENCH_TRAIN_FUSION_H_
#define CNNBENCH_TRAIN_FUSION_H_

#include <functional>
#include <vector>

#include "kernels/desc.h"
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
  int fused = 0;  // ReLUs absorbed
};

// `runs(op)`: whether the backend runs the fused descriptor. The fused
// layer is named "<producer>+<relu's last name part>", e.g.
// "stage1/block0/batchnorm1+relu1".
FusedGraph FuseReluForTraining(const Graph& graph, const std::function<bool(const OpDesc&)>& runs);

// The graph as it is: origin and node_of are the identity.
FusedGraph Unfused(const Graph& graph);

}  // namespace cnnbench

#endif  // CNNBENCH_TRAIN_FUSION_H_
