#include "models/summary.h"

#include <map>
#include <type_traits>
#include <variant>

namespace cnnbench {

ModelSummary Summarize(const Graph& graph) {
  ModelSummary summary;
  summary.batch = graph.batch;
  summary.classes = graph.classes;
  const double batch = static_cast<double>(graph.batch);
  for (const Node& node : graph.nodes) {
    if (node.kind == Node::Kind::kLabels) continue;
    LayerSummary layer;
    layer.name = node.name;
    // The loss is a scalar for the whole batch: it has no per-image shape.
    if (node.output.rank() > 0) {
      layer.output =
          Shape(std::vector<int64_t>(node.output.dims().begin() + 1, node.output.dims().end()));
      layer.activation_bytes = layer.output.num_elements() * static_cast<int64_t>(sizeof(float));
    }
    if (node.kind == Node::Kind::kImages) {
      layer.op = "images";
    } else {
      layer.op = std::string(OpKind(node.op));
      layer.parameters = ParameterCount(node.op);
      layer.forward_flops = ForwardFlops(node.op) / batch;
    }
    summary.parameters += layer.parameters;
    summary.forward_flops += layer.forward_flops;
    summary.activation_bytes += layer.activation_bytes;
    summary.layers.push_back(std::move(layer));
  }
  return summary;
}

std::vector<KernelShape> DistinctKernelShapes(const Graph& graph) {
  std::vector<KernelShape> shapes;
  std::map<std::string, size_t> index;  // desc -> position in `shapes`
  for (const Node& node : graph.nodes) {
    if (node.kind != Node::Kind::kOp) continue;
    std::string desc = OpDescToString(node.op);
    auto [it, inserted] = index.emplace(desc, shapes.size());
    if (inserted) shapes.push_back({std::move(desc), 0});
    ++shapes[it->second].count;
  }
  return shapes;
}

}  // namespace cnnbench
