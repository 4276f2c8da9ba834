#include "train/fusion.h"

#include <optional>
#include <string>
#include <variant>

#include "absl/strings/str_cat.h"
#include "kernels/op_traits.h"

namespace cnnbench {
namespace {

std::string LastPart(const std::string& name) {
  const size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

}  // namespace

FusedGraph Unfused(const Graph& graph) {
  FusedGraph out;
  out.graph = graph;
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i) {
    out.origin.push_back(i);
    out.node_of.push_back(i);
  }
  return out;
}

FusedGraph FuseReluForTraining(const Graph& graph, const std::function<bool(const OpDesc&)>& runs) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  const auto consumers = graph.Consumers();
  // absorbed[r]: ReLU node r is fused into its producer; fused_op[p]: the
  // producer's new op.
  std::vector<bool> absorbed(num_nodes, false);
  std::vector<std::optional<OpDesc>> fused_op(num_nodes);
  std::vector<std::string> fused_name(num_nodes);
  for (int r = 0; r < num_nodes; ++r) {
    const Node& relu = graph.nodes[r];
    if (relu.kind != Node::Kind::kOp || !std::holds_alternative<ReluDesc>(relu.op) ||
        relu.inputs.size() != 1)
      continue;
    const int p = relu.inputs[0];
    const Node& producer = graph.nodes[p];
    if (producer.kind != Node::Kind::kOp || consumers[p].size() != 1 || fused_op[p] ||
        p == graph.logits || p == graph.loss || r == graph.logits || r == graph.loss)
      continue;
    // Same elements in the same order: the ReLU reads the producer's output as it is.
    if (producer.output != relu.output) continue;
    std::optional<OpDesc> op = WithRelu(producer.op);
    if (!op || !runs(*op)) continue;
    absorbed[r] = true;
    fused_op[p] = std::move(op);
    fused_name[p] = absl::StrCat(producer.name, "+", LastPart(relu.name));
  }

  FusedGraph out;
  out.node_of.assign(num_nodes, -1);
  for (int i = 0; i < num_nodes; ++i) {
    const Node& node = graph.nodes[i];
    if (absorbed[i]) {
      out.node_of[i] = out.node_of[node.inputs[0]];  // the fused producer, placed already
      ++out.fused;
      continue;
    }
    Node copy = node;
    if (fused_op[i]) {
      copy.op = *fused_op[i];
      copy.name = fused_name[i];
    }
    for (int& in : copy.inputs) in = out.node_of[in];
    out.node_of[i] = static_cast<int>(out.graph.nodes.size());
    out.origin.push_back(i);
    out.graph.nodes.push_back(std::move(copy));
  }
  auto remap = [&](int index) { return index < 0 ? index : out.node_of[index]; };
  out.graph.images = remap(graph.images);
  out.graph.labels = remap(graph.labels);
  out.graph.logits = remap(graph.logits);
  out.graph.loss = remap(graph.loss);
  out.graph.batch = graph.batch;
  out.graph.classes = graph.classes;
  return out;
}

}  // namespace cnnbench
