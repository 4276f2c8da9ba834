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

// `graph` without the absorbed nodes (each computed by the node it is
// absorbed into, one of its inputs, placed before it) and with the replaced
// ops and names; `added_input`: per node, an input it gains (or -1), which
// comes before it; `folded_bn`: per node of `graph`, the batch norm folded
// into it.
FusedGraph Rebuild(const Graph& graph, const std::vector<int>& absorbed_into,
                   const std::vector<std::optional<OpDesc>>& op,
                   const std::vector<std::string>& name, const std::vector<int>& folded_bn,
                   const std::vector<int>& added_input = {}) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  FusedGraph out;
  out.node_of.assign(num_nodes, -1);
  for (int i = 0; i < num_nodes; ++i) {
    const Node& node = graph.nodes[i];
    if (absorbed_into[i] >= 0) {
      out.node_of[i] = out.node_of[absorbed_into[i]];
      ++out.fused;
      continue;
    }
    Node copy = node;
    if (op[i]) {
      copy.op = *op[i];
      copy.name = name[i];
    }
    if (!added_input.empty() && added_input[i] >= 0) copy.inputs.push_back(added_input[i]);
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

FusedGraph SkipIdentitiesForInference(const Graph& graph) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  std::vector<int> absorbed(num_nodes, -1);
  for (int i = 0; i < num_nodes; ++i) {
    const Node& node = graph.nodes[i];
    if (node.kind != Node::Kind::kOp || node.inputs.size() != 1 || i == graph.logits ||
        i == graph.loss || node.output != graph.nodes[node.inputs[0]].output)
      continue;
    if (std::holds_alternative<DropoutDesc>(node.op) ||
        std::holds_alternative<DropPathDesc>(node.op))
      absorbed[i] = node.inputs[0];
  }
  return Rebuild(graph, absorbed, std::vector<std::optional<OpDesc>>(num_nodes),
                 std::vector<std::string>(num_nodes), std::vector<int>(num_nodes, -1));
}

FusedGraph FoldBatchNormForInference(const Graph& graph,
                                     const std::function<bool(const OpDesc&)>& runs) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  const auto consumers = graph.Consumers();
  std::vector<int> absorbed(num_nodes, -1);
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
    absorbed[b] = p;
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
  std::vector<int> absorbed(num_nodes, -1);
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
    absorbed[r] = p;
    fused_op[p] = std::move(op);
    fused_name[p] = absl::StrCat(producer.name, "+", LastPart(relu.name));
  }

  return Rebuild(graph, absorbed, fused_op, fused_name, std::vector<int>(num_nodes, -1));
}

FusedGraph FuseResidualAdd(const Graph& graph, const std::function<bool(const OpDesc&)>& runs) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  const auto consumers = graph.Consumers();
  std::vector<int> absorbed(num_nodes, -1), added_input(num_nodes, -1);
  std::vector<std::optional<OpDesc>> fused_op(num_nodes);
  std::vector<std::string> fused_name(num_nodes);
  auto fusable_conv = [&](int p, const Node& add) -> const ConvDesc* {
    const Node& conv = graph.nodes[p];
    const auto* d = std::get_if<ConvDesc>(&conv.op);
    if (conv.kind != Node::Kind::kOp || d == nullptr || d->residual ||
        d->activation != ActivationKind::kNone || consumers[p].size() != 1 || fused_op[p] ||
        conv.output != add.output || p == graph.logits || p == graph.loss)
      return nullptr;
    return d;
  };
  for (int a = 0; a < num_nodes; ++a) {
    const Node& add = graph.nodes[a];
    const auto* sum = std::get_if<AddDesc>(&add.op);
    if (add.kind != Node::Kind::kOp || sum == nullptr || add.inputs.size() != 2 ||
        a == graph.logits || a == graph.loss)
      continue;
    // The later input, so the other (the shortcut) is there when it runs.
    int p = std::max(add.inputs[0], add.inputs[1]);
    const int s = std::min(add.inputs[0], add.inputs[1]);
    if (p == s) continue;  // x + x: no shortcut of its own
    const ConvDesc* conv = fusable_conv(p, add);
    if (conv == nullptr) continue;
    ConvDesc fused = *conv;
    fused.residual = true;
    fused.activation = sum->activation;
    if (!runs(fused)) continue;
    absorbed[a] = p;
    added_input[p] = s;
    fused_op[p] = fused;
    fused_name[p] = absl::StrCat(graph.nodes[p].name, "+", LastPart(add.name));
  }
  return Rebuild(graph, absorbed, fused_op, fused_name, std::vector<int>(num_nodes, -1),
                 added_input);
}

}  // namespace cnnbench
