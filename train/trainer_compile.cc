// Trainer::Compile and its planning phases: graph checks and fusion, kernels
// and layouts, buffer requests and lifetimes, the memory plan and the
// footprint checks (trainer.cc allocates, binds and runs what they plan).
#include "train/trainer.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/compile_log.h"
#include "core/status.h"
#include "kernels/op_traits.h"
#include "train/fusion.h"
#include "train/init.h"
#include "train/trainer_internal.h"

namespace cnnbench {

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::Compile(const Graph& graph, Backend* backend,
                                                          const TrainOptions& options) {
  if (backend == nullptr) return absl::InvalidArgumentError("Trainer::Compile: no backend");
  std::unique_ptr<Trainer> trainer(new Trainer());
  trainer->backend_ = backend;
  trainer->options_ = options;
  trainer->activation_type_ = ActivationType(options.precision);
  if (graph.images < 0 || graph.labels < 0 || graph.loss < 0)
    return absl::InvalidArgumentError("graph needs images, labels and a loss node");
  // The options, before anything is created or allocated.
  if (trainer->dynamic_loss_scale() && !(options.initial_loss_scale >= kMinLossScale &&
                                         options.initial_loss_scale <= kMaxLossScale))
    return absl::InvalidArgumentError(absl::StrCat("initial loss scale ",
                                                   options.initial_loss_scale, " is outside [",
                                                   kMinLossScale, ", ", kMaxLossScale, "]"));
  if (trainer->dynamic_loss_scale() && options.loss_scale_growth_interval < 1)
    return absl::InvalidArgumentError(absl::StrCat(
        "loss scale growth interval ", options.loss_scale_growth_interval, " must be at least 1"));
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i)
    for (int in : graph.nodes[i].inputs)
      if (in < 0 || in >= i)
        return absl::InvalidArgumentError(absl::StrCat("node ", graph.nodes[i].name, " reads node ",
                                                       in, ", which does not come before it"));
  FusedGraph fused = Unfused(graph);
  if (options.fuse_relu) {
    const KernelOptions kernel_options = KernelOptions::ForPrecision(options.precision);
    fused = FuseReluForTraining(
        graph, [&](const OpDesc& op) { return backend->Supports(op, kernel_options).ok(); });
  }
  trainer->original_graph_ = graph;
  trainer->graph_ = std::move(fused.graph);
  trainer->origin_ = std::move(fused.origin);
  trainer->node_of_ = std::move(fused.node_of);
  trainer->fused_relus_ = fused.fused;
  RETURN_IF_ERROR(trainer->CheckFootprint(trainer->LowerBoundBytes(trainer->graph_)));
  RETURN_IF_ERROR(trainer->CreateKernels(trainer->graph_));
  RETURN_IF_ERROR(trainer->RequestBuffers());
  RETURN_IF_ERROR(trainer->PlanBuffers());
  RETURN_IF_ERROR(trainer->CheckFootprint(trainer->FootprintBytes()));
  RETURN_IF_ERROR(trainer->AllocateAndBind());
  return trainer;
}

