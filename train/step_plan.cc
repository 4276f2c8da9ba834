// PlanStep and its phases: graph checks and fusion, kernels and layouts,
// buffer requests and lifetimes, the memory plan, the persistent blocks'
// layout and the footprint checks.
#include "train/step_plan.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/compile_log.h"
#include "core/status.h"
#include "kernels/op_traits.h"
#include "train/fusion.h"

namespace cnnbench {
namespace {

absl::Status WithContext(const absl::Status& s, absl::string_view what) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
}

// ---- Phase 1: kernels, in forward order; layouts flow from producer to consumer. ----
absl::Status CreateKernels(const Graph& graph, Backend* backend, StepPlan& plan) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  std::vector<TensorSpec> output_spec(num_nodes);
  plan.layer_of.assign(num_nodes, -1);  // node order was checked by PlanStep, before fusion
  // Forward only: no node needs a gradient, so no layer requests one.
  const std::vector<bool> needs_grad = plan.options.forward_only
                                           ? std::vector<bool>(graph.nodes.size(), false)
                                           : graph.NeedsGradient();
  plan.images_spec = TensorSpec::Plain(plan.activation_type, graph.nodes[graph.images].output);
  output_spec[graph.images] = plan.images_spec;
  output_spec[graph.labels] = TensorSpec::Plain(DType::kI32, graph.nodes[graph.labels].output);
  for (int i = 0; i < num_nodes; ++i) {
    const Node& node = graph.nodes[i];
    if (node.kind != Node::Kind::kOp) continue;
    std::vector<TensorSpec> in_specs;
    // An elementwise op reads a plain (N,C) input (an fc's) as its (N,C,1,1).
    const std::optional<Shape> expected = ReshapedInput(node.op);
    for (int in : node.inputs) {
      TensorSpec spec = output_spec[in];
      // Same bytes, same order: only the logical rank differs.
      if (expected && spec.is_plain() && spec.shape != *expected &&
          spec.shape.num_elements() == expected->num_elements())
        spec = TensorSpec::Plain(spec.dtype, *expected);
      in_specs.push_back(spec);
    }
    KernelOptions kernel_options = KernelOptions::ForPrecision(plan.options.precision);
    kernel_options.forward_only = plan.options.forward_only;
    kernel_options.seed = plan.options.seed;
    // The given graph's node: dropout draws the same masks fused or not.
    kernel_options.node = static_cast<uint64_t>(plan.origin[i]);
    kernel_options.batch_offset = plan.options.batch_offset;
    const absl::Time created = absl::Now();
    absl::StatusOr<std::unique_ptr<Kernel>> kernel;
    {
      CompileLogLayer scope(node.name);  // the kernel's own lines name the layer
      // Past the compile deadline the plan ends here, naming this layer.
      absl::Status in_time = CheckCompileDeadline(
          "all", absl::StrCat(plan.layers.size(), " layer(s) built before it"));
      if (in_time.ok()) {
        kernel = backend->Create(node.op, kernel_options, in_specs);
      } else {
        kernel = in_time;
      }
      if (CompileLogEnabled()) {
        CompileLogFields fields = {{"op", OpDescToString(node.op)}, {"pass", "all"}};
        if (kernel.ok()) {
          fields.push_back({"engine", (*kernel)->implementation()});
        } else {
          fields.push_back({"engine", "none"});
          fields.push_back({"why", std::string(kernel.status().message())});
        }
        fields.push_back(
            {"build", CompileLogSeconds(absl::ToDoubleSeconds(absl::Now() - created))});
        CompileLog(fields);
      }
    }
    if (!kernel.ok())
      return WithContext(kernel.status(),
                         absl::StrCat("layer ", node.name, " (", OpDescToString(node.op), ")"));
    auto layer = std::make_unique<StepPlan::Layer>();
    layer->node = i;
    layer->name = node.name;
    layer->kernel = *std::move(kernel);
    const KernelSignature& sig = layer->kernel->signature();
    if (sig.inputs.size() != node.inputs.size())
      return absl::InternalError(absl::StrCat("layer ", node.name, ": kernel takes ",
                                              sig.inputs.size(), " inputs, node has ",
                                              node.inputs.size()));
    // The kernel's tensors are the ones its op's traits name (their
    // initialisers and starting values come from there).
    const std::vector<Shape> param_shapes = ParameterShapes(node.op);
    const std::vector<Shape> state_shapes = StateShapes(node.op);
    bool agree =
        sig.params.size() == param_shapes.size() && sig.state.size() == state_shapes.size();
    for (size_t p = 0; agree && p < param_shapes.size(); ++p)
      agree = sig.params[p].shape.num_elements() == param_shapes[p].num_elements();
    for (size_t p = 0; agree && p < state_shapes.size(); ++p)
      agree = sig.state[p].shape.num_elements() == state_shapes[p].num_elements();
    if (!agree)
      return absl::InternalError(
          absl::StrCat("layer ", node.name, ": kernel has ", sig.params.size(), " parameters and ",
                       sig.state.size(), " state tensors, its op's traits ", param_shapes.size(),
                       " and ", state_shapes.size(), " (or their sizes differ)"));
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      StepPlan::Input input;
      input.producer = node.inputs[k];
      input.from = in_specs[k];
      input.to = sig.inputs[k];
      input.reorder = !backend->SameLayout(input.from, input.to);
      input.needs_grad = needs_grad[input.producer];
      layer->any_dx = layer->any_dx || input.needs_grad;
      layer->inputs.push_back(std::move(input));
    }
    output_spec[i] = sig.output;
    layer->needs_grad = needs_grad[i];
    plan.layer_of[i] = static_cast<int>(plan.layers.size());
    LayerTime time;
    time.name = node.name;
    time.op = OpDescToString(node.op);
    time.implementation = layer->kernel->pass_implementation(OpPass::kForward);
    const std::string data = layer->kernel->pass_implementation(OpPass::kBackwardData);
    const std::string weights = layer->kernel->pass_implementation(OpPass::kBackwardWeights);
    const std::string backward = data == weights ? data : absl::StrCat(data, " / ", weights);
    if (backward != time.implementation) time.backward_implementation = backward;
    layer->profile_index = static_cast<int>(plan.profile.size());
    plan.profile.push_back(time);
    plan.layers.push_back(std::move(layer));
  }
  plan.edges_profile = static_cast<int>(plan.profile.size());
  plan.profile.push_back({"edges", "reorders, casts and gradient sums", "executor", "", 0, 0});
  plan.update_profile = static_cast<int>(plan.profile.size());
  plan.profile.push_back({"update", "sgd", "executor", "", 0, 0});
  plan.loss_spec = plan.layers[plan.layer_of[graph.loss]]->kernel->signature().output;
  const auto consumers = graph.Consumers();
  for (auto& layer_ptr : plan.layers)
    if (layer_ptr->node != graph.loss && consumers[layer_ptr->node].empty())
      return absl::InvalidArgumentError(absl::StrCat(
          "layer ", layer_ptr->name, ": its output is not used by any layer (a dangling branch)"));
  return absl::OkStatus();
}

