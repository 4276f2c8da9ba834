#include "bench/cases/kernel/layer_cases.h"

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
    LayerCases c =
        std::visit([&](const auto& d) { return LayerCasesOf(d, inputs_need_grad); }, node.op);
    if (!c.family) continue;  // no kernel cases for this op
    c.node = static_cast<int>(i);
    if (!node.inputs.empty()) c.input = graph.nodes[node.inputs[0]].output;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace cnnbench::bench