// ---- Phase 1: kernels, in forward order; layouts flow from producer to consumer. ----
absl::Status Trainer::CreateKernels(const Graph& graph) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  std::vector<TensorSpec> output_spec(num_nodes);
  layer_of_.assign(num_nodes, -1);  // node order was checked by Compile, before fusion
  const std::vector<bool> needs_grad = graph.NeedsGradient();
  images_spec_ = TensorSpec::Plain(activation_type_, graph.nodes[graph.images].output);
  output_spec[graph.images] = images_spec_;
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
    KernelOptions kernel_options = KernelOptions::ForPrecision(options_.precision);
    kernel_options.seed = options_.seed;
    // The given graph's node: dropout draws the same masks fused or not.
    kernel_options.node = static_cast<uint64_t>(origin_[i]);
    kernel_options.batch_offset = options_.batch_offset;
    const absl::Time created = absl::Now();
    absl::StatusOr<std::unique_ptr<Kernel>> kernel;
    {
      CompileLogLayer scope(node.name);  // the kernel's own lines name the layer
      kernel = backend_->Create(node.op, kernel_options, in_specs);
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
    auto layer = std::make_unique<Layer>();
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
    bool agree = sig.params.size() == param_shapes.size() && sig.state.size() == state_shapes.size();
    for (size_t p = 0; agree && p < param_shapes.size(); ++p)
      agree = sig.params[p].shape.num_elements() == param_shapes[p].num_elements();
    for (size_t p = 0; agree && p < state_shapes.size(); ++p)
      agree = sig.state[p].shape.num_elements() == state_shapes[p].num_elements();
    if (!agree)
      return absl::InternalError(absl::StrCat(
          "layer ", node.name, ": kernel has ", sig.params.size(), " parameters and ",
          sig.state.size(), " state tensors, its op's traits ", param_shapes.size(), " and ",
          state_shapes.size(), " (or their sizes differ)"));
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      Layer::Input input;
      input.producer = node.inputs[k];
      input.from = in_specs[k];
      input.to = sig.inputs[k];
      input.reorder = !backend_->SameLayout(input.from, input.to);
      input.needs_grad = needs_grad[input.producer];
      layer->any_dx = layer->any_dx || input.needs_grad;
      layer->inputs.push_back(std::move(input));
    }
    output_spec[i] = sig.output;
    layer->needs_grad = needs_grad[i];
    layer_of_[i] = static_cast<int>(layers_.size());
    LayerTime time;
    time.name = node.name;
    time.op = OpDescToString(node.op);
    time.implementation = layer->kernel->implementation();
    layer->profile_index = static_cast<int>(profile_.size());
    profile_.push_back(time);
    layers_.push_back(std::move(layer));
  }
  edges_profile_ = static_cast<int>(profile_.size());
  profile_.push_back({"edges", "reorders, casts and gradient sums", "executor", 0, 0});
  update_profile_ = static_cast<int>(profile_.size());
  profile_.push_back({"update", "sgd", "executor", 0, 0});
  loss_spec_ = layers_[layer_of_[graph.loss]]->kernel->signature().output;
  const auto consumers = graph.Consumers();
  for (auto& layer_ptr : layers_)
    if (layer_ptr->node != graph.loss && consumers[layer_ptr->node].empty())
      return absl::InvalidArgumentError(absl::StrCat(
          "layer ", layer_ptr->name, ": its output is not used by any layer (a dangling branch)"));
  return absl::OkStatus();
}

// ---- Phase 2: transient buffers and their lifetimes in the schedule. ----
absl::Status Trainer::RequestBuffers() {
  const Graph& graph = graph_;
  const int num_nodes = static_cast<int>(graph.nodes.size());
  auto forward_step = [](int node) { return node; };
  auto backward_step = [num_nodes](int node) { return 2 * num_nodes - 1 - node; };
  auto request = [this](std::string name, size_t bytes, int first, int last) {
    requests_.push_back({std::move(name), bytes, first, last});
    return static_cast<int>(requests_.size()) - 1;
  };
  const auto consumers = graph.Consumers();
  std::vector<int> output_buffer(num_nodes, kNoBuffer);
  output_buffer[graph.images] = kImagesBuffer;
  output_buffer[graph.labels] = kLabelsBuffer;
  for (auto& layer_ptr : layers_) {
    Layer& layer = *layer_ptr;
    const int i = layer.node;
    const KernelSignature& sig = layer.kernel->signature();
    if (i == graph.loss) {
      layer.y = kLossBuffer;
    } else {
      int last = forward_step(i);
      for (int c : consumers[i]) {
        const Layer& consumer = *layers_[layer_of_[c]];
        last = std::max(last, forward_step(c));
        for (const auto& in : consumer.inputs)
          if (in.producer == i && !in.reorder && consumer.kernel->signature().backward_reads_inputs)
            last = std::max(last, backward_step(c));
      }
      if (sig.backward_reads_output && layer.needs_grad) last = std::max(last, backward_step(i));
      layer.y = request(layer.name + "/y", sig.output.bytes, forward_step(i), last);
    }
    output_buffer[i] = layer.y;
    if (sig.saved_bytes > 0)
      layer.saved = request(layer.name + "/saved", sig.saved_bytes, forward_step(i),
                            layer.needs_grad ? backward_step(i) : forward_step(i));
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
  }
  // Gradients, walking backward: each consuming edge gets its own buffer in
  // the producer's layout; several edges are summed before the producer's
  // backward pass.
  for (auto it = layers_.rbegin(); it != layers_.rend(); ++it) {
    Layer& layer = **it;
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
        layers_[layer_of_[input.producer]]->grad_edges.push_back(grad);
      }
      continue;
    }
    for (size_t k = 0; k < layer.inputs.size(); ++k) {
      auto& input = layer.inputs[k];
      if (!input.needs_grad) continue;
      Layer& producer = *layers_[layer_of_[input.producer]];
      input.grad = request(absl::StrCat(layer.name, "/dx", k), input.from.bytes, backward_step(i),
                           backward_step(input.producer));
      if (input.reorder)
        input.grad_tmp = request(absl::StrCat(layer.name, "/dx", k, "_tmp"), input.to.bytes,
                                 backward_step(i), backward_step(i));
      producer.grad_edges.push_back(input.grad);
    }
  }
  for (auto& layer_ptr : layers_) {
    Layer& layer = *layer_ptr;
    if (layer.grad_edges.size() == 1) layer.dy = layer.grad_edges[0];
    // Several consumers: their gradients are summed first, or handed to a
    // kernel that sums them itself (dy_parts).
    if (layer.grad_edges.size() > 1 && !layer.kernel->signature().sums_output_gradient)
      layer.dy = request(layer.name + "/dy_sum", layer.kernel->signature().output.bytes,
                         backward_step(layer.node), backward_step(layer.node));
  }
  return absl::OkStatus();
}