// ---- Phase 2: transient buffers and their lifetimes in the schedule. ----
absl::Status RequestBuffers(StepPlan& plan) {
  const Graph& graph = plan.graph;
  const int num_nodes = static_cast<int>(graph.nodes.size());
  const bool training = !plan.options.forward_only;
  auto forward_step = [&plan](int node) { return plan.forward_step(node); };
  auto backward_step = [&plan](int node) { return plan.backward_step(node); };
  auto request = [&plan](std::string name, size_t bytes, int first, int last) {
    plan.requests.push_back({std::move(name), bytes, first, last});
    return static_cast<int>(plan.requests.size()) - 1;
  };
  const auto consumers = graph.Consumers();
  std::vector<int> output_buffer(num_nodes, kNoBuffer);
  output_buffer[graph.images] = kImagesBuffer;
  output_buffer[graph.labels] = kLabelsBuffer;
  // Forward only: which layers' outputs are views of a concatenation's
  // output (the concat's node and the view's byte offset).
  std::vector<int> view_parent(num_nodes, -1);
  std::vector<size_t> view_offset(num_nodes, 0);
  if (!training && plan.options.concat_in_place) {
    for (auto& layer_ptr : plan.layers) {
      const StepPlan::Layer& concat = *layer_ptr;
      const std::vector<size_t>& views = concat.kernel->signature().input_views;
      if (views.size() != concat.inputs.size()) continue;
      for (size_t k = 0; k < views.size(); ++k) {
        const StepPlan::Input& in = concat.inputs[k];
        const int p = in.producer;
        if (in.reorder || plan.layer_of[p] < 0 || consumers[p].size() != 1 ||
            plan.layers[plan.layer_of[p]]->kernel->signature().output.bytes != in.to.bytes)
          continue;
        view_parent[p] = concat.node;
        view_offset[p] = views[k];
      }
    }
  }
  // Widens the lifetime of `buffer`'s root to hold `step`.
  auto extend = [&plan](int buffer, int step) {
    BufferRequest& root = plan.requests[RootOf(plan.requests, buffer)];
    root.first = std::min(root.first, step);
    root.last = std::max(root.last, step);
  };
  // A layer's output buffer, requested on first use: a concatenation's
  // output as its first view's producer runs, a view inside it (and a view
  // of a view, where a concat's output is itself an outer concat's input).
  std::function<int(int)> output_of = [&](int node) -> int {
    StepPlan::Layer& layer = *plan.layers[plan.layer_of[node]];
    if (layer.y != kNoBuffer) return layer.y;
    const size_t bytes = layer.kernel->signature().output.bytes;
    const int step = forward_step(node);
    if (view_parent[node] < 0) {
      layer.y = request(layer.name + "/y", bytes, step, step);
      return layer.y;
    }
    const int parent = output_of(view_parent[node]);
    layer.y = request(layer.name + "/y", bytes, step, step);
    plan.requests[layer.y].view_of = parent;
    plan.requests[layer.y].view_offset = view_offset[node];
    ++plan.concat_inputs_in_place;
    return layer.y;
  };
  for (auto& layer_ptr : plan.layers) {
    StepPlan::Layer& layer = *layer_ptr;
    const int i = layer.node;
    const KernelSignature& sig = layer.kernel->signature();
    for (size_t k = 0; k < layer.inputs.size(); ++k) {
      auto& input = layer.inputs[k];
      input.source = output_buffer[input.producer];
      if (input.reorder) {
        const int last =
            sig.backward_reads_inputs && layer.needs_grad ? backward_step(i) : forward_step(i);
        input.buffer = request(absl::StrCat(layer.name, "/x", k, "_reordered"), input.to.bytes,
                               forward_step(i), last);
      } else {
        input.buffer = input.source;
      }
    }
    if (i == graph.loss) {
      layer.y = kLossBuffer;
    } else {
      int last = forward_step(i);
      for (int c : consumers[i]) {
        const StepPlan::Layer& consumer = *plan.layers[plan.layer_of[c]];
        last = std::max(last, forward_step(c));
        for (const auto& in : consumer.inputs)
          if (training && in.producer == i && !in.reorder &&
              consumer.kernel->signature().backward_reads_inputs)
            last = std::max(last, backward_step(c));
      }
      if (sig.backward_reads_output && layer.needs_grad) last = std::max(last, backward_step(i));
      if (training && plan.options.keep_logits && i == graph.nodes[graph.loss].inputs[0])
        last = std::max(last, backward_step(0));  // the step's end
      // Forward only: y over the input the kernel may write it over, when
      // that input's buffer is in the arena, no later layer reads it and
      // the kernel reads it through no other input (a convolution whose
      // input is also its shortcut).
      const int over = sig.output_over_input;
      if (layer.y != kNoBuffer || view_parent[i] >= 0) {
        // A concatenation's output (requested by its first input's
        // producer), or a view inside one.
        output_of(i);
        extend(layer.y, forward_step(i));
        extend(layer.y, last);
      } else if (!training && over >= 0 && over < static_cast<int>(layer.inputs.size())) {
        const int b = layer.inputs[over].buffer;
        bool alone = true;
        for (size_t k = 0; k < layer.inputs.size(); ++k)
          alone = alone && (static_cast<int>(k) == over || layer.inputs[k].buffer != b);
        // Never over a view: the bytes are a concatenation's.
        if (b >= 0 && alone && plan.requests[b].view_of < 0 &&
            plan.requests[b].last <= forward_step(i) &&
            plan.requests[b].bytes == sig.output.bytes) {
          plan.requests[b].last = std::max(plan.requests[b].last, last);
          layer.y = b;
          layer.y_over_input = over;
          ++plan.outputs_in_place;
        }
      }
      if (layer.y == kNoBuffer)
        layer.y = request(layer.name + "/y", sig.output.bytes, forward_step(i), last);
    }
    output_buffer[i] = layer.y;
    // Only a training forward writes what its backward passes read.
    if (sig.saved_bytes > 0 && training)
      layer.saved = request(layer.name + "/saved", sig.saved_bytes, forward_step(i),
                            layer.needs_grad ? backward_step(i) : forward_step(i));
  }
  // Views live as long as their roots; a concat all of whose inputs are
  // views of its output copies nothing.
  for (BufferRequest& r : plan.requests) {
    if (r.view_of < 0) continue;
    const BufferRequest& root = plan.requests[RootOf(plan.requests, r.view_of)];
    r.first = root.first;
    r.last = root.last;
  }
  for (const auto& layer_ptr : plan.layers) {
    const StepPlan::Layer& layer = *layer_ptr;
    if (layer.kernel->signature().input_views.empty() || layer.inputs.empty()) continue;
    bool all = true;
    for (const StepPlan::Input& in : layer.inputs)
      all = all && in.buffer >= 0 && plan.requests[in.buffer].view_of == layer.y;
    plan.concats_in_place += all ? 1 : 0;
  }
  // Gradients, walking backward: each consuming edge gets its own buffer in
  // the producer's layout; several edges are summed before the producer's
  // backward pass.
  for (auto it = plan.layers.rbegin(); it != plan.layers.rend(); ++it) {
    StepPlan::Layer& layer = **it;
    const int i = layer.node;
    if (!layer.needs_grad) continue;
    // One gradient buffer for every input (add): it lives until the
    // earliest producer's backward pass has read it.
    bool shared = layer.kernel->signature().shared_input_gradient;
    int shared_last = -1;
    for (const auto& input : layer.inputs) {
      if (!input.needs_grad) continue;
      if (input.reorder) shared = false;
      shared_last = std::max(shared_last, backward_step(input.producer));
    }
    if (shared && shared_last >= 0) {
      const int grad =
          request(layer.name + "/dx", layer.inputs[0].from.bytes, backward_step(i), shared_last);
      for (auto& input : layer.inputs) {
        if (!input.needs_grad) continue;
        input.grad = grad;
        plan.layers[plan.layer_of[input.producer]]->grad_edges.push_back(grad);
      }
      continue;
    }
    for (size_t k = 0; k < layer.inputs.size(); ++k) {
      auto& input = layer.inputs[k];
      if (!input.needs_grad) continue;
      StepPlan::Layer& producer = *plan.layers[plan.layer_of[input.producer]];
      input.grad = request(absl::StrCat(layer.name, "/dx", k), input.from.bytes, backward_step(i),
                           backward_step(input.producer));
      if (input.reorder)
        input.grad_tmp = request(absl::StrCat(layer.name, "/dx", k, "_tmp"), input.to.bytes,
                                 backward_step(i), backward_step(i));
      producer.grad_edges.push_back(input.grad);
    }
  }
  for (auto& layer_ptr : plan.layers) {
    StepPlan::Layer& layer = *layer_ptr;
    if (layer.grad_edges.size() == 1) layer.dy = layer.grad_edges[0];
    // Several consumers: their gradients are summed first, or handed to a
    // kernel that sums them itself (dy_parts).
    if (layer.grad_edges.size() > 1 &&
        !TakesOutputGradientParts(layer.kernel->signature(), layer.grad_edges.size()))
      layer.dy = request(layer.name + "/dy_sum", layer.kernel->signature().output.bytes,
                         backward_step(layer.node), backward_step(layer.node));
  }
  return absl::OkStatus();
}

