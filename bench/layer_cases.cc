#include "bench/layer_cases.h"

#include <variant>

namespace cnnbench::bench {

std::vector<LayerCases> GraphLayerCases(const Graph& graph) {
  // The training step's own rule for which outputs get gradients.
  const std::vector<bool> needs_grad = graph.NeedsGradient();
  std::vector<LayerCases> out;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    if (node.kind != Node::Kind::kOp) continue;
    bool inputs_need_grad = false;
    for (int in : node.inputs) inputs_need_grad = inputs_need_grad || needs_grad[in];
    LayerCases c;
    c.node = static_cast<int>(i);
    c.shape = OpDescToString(node.op);
    if (!node.inputs.empty()) c.input = graph.nodes[node.inputs[0]].output;
    if (std::holds_alternative<ConvDesc>(node.op) || std::holds_alternative<FcDesc>(node.op)) {
      c.family = std::holds_alternative<ConvDesc>(node.op) ? "conv" : "fc";
      c.passes.push_back({"fwd", Pass::kForward});
      if (inputs_need_grad) c.passes.push_back({"bwd_data", Pass::kBackwardData});
      c.passes.push_back({"bwd_filter", Pass::kBackwardWeights});
    } else if (const auto* pool = std::get_if<PoolDesc>(&node.op)) {
      c.family = "pool";
      const std::string alg = pool->algorithm == PoolAlgorithm::kMax ? "max" : "avg";
      c.passes.push_back({alg + "/fwd", Pass::kForward});
      if (inputs_need_grad) c.passes.push_back({alg + "/bwd", Pass::kBackwardData});
    } else if (std::holds_alternative<BatchNormDesc>(node.op)) {
      c.family = "batchnorm";
      c.passes = {{"fwd", Pass::kForward}, {"bwd", Pass::kBackwardData}};
    } else if (std::holds_alternative<ReluDesc>(node.op)) {
      c.family = "relu";
      c.passes.push_back({"fwd", Pass::kForward});
      if (inputs_need_grad) c.passes.push_back({"bwd", Pass::kBackwardData});
    } else {
      continue;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace cnnbench::bench
