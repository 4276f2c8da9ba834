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

// `graph` without the absorbed nodes (each computed by the node its first
// input is computed by, placed before it) and with the replaced ops and
// names; `folded_bn`: per node of `graph`, the batch norm folded into it.
FusedGraph Rebuild(const Graph& graph, const std::vector<bool>& absorbed,
                   const std::vector<std::optional<OpDesc>>& op,
                   const std::vector<std::string>& name, const std::vector<int>& folded_bn) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  FusedGraph out;
  out.node_of.assign(num_nodes, -1);
  for (int i = 0; i < num_nodes; ++i) {
    const Node& node = graph.nodes[i];
    if (absorbed[i]) {
      out.node_of[i] = out.node_of[node.inputs[0]];
      ++out.fused;
      continue;
    }
    Node copy = node;
    if (op[i]) {
      copy.op = *op[i];
      copy.name = name[i];
    }
    for (int& in : copy.inputs) in = out.node_of[in];
    out.node_of[i] = static_cast<int>(out.graph.nodes.size());
    out.origin.push_back(i);
    out.folded_bn.push_back(folded_bn[i]);
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

}  // namespace

FusedGraph Unfused(const Graph& graph) {
  FusedGraph out;
  out.graph = graph;
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i) {
    out.origin.push_back(i);
    out.node_of.push_back(i);
  }
  out.folded_bn.assign(graph.nodes.size(), -1);
  return out;
}

FusedGraph FoldBatchNormForInference(const Graph& graph,
                                     const std::function<bool(const OpDesc&)>& runs) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  const auto consumers = graph.Consumers();
  std::vector<bool> absorbed(num_nodes, false);
  std::vector<int> bn_of(num_nodes, -1);  // conv -> the batch norm folded into it
  std::vector<std::optional<OpDesc>> folded_op(num_nodes);
  std::vector<std::string> folded_name(num_nodes);
  for (int b = 0; b < num_nodes; ++b) {
    const Node& bn = graph.nodes[b];
    if (bn.kind != Node::Kind::kOp || !std::holds_alternative<BatchNormDesc>(bn.op) ||
        bn.inputs.size() != 1 || std::get<BatchNormDesc>(bn.op).activation != ActivationKind::kNone)
      continue;
    const int p = bn.inputs[0];
    const Node& conv = graph.nodes[p];
    if (conv.kind != Node::Kind::kOp || !std::holds_alternative<ConvDesc>(conv.op) ||
        consumers[p].size() != 1 || bn_of[p] >= 0 || conv.output != bn.output || b == graph.logits)
      continue;
    ConvDesc with_bias = std::get<ConvDesc>(conv.op);
    with_bias.bias = true;
    if (!runs(with_bias)) continue;
    absorbed[b] = true;
    bn_of[p] = b;
    folded_op[p] = with_bias;
    folded_name[p] = absl::StrCat(conv.name, "+", LastPart(bn.name));
  }
  return Rebuild(graph, absorbed, folded_op, folded_name, bn_of);
}

FusedGraph Compose(const FusedGraph& first, FusedGraph second) {
  FusedGraph out;
  out.graph = std::move(second.graph);
  out.fused = first.fused + second.fused;
  for (size_t i = 0; i < second.origin.size(); ++i) {
    const int middle = second.origin[i];
    out.origin.push_back(first.origin[middle]);
    const int bn = second.folded_bn.empty() ? -1 : second.folded_bn[i];
    out.folded_bn.push_back(bn >= 0 ? first.origin[bn]
                                    : (first.folded_bn.empty() ? -1 : first.folded_bn[middle]));
  }
  for (int middle : first.node_of) out.node_of.push_back(second.node_of[middle]);
  return out;
}

FusedGraph FuseRelu(const Graph& graph, const std::function<bool(const OpDesc&)>& runs,
                    PlanUse use) {
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
    std::optional<OpDesc> op = WithActivation(producer.op, std::get<ReluDesc>(relu.op).kind, use);
    if (!op || !runs(*op)) continue;
    absorbed[r] = true;
    fused_op[p] = std::move(op);
    fused_name[p] = absl::StrCat(producer.name, "+", LastPart(relu.name));
  }

  return Rebuild(graph, absorbed, fused_op, fused_name, std::vector<int>(num_nodes, -1));
}

}  // namespace cnnbench