// ---- Phase 3: one plan for the arena; persistent blocks laid out. ----
absl::Status PlanBuffers(const Backend& backend, StepPlan& plan) {
  const size_t alignment = backend.alignment();
  plan.alignment = alignment;
  plan.memory = PlanMemory(plan.requests, alignment);
  RETURN_IF_ERROR(VerifyPlan(plan.requests, plan.memory));
  plan.ending_at.assign(2 * plan.graph.nodes.size(), {});
  for (int b = 0; b < static_cast<int>(plan.requests.size()); ++b)
    plan.ending_at[plan.requests[b].last].push_back(b);

  // Parameters: one block, so the update is fused; state beside it.
  size_t param_bytes = 0, lowp_bytes = 0, state_bytes = 0;
  for (size_t l = 0; l < plan.layers.size(); ++l) {
    StepPlan::Layer& layer = *plan.layers[l];
    const KernelSignature& sig = layer.kernel->signature();
    for (size_t p = 0; p < sig.params.size(); ++p) {
      StepPlan::Param param;
      param.layer = static_cast<int>(l);
      param.index = static_cast<int>(p);
      param.spec = sig.params[p];
      param.low_precision = param.spec.dtype != DType::kF32;
      if (param.low_precision && param.spec.dtype != plan.activation_type)
        return absl::UnimplementedError(absl::StrCat(
            "layer ", layer.name, ": parameter ", p, " stored as ", DTypeName(param.spec.dtype),
            " under precision ", PrecisionName(plan.options.precision)));
      param.master = param.low_precision ? backend.MasterSpec(param.spec) : param.spec;
      param.offset = param_bytes;
      param_bytes += AlignUp(param.master.bytes, alignment);
      if (param.low_precision) {
        param.lowp_offset = lowp_bytes;
        lowp_bytes += AlignUp(param.spec.bytes, alignment);
      }
      plan.parameter_count += param.spec.shape.num_elements();
      layer.params.push_back(static_cast<int>(plan.params.size()));
      plan.params.push_back(std::move(param));
    }
    for (const TensorSpec& s : sig.state) {
      layer.state_offsets.push_back(state_bytes);
      state_bytes += AlignUp(s.bytes, alignment);
    }
  }
  plan.params_bytes = param_bytes;
  plan.lowp_bytes = lowp_bytes;
  plan.state_bytes = state_bytes;
  for (auto& layer : plan.layers)
    plan.scratch_bytes = std::max(plan.scratch_bytes, layer->kernel->signature().scratch_bytes);
  // A GPU casting its batches keeps each slot's fp32 copy too.
  const TensorSpec host_images = TensorSpec::Plain(DType::kF32, plan.images_spec.shape);
  plan.staging_bytes =
      !backend.device().is_cpu() && !backend.SameLayout(host_images, plan.images_spec)
          ? host_images.bytes
          : 0;
  return absl::OkStatus();
}