// ---- Phase 3: one plan for the arena; persistent blocks laid out. ----
absl::Status Trainer::PlanBuffers() {
  const size_t alignment = backend_->alignment();
  plan_ = PlanMemory(requests_, alignment);
  RETURN_IF_ERROR(VerifyPlan(requests_, plan_));
  ending_at_.assign(2 * graph_.nodes.size(), {});
  for (int b = 0; b < static_cast<int>(requests_.size()); ++b)
    ending_at_[requests_[b].last].push_back(b);

  // Parameters: one block, so the update is fused; state beside it.
  size_t param_bytes = 0, lowp_bytes = 0, state_bytes = 0;
  for (size_t l = 0; l < layers_.size(); ++l) {
    Layer& layer = *layers_[l];
    const KernelSignature& sig = layer.kernel->signature();
    for (size_t p = 0; p < sig.params.size(); ++p) {
      Param param;
      param.layer = static_cast<int>(l);
      param.index = static_cast<int>(p);
      param.spec = sig.params[p];
      param.low_precision = param.spec.dtype != DType::kF32;
      if (param.low_precision && param.spec.dtype != activation_type_)
        return absl::UnimplementedError(absl::StrCat(
            "layer ", layer.name, ": parameter ", p, " stored as ", DTypeName(param.spec.dtype),
            " under precision ", PrecisionName(options_.precision)));
      param.master =
          param.low_precision ? TensorSpec::Plain(DType::kF32, param.spec.shape) : param.spec;
      param.offset = param_bytes;
      param_bytes += AlignUp(param.master.bytes, alignment);
      if (param.low_precision) {
        param.lowp_offset = lowp_bytes;
        lowp_bytes += AlignUp(param.spec.bytes, alignment);
      }
      parameter_count_ += param.spec.shape.num_elements();
      layer.params.push_back(static_cast<int>(params_list_.size()));
      params_list_.push_back(std::move(param));
    }
    for (const TensorSpec& s : sig.state) {
      layer.state_offsets.push_back(state_bytes);
      state_bytes += AlignUp(s.bytes, alignment);
    }
  }
  params_bytes_ = param_bytes;
  lowp_bytes_ = lowp_bytes;
  state_bytes_ = state_bytes;
  for (auto& layer : layers_)
    scratch_bytes_ = std::max(scratch_bytes_, layer->kernel->signature().scratch_bytes);
  return absl::OkStatus();
}

size_t Trainer::FootprintBytes() const {
  const size_t line = backend_->alignment();
  // A GPU casting its batches keeps each slot's fp32 copy too.
  const TensorSpec host_images = TensorSpec::Plain(DType::kF32, images_spec_.shape);
  const size_t staging =
      !backend_->device().is_cpu() && !backend_->SameLayout(host_images, images_spec_)
          ? host_images.bytes
          : 0;
  return plan_.arena_bytes + 3 * params_bytes_ + 2 * lowp_bytes_ + state_bytes_ + scratch_bytes_ +
         2 * (images_spec_.bytes + staging + graph_.batch * sizeof(int32_t)) + kScalarLines * line;
}

size_t Trainer::LowerBoundBytes(const Graph& graph) const {
  const size_t element = SizeOf(activation_type_);
  size_t largest = 0;  // of the outputs in the arena (the images live in the slots)
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i)
    if (i != graph.images)
      largest =
          std::max(largest, static_cast<size_t>(graph.nodes[i].output.num_elements()) * element);
  const size_t images =
      static_cast<size_t>(graph.nodes[graph.images].output.num_elements()) * element;
  return 2 * images + largest;
}

absl::Status Trainer::CheckFootprint(size_t needed) const {
  const Device device = backend_->device();
  size_t available = options_.memory_limit_bytes;
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

}  // namespace cnnbench
