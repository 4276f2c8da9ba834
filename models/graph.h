// The network graph the builder produces: layer nodes holding kernel
// descriptors, in an order where every node comes after its inputs.
#ifndef CNNBENCH_MODELS_GRAPH_H_
#define CNNBENCH_MODELS_GRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/shape.h"
#include "kernels/desc.h"

namespace cnnbench {

struct Node {
  enum class Kind { kImages, kLabels, kOp };
  Kind kind = Kind::kOp;
  std::string name;         // "conv3", "incept_v3_a0/conv1", ...
  OpDesc op;                // meaningful for kOp
  std::vector<int> inputs;  // indices of earlier nodes
  Shape output;             // logical output shape
};

struct Graph {
  std::vector<Node> nodes;
  int images = -1;  // the kImages node: (N, C, H, W)
  int labels = -1;  // the kLabels node: (N) int32
  int logits = -1;  // the last fc: (N, classes)
  int loss = -1;    // softmax_xent: the scalar loss
  int64_t batch = 0, classes = 0;

  // Consumers of each node, in node order.
  std::vector<std::vector<int>> Consumers() const;
  // One line per node: "name  op-string  inputs -> shape".
  std::string DebugString() const;
  // Which nodes' outputs need a gradient in a training step: a node with
  // parameters, or one that reads such an output. A layer reading only the
  // images (and labels) runs no backward-data pass.
  std::vector<bool> NeedsGradient() const;
};

}  // namespace cnnbench

#endif  // CNNBENCH_MODELS_GRAPH_H_