size_t LowerBoundBytes(const Graph& graph, DType activation_type) {
  const size_t element = SizeOf(activation_type);
  size_t largest = 0;  // of the outputs in the arena (the images live in the slots)
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i)
    if (i != graph.images)
      largest =
          std::max(largest, static_cast<size_t>(graph.nodes[i].output.num_elements()) * element);
  const size_t images =
      static_cast<size_t>(graph.nodes[graph.images].output.num_elements()) * element;
  return 2 * images + largest;
}

absl::Status CheckFootprint(const Backend& backend, size_t limit, size_t needed) {
  const Device device = backend.device();
  size_t available = limit;
  if (available == 0) {
    absl::StatusOr<size_t> free_now = AvailableMemory(device);
    if (!free_now.ok()) return absl::OkStatus();  // unknown: let the allocations decide
    available = *free_now;
  }
  if (needed <= available) return absl::OkStatus();
  std::string need = FormatBytes(needed), have = FormatBytes(available);
  if (need == have) {  // rounded alike: say the bytes
    absl::StrAppend(&need, " (", needed, " bytes)");
    absl::StrAppend(&have, " (", available, " bytes)");
  }
  return OutOfMemoryError(
      absl::StrCat("needs ", need, " on ", device.ToString(), ", ", have, " available"));
}

}  // namespace

size_t StepPlan::FootprintBytes() const {
  // Training keeps gradients and momentum beside the masters, and the
  // low-precision gradients beside the working copies; inference keeps
  // neither, nor the step's scalars.
  const size_t masters = options.forward_only ? 1 : 3, copies = options.forward_only ? 1 : 2;
  return memory.arena_bytes + masters * params_bytes + copies * lowp_bytes + state_bytes +
         scratch_bytes + 2 * (images_spec.bytes + staging_bytes + graph.batch * sizeof(int32_t)) +
         (options.forward_only ? 0 : kScalarLines * alignment);
}

GradientRange StepPlan::RangeOf(const Layer& layer) const {
  const Param& first = params[layer.params.front()];
  const Param& last = params[layer.params.back()];
  GradientRange range;
  range.node = origin[layer.node];
  range.offset = first.offset;
  range.bytes = AlignUp(last.offset + last.master.bytes, alignment) - first.offset;
  return range;
}

absl::StatusOr<const StepPlan::Layer*> LayerOfNode(const StepPlan& plan, int node) {
  const int at =
      node >= 0 && node < static_cast<int>(plan.node_of.size()) ? plan.node_of[node] : -1;
  if (at >= 0 && plan.origin[at] == node && plan.layer_of[at] >= 0)
    return plan.layers[plan.layer_of[at]].get();
  return absl::NotFoundError(absl::StrCat("node ", node, " is not a layer of the plan"));
}

absl::StatusOr<std::vector<float>> ReadStateOf(const StepPlan& plan, Backend& backend,
                                               const void* state, int node, int index) {
  ASSIGN_OR_RETURN(const StepPlan::Layer* layer, LayerOfNode(plan, node));
  const KernelSignature& sig = layer->kernel->signature();
  if (index < 0 || index >= static_cast<int>(sig.state.size()))
    return absl::NotFoundError(absl::StrCat("node ", node, " has no state tensor ", index));
  const TensorSpec& spec = sig.state[index];
  std::vector<float> out(spec.shape.num_elements());
  RETURN_IF_ERROR(backend.stream().Synchronize());
  RETURN_IF_ERROR(backend.Download(spec,
                                   static_cast<const char*>(state) + layer->state_offsets[index],
                                   TensorSpec::Plain(DType::kF32, spec.shape), out.data()));
  return out;
}

absl::Status InitializeState(const StepPlan& plan, Backend& backend, void* state) {
  for (const auto& layer : plan.layers) {
    const KernelSignature& sig = layer->kernel->signature();
    for (size_t s = 0; s < sig.state.size(); ++s) {
      const TensorSpec& spec = sig.state[s];
      std::vector<float> values(spec.shape.num_elements(),
                                StateStart(plan.graph.nodes[layer->node].op, static_cast<int>(s)));
      RETURN_IF_ERROR(backend.Upload(TensorSpec::Plain(DType::kF32, spec.shape), values.data(),
                                     spec, static_cast<char*>(state) + layer->state_offsets[s]));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> ReadLogits(const StepPlan& plan, Backend& backend,
                                              const void* data) {
  const TensorSpec& from = plan.layers[plan.layer_of[plan.graph.loss]]->inputs[0].from;
  const TensorSpec host = TensorSpec::Plain(DType::kF32, from.shape);
  std::vector<float> logits(host.shape.num_elements());
  RETURN_IF_ERROR(backend.stream().Synchronize());
  RETURN_IF_ERROR(backend.Download(from, data, host, logits.data()));
  return logits;
}

absl::StatusOr<StepPlan> PlanStep(const Graph& graph, Backend* backend,
                                  const StepPlanOptions& options) {
  if (backend == nullptr) return absl::InvalidArgumentError("PlanStep: no backend");
  if (graph.images < 0 || graph.labels < 0 || graph.loss < 0)
    return absl::InvalidArgumentError("graph needs images, labels and a loss node");
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i)
    for (int in : graph.nodes[i].inputs)
      if (in < 0 || in >= i)
        return absl::InvalidArgumentError(absl::StrCat("node ", graph.nodes[i].name, " reads node ",
                                                       in, ", which does not come before it"));
  StepPlan plan;
  plan.options = options;
  plan.activation_type = ActivationType(options.precision);
  plan.alignment = backend->alignment();
  if (options.fold_batch_norm && !options.forward_only)
    return absl::InvalidArgumentError(
        "fold_batch_norm is for inference plans (forward_only): training normalises with the "
        "batch's statistics");
  KernelOptions kernel_options = KernelOptions::ForPrecision(options.precision);
  kernel_options.forward_only = options.forward_only;
  auto runs = [&](const OpDesc& op) {
    const auto* conv = std::get_if<ConvDesc>(&op);
    if (conv != nullptr && conv->activation != ActivationKind::kNone && !options.conv_relu)
      return false;
    return backend->Supports(op, kernel_options).ok();
  };
  FusedGraph fused = Unfused(graph);
  if (options.forward_only) {
    fused = SkipIdentitiesForInference(graph);
    plan.identities_skipped = fused.fused;
  }
  if (options.fold_batch_norm) {
    FusedGraph folded = FoldBatchNormForInference(fused.graph, runs);
    plan.folded_batch_norms = folded.fused;
    fused = Compose(fused, std::move(folded));
  }
  if (options.fuse_relu) {
    FusedGraph relu = FuseRelu(fused.graph, runs,
                               options.forward_only ? PlanUse::kForwardOnly : PlanUse::kTraining);
    plan.fused_relus = relu.fused;
    fused = Compose(fused, std::move(relu));
  }
  if (options.forward_only && options.conv_add) {
    FusedGraph add = FuseResidualAdd(fused.graph, runs);
    plan.conv_residual_adds = add.fused;
    fused = Compose(fused, std::move(add));
  }
  // The ReLUs in convolutions: their own, and those of the adds they absorbed.
  for (const Node& node : fused.graph.nodes)
    if (const auto* conv = std::get_if<ConvDesc>(&node.op);
        node.kind == Node::Kind::kOp && conv != nullptr &&
        conv->activation != ActivationKind::kNone)
      ++plan.conv_relu_epilogues;
  plan.original_graph = graph;
  plan.graph = std::move(fused.graph);
  plan.origin = std::move(fused.origin);
  plan.node_of = std::move(fused.node_of);
  plan.folded_bn = std::move(fused.folded_bn);
  RETURN_IF_ERROR(CheckFootprint(*backend, options.memory_limit_bytes,
                                 LowerBoundBytes(plan.graph, plan.activation_type)));
  RETURN_IF_ERROR(CreateKernels(plan.graph, backend, plan));
  RETURN_IF_ERROR(RequestBuffers(plan));
  RETURN_IF_ERROR(PlanBuffers(*backend, plan));
  RETURN_IF_ERROR(CheckFootprint(*backend, options.memory_limit_bytes, plan.FootprintBytes()));
  return plan;
}

}  // namespace cnnbench
