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

namespace cnnbench {
namespace {

// `status` with what was being done for which layer in front of its message
// (the code kept: OOM stays OOM).
absl::Status AtLayer(absl::string_view what, const std::string& layer, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(what, " ", layer, ": ", status.message()));
}

constexpr int kNoBuffer = -1;
constexpr int kImagesBuffer = -2;
constexpr int kLabelsBuffer = -3;
constexpr int kLossBuffer = -4;

size_t AlignUp(size_t bytes, size_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

absl::Status WithContext(const absl::Status& s, absl::string_view what) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
}

}  // namespace

// The device-side scalars (AllocateAndBind), each in its own aligned line.
constexpr size_t kScalarLines = 5;

struct Trainer::Layer {
  struct Input {
    int producer = -1;       // node index
    int source = kNoBuffer;  // buffer with the producer's output
    int buffer = kNoBuffer;  // what the kernel reads (== source unless reordered)
    bool reorder = false;    // source -> buffer before Forward
    TensorSpec from, to;     // producer's spec, kernel's spec
    bool needs_grad = false;
    int grad = kNoBuffer;      // gradient in the producer's layout (one per edge)
    int grad_tmp = kNoBuffer;  // gradient in the kernel's layout, when reordered
  };
  int node = -1;
  std::string name;
  std::unique_ptr<Kernel> kernel;
  std::vector<Input> inputs;
  int y = kNoBuffer;
  int saved = kNoBuffer;
  std::vector<int> params;            // indices into params_list_
  std::vector<size_t> state_offsets;  // bytes into state_
  bool needs_grad = false;
  std::vector<int> grad_edges;           // this node's output gradient, one per consuming edge
  int dy = kNoBuffer;                    // what the backward pass reads
  std::vector<const void*> dy_parts[2];  // per slot, the edges summed into dy (bound once)
  bool any_dx = false;                   // some input needs a gradient
  int profile_index = -1;
  KernelArgs args[2];  // per input slot, bound once after allocation: a step allocates nothing
};

// One trainable tensor. The fp32 master lives in params_ at `offset` (its
// gradient in grads_, its momentum in momentum_ at the same offset), stored
// as the kernel wants it when the kernel takes fp32, else plain; a
// low-precision kernel reads a working copy (lowp_params_) and writes its
// gradient there too (lowp_grads_), which the step casts to fp32.
struct Trainer::Param {
  int layer = -1;
  int index = 0;
  TensorSpec spec;    // the kernel's
  TensorSpec master;  // the fp32 master's
  bool low_precision = false;
  size_t offset = 0;       // bytes into params_/grads_/momentum_
  size_t lowp_offset = 0;  // bytes into lowp_params_/lowp_grads_
};

Trainer::~Trainer() = default;

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

// ---- Phase 4: allocate, initialise, and bind every kernel's buffers once. ----
absl::Status Trainer::AllocateAndBind() {
  const Device device = backend_->device();
  ASSIGN_OR_RETURN(state_, Buffer::Allocate(device, state_bytes_));
  ASSIGN_OR_RETURN(arena_, Buffer::Allocate(device, plan_.arena_bytes));
  ASSIGN_OR_RETURN(params_, Buffer::Allocate(device, params_bytes_));
  ASSIGN_OR_RETURN(grads_, Buffer::Allocate(device, params_bytes_));
  ASSIGN_OR_RETURN(momentum_, Buffer::Allocate(device, params_bytes_));
  ASSIGN_OR_RETURN(lowp_params_, Buffer::Allocate(device, lowp_bytes_));
  ASSIGN_OR_RETURN(lowp_grads_, Buffer::Allocate(device, lowp_bytes_));
  ASSIGN_OR_RETURN(scratch_, Buffer::Allocate(device, scratch_bytes_));
  if (!device.is_cpu()) {
    ASSIGN_OR_RETURN(Stream upload, Stream::Create(device));
    upload_stream_ = std::make_unique<Stream>(std::move(upload));
    // Each step copies its loss here behind its forward pass (one float per
    // input slot), so LastLoss waits for that step only and reads host memory.
    if (loss_spec_.dtype == DType::kF32) {
      ASSIGN_OR_RETURN(loss_host_, Buffer::AllocatePinnedHost(2 * sizeof(float)));
    }
  }
  const TensorSpec host_images = TensorSpec::Plain(DType::kF32, images_spec_.shape);
  for (Slot& slot : slots_) {
    ASSIGN_OR_RETURN(Event done, Event::Create(device));
    slot.done = std::make_unique<Event>(std::move(done));
    RETURN_IF_ERROR(slot.done->Record(backend_->stream()));
    ASSIGN_OR_RETURN(slot.images, Buffer::Allocate(device, images_spec_.bytes));
    ASSIGN_OR_RETURN(slot.labels, Buffer::Allocate(device, graph_.batch * sizeof(int32_t)));
    if (upload_stream_ != nullptr) {
      ASSIGN_OR_RETURN(Event uploaded, Event::Create(device));
      slot.uploaded = std::make_unique<Event>(std::move(uploaded));
      RETURN_IF_ERROR(slot.uploaded->Record(*upload_stream_));
      if (!backend_->SameLayout(host_images, images_spec_)) {
        ASSIGN_OR_RETURN(slot.staging, Buffer::Allocate(device, host_images.bytes));
      }
    }
  }
  // The device-side scalars, each in its own aligned line.
  const size_t line = backend_->alignment();
  ASSIGN_OR_RETURN(scalars_, Buffer::Allocate(device, kScalarLines * line));
  char* scalars = static_cast<char*>(scalars_.data());
  loss_ = reinterpret_cast<float*>(scalars);
  device_step_ = reinterpret_cast<uint64_t*>(scalars + line);
  loss_scale_ = reinterpret_cast<float*>(scalars + 2 * line);
  overflow_ = reinterpret_cast<int32_t*>(scalars + 3 * line);
  good_steps_ = reinterpret_cast<int32_t*>(scalars + 4 * line);

  // Padding between parameters stays zero, so the fused update leaves it
  // zero; and every page is touched here, not in the first timed step.
  for (Buffer* b :
       {&params_, &grads_, &momentum_, &lowp_params_, &lowp_grads_, &arena_, &slots_[0].images,
        &slots_[0].labels, &slots_[1].images, &slots_[1].labels, &scalars_, &state_, &scratch_})
    RETURN_IF_ERROR(backend_->Fill(b->data(), 0, b->size()));
  const float scale = dynamic_loss_scale() ? options_.initial_loss_scale : 1.0f;
  const TensorSpec scalar = TensorSpec::Plain(DType::kF32, Shape{});
  RETURN_IF_ERROR(backend_->Upload(scalar, &scale, scalar, loss_scale_));

  SgdDesc sgd;
  sgd.count = static_cast<int64_t>(params_bytes_ / sizeof(float));
  sgd.learning_rate = options_.learning_rate;
  sgd.momentum = options_.momentum;
  sgd.weight_decay = options_.weight_decay;
  if (sgd.count > 0) {
    ASSIGN_OR_RETURN(optimizer_, backend_->CreateOptimizer(sgd));
  }
  RETURN_IF_ERROR(InitializeParameters());
  if (options_.profile) {
    ASSIGN_OR_RETURN(Timer timer, Timer::Create(backend_->stream()));
    timer_ = std::make_unique<Timer>(std::move(timer));
  }

  char* params = static_cast<char*>(params_.data());
  char* grads = static_cast<char*>(grads_.data());
  char* lowp_params = static_cast<char*>(lowp_params_.data());
  char* lowp_grads = static_cast<char*>(lowp_grads_.data());
  char* state = static_cast<char*>(state_.data());
  for (auto& layer_ptr : layers_) {
    Layer& layer = *layer_ptr;
    for (int slot = 0; slot < 2; ++slot) {
      KernelArgs& args = layer.args[slot];
      for (auto& in : layer.inputs) {
        args.x.push_back(BufferData(in.buffer, slot));
        args.dx.push_back(BufferData(in.reorder ? in.grad_tmp : in.grad, slot));
      }
      args.y = BufferData(layer.y, slot);
      for (int p : layer.params) {
        const Param& param = params_list_[p];
        args.params.push_back(param.low_precision ? lowp_params + param.lowp_offset
                                                  : params + param.offset);
        args.dparams.push_back(param.low_precision ? lowp_grads + param.lowp_offset
                                                   : grads + param.offset);
      }
      for (size_t offset : layer.state_offsets) args.state.push_back(state + offset);
      args.saved = BufferData(layer.saved, slot);
      args.scratch = scratch_.data();
      args.dy = BufferData(layer.dy, slot);
      args.training = true;
      args.step = device_step_;
      if (dynamic_loss_scale() &&
          std::holds_alternative<SoftmaxXentDesc>(graph_.nodes[layer.node].op))
        args.loss_scale = loss_scale_;
      if (layer.grad_edges.size() > 1) {
        for (int e : layer.grad_edges) layer.dy_parts[slot].push_back(BufferData(e, slot));
        if (layer.kernel->signature().sums_output_gradient) args.dy_parts = layer.dy_parts[slot];
      }
    }
  }
  return backend_->stream().Synchronize();
}

absl::Status Trainer::InitializeParameters() {
  const auto consumers = original_graph_.Consumers();
  for (const Param& param : params_list_) {
    const Layer& layer = *layers_[param.layer];
    // The given graph's node and consumers: the same weights fused or not.
    const int given = origin_[layer.node];
    const Node& node = original_graph_.nodes[given];
    // A layer followed by a ReLU gets the ReLU-aware scale (as tf_cnn_benchmarks' affine).
    const bool relu_after =
        consumers[given].size() == 1 &&
        std::holds_alternative<ReluDesc>(original_graph_.nodes[consumers[given][0]].op);
    const uint64_t seed = ParameterSeed(options_.seed, given, param.index);
    std::vector<float> values =
        InitialParameter(node.op, param.index, param.spec.shape, relu_after, seed);
    void* master = static_cast<char*>(params_.data()) + param.offset;
    RETURN_IF_ERROR(backend_->Upload(TensorSpec::Plain(DType::kF32, param.spec.shape),
                                     values.data(), param.master, master));
    if (param.low_precision)
      RETURN_IF_ERROR(
          backend_->Reorder(param.master, master, param.spec,
                            static_cast<char*>(lowp_params_.data()) + param.lowp_offset));
  }
  for (auto& layer : layers_) {
    const KernelSignature& sig = layer->kernel->signature();
    for (size_t s = 0; s < sig.state.size(); ++s) {
      const TensorSpec& spec = sig.state[s];
      // Each state tensor's start from its op's traits (batch norm: running
      // mean 0, running variance 1).
      std::vector<float> values(spec.shape.num_elements(),
                                StateStart(graph_.nodes[layer->node].op, static_cast<int>(s)));
      void* dst = static_cast<char*>(state_.data()) + layer->state_offsets[s];
      RETURN_IF_ERROR(
          backend_->Upload(TensorSpec::Plain(DType::kF32, spec.shape), values.data(), spec, dst));
    }
  }
  return absl::OkStatus();
}

void* Trainer::BufferData(int buffer, int slot) const {
  switch (buffer) {
    case kNoBuffer:
      return nullptr;
    case kImagesBuffer:
      return slots_[slot].images.data();
    case kLabelsBuffer:
      return slots_[slot].labels.data();
    case kLossBuffer:
      return loss_;
    default:
      return static_cast<char*>(arena_.data()) + plan_.offsets[buffer];
  }
}

absl::Status Trainer::PoisonBuffersEndingAt(int step) {
  for (int b : ending_at_[step])  // 0xff bytes: NaN in fp32, bf16 and fp16
    RETURN_IF_ERROR(backend_->Fill(BufferData(b, 0), 0xff, requests_[b].bytes));
  return absl::OkStatus();
}

absl::Status Trainer::SetBatch(const float* images, const int32_t* labels) {
  if (images == nullptr || labels == nullptr)
    return absl::InvalidArgumentError("SetBatch: null images or labels");
  const int free_slot = 1 - active_slot_;
  Slot& slot = slots_[free_slot];
  // The free slot was last read by an earlier step, which may still be in
  // flight on a device: wait for the end of its backward pass (the last read).
  const TensorSpec host_images = TensorSpec::Plain(DType::kF32, images_spec_.shape);
  const TensorSpec label_spec = TensorSpec::Plain(DType::kI32, Shape{graph_.batch});
  if (upload_stream_ != nullptr) {
    // On the side stream: after the step that last read the slot (a wait on
    // the device, not here), beside whatever the compute stream runs now.
    RETURN_IF_ERROR(upload_stream_->Wait(*slot.done));
    void* images_dst = slot.staging.data() != nullptr ? slot.staging.data() : slot.images.data();
    RETURN_IF_ERROR(CopyAsync(images_dst, images, host_images.bytes, *upload_stream_));
    RETURN_IF_ERROR(CopyAsync(slot.labels.data(), labels, label_spec.bytes, *upload_stream_));
    RETURN_IF_ERROR(slot.uploaded->Record(*upload_stream_));
    // The host's batch may be reused on return (the pipeline recycles it).
    RETURN_IF_ERROR(slot.uploaded->Synchronize());
    slot.cast = slot.staging.data() != nullptr;
  } else {
    RETURN_IF_ERROR(slot.done->Synchronize());
    RETURN_IF_ERROR(backend_->Upload(host_images, images, images_spec_, slot.images.data()));
    RETURN_IF_ERROR(backend_->Upload(label_spec, labels, label_spec, slot.labels.data()));
  }
  active_slot_ = free_slot;
  have_batch_ = true;
  return absl::OkStatus();
}

bool Trainer::cuda_graph_active() const {
  return options_.cuda_graph && !options_.profile && cuda_graph_failure_.empty() &&
         (!backend_->device().is_cpu() || options_.capture_on_cpu_for_testing);
}

absl::Status Trainer::Step() {
  if (!have_batch_)
    return absl::FailedPreconditionError(
        "Trainer::Step before any SetBatch: there is no batch to train on");
  if (!cuda_graph_active()) {
    RETURN_IF_ERROR(ForwardBackward());
    return Update();
  }
  const int slot = active_slot_;
  const Stream& stream = backend_->stream();
  if (!graphs_[slot].valid() && !eager_done_[slot]) {
    // A slot's first step runs eagerly: libraries load their modules and
    // set up lazily on first use, which must not happen inside a capture.
    eager_done_[slot] = true;
    RETURN_IF_ERROR(ForwardBackward());
    return Update();
  }
  if (!graphs_[slot].valid()) {
    absl::Status captured = CaptureStep(slot);
    if (!captured.ok()) {
      if (IsOutOfMemory(captured)) return captured;
      // Nothing captured ran: this step and the rest run eagerly, so the
      // figures still come (a kernel's own error shows again there).
      cuda_graph_failure_ = std::string(captured.message());
      CompileLog({{"kernel", "step"}, {"cuda_graph", "no"}, {"why", cuda_graph_failure_}});
      RETURN_IF_ERROR(ForwardBackward());
      return Update();
    }
  }
  RETURN_IF_ERROR(EnqueueBatchReady(slot));
  RETURN_IF_ERROR(graphs_[slot].Launch(stream));
  RETURN_IF_ERROR(slots_[slot].done->Record(stream));
  last_step_slot_ = slot;
  ++steps_;
  return absl::OkStatus();
}

absl::Status Trainer::CaptureStep(int slot) {
  const Stream& stream = backend_->stream();
  absl::Status begun = CapturedWork::BeginCapture(stream);
  if (!begun.ok())
    return absl::Status(begun.code(),
                        absl::StrCat("capturing the step as a CUDA graph: ", begun.message()));
  absl::Status enqueued = EnqueueForwardBackward(slot);
  if (enqueued.ok()) enqueued = EnqueueUpdate();
  // End the capture whatever happened, so the stream is usable again.
  absl::StatusOr<CapturedWork> captured = CapturedWork::EndCapture(stream);
  if (!enqueued.ok())
    return absl::Status(enqueued.code(), absl::StrCat("enqueuing the step inside a CUDA graph "
                                                      "capture: ",
                                                      enqueued.message()));
  if (!captured.ok())
    return absl::Status(
        captured.status().code(),
        absl::StrCat("capturing the step as a CUDA graph: ", captured.status().message()));
  graphs_[slot] = *std::move(captured);
  return absl::OkStatus();
}

absl::Status Trainer::EnqueueBatchReady(int slot) {
  Slot& s = slots_[slot];
  if (upload_stream_ == nullptr) return absl::OkStatus();
  RETURN_IF_ERROR(backend_->stream().Wait(*s.uploaded));
  if (s.cast) {
    RETURN_IF_ERROR(backend_->Reorder(TensorSpec::Plain(DType::kF32, images_spec_.shape),
                                      s.staging.data(), images_spec_, s.images.data()));
    s.cast = false;  // later steps on this batch read the cast images
  }
  return absl::OkStatus();
}

absl::Status Trainer::ForwardBackward() {
  if (!have_batch_)
    return absl::FailedPreconditionError(
        "Trainer::ForwardBackward before any SetBatch: there is no batch to train on");
  RETURN_IF_ERROR(EnqueueBatchReady(active_slot_));
  RETURN_IF_ERROR(EnqueueForwardBackward(active_slot_));
  RETURN_IF_ERROR(slots_[active_slot_].done->Record(backend_->stream()));
  // Only now: LastLoss waits for this event before reading the slot's copy.
  last_step_slot_ = active_slot_;
  return absl::OkStatus();
}

absl::Status Trainer::EnqueueForwardBackward(int slot) {
  const int num_nodes = static_cast<int>(graph_.nodes.size());
  LayerTime& edges = profile_[edges_profile_];
  if (options_.poison_freed) RETURN_IF_ERROR(backend_->Fill(arena_.data(), 0xff, arena_.size()));

  // Forward.
  for (auto& layer_ptr : layers_) {
    Layer& layer = *layer_ptr;
    const KernelArgs& args = layer.args[slot];
    absl::Status s = Timed(&edges.forward_seconds, [&]() -> absl::Status {
      for (auto& in : layer.inputs)
        if (in.reorder)
          RETURN_IF_ERROR(backend_->Reorder(in.from, BufferData(in.source, slot), in.to,
                                            BufferData(in.buffer, slot)));
      return absl::OkStatus();
    });
    if (!s.ok()) return AtLayer("reordering the input of", layer.name, s);
    s = Timed(&profile_[layer.profile_index].forward_seconds,
              [&] { return layer.kernel->Forward(args); });
    if (!s.ok()) return AtLayer("forward of", layer.name, s);
    if (options_.poison_freed) RETURN_IF_ERROR(PoisonBuffersEndingAt(layer.node));
  }
  if (loss_host_.data() != nullptr)
    RETURN_IF_ERROR(CopyAsync(static_cast<float*>(loss_host_.data()) + slot, loss_, sizeof(float),
                              backend_->stream()));

  // Backward.
  char* grads = static_cast<char*>(grads_.data());
  char* lowp_grads = static_cast<char*>(lowp_grads_.data());
  for (auto it = layers_.rbegin(); it != layers_.rend(); ++it) {
    Layer& layer = **it;
    const KernelArgs& args = layer.args[slot];
    const int step = 2 * num_nodes - 1 - layer.node;
    if (layer.needs_grad) {
      if (layer.grad_edges.size() > 1 && args.dy_parts.empty()) {
        // Gradients of an output read by several layers add up.
        absl::Status s = Timed(&edges.backward_seconds, [&] {
          return backend_->AddN(layer.kernel->signature().output, layer.dy_parts[slot],
                                BufferData(layer.dy, slot));
        });
        if (!s.ok()) return AtLayer("summing the output gradients of", layer.name, s);
      }
      absl::Status s = Timed(&profile_[layer.profile_index].backward_seconds, [&] {
        absl::Status status = absl::OkStatus();
        if (layer.any_dx) status = layer.kernel->BackwardData(args);
        if (status.ok() && !layer.params.empty()) status = layer.kernel->BackwardWeights(args);
        return status;
      });
      if (!s.ok()) return AtLayer("backward of", layer.name, s);
      s = Timed(&edges.backward_seconds, [&]() -> absl::Status {
        for (auto& in : layer.inputs)
          if (in.needs_grad && in.reorder)
            RETURN_IF_ERROR(backend_->Reorder(in.to, BufferData(in.grad_tmp, slot), in.from,
                                              BufferData(in.grad, slot)));
        // Low-precision weight gradients become fp32 in the gradient block.
        for (int p : layer.params) {
          const Param& param = params_list_[p];
          if (param.low_precision)
            RETURN_IF_ERROR(backend_->Reorder(param.spec, lowp_grads + param.lowp_offset,
                                              param.master, grads + param.offset));
        }
        return absl::OkStatus();
      });
      if (!s.ok()) return AtLayer("the gradient casts and reorders of", layer.name, s);
      if (gradient_ready_ && !layer.params.empty())
        RETURN_IF_ERROR(gradient_ready_(RangeOf(layer)));
    }
    if (options_.poison_freed) RETURN_IF_ERROR(PoisonBuffersEndingAt(step));
  }
  return absl::OkStatus();
}

std::vector<std::string> Trainer::ReorderedEdges() const {
  std::vector<std::string> edges;
  for (const auto& layer : layers_)
    for (const auto& in : layer->inputs)
      if (in.reorder)
        edges.push_back(absl::StrCat(graph_.nodes[in.producer].name, " -> ", layer->name));
  return edges;
}

GradientRange Trainer::RangeOf(const Layer& layer) const {
  const Param& first = params_list_[layer.params.front()];
  const Param& last = params_list_[layer.params.back()];
  GradientRange range;
  range.node = origin_[layer.node];
  range.offset = first.offset;
  range.bytes = AlignUp(last.offset + last.master.bytes, backend_->alignment()) - first.offset;
  return range;
}

std::vector<GradientRange> Trainer::GradientRanges() const {
  std::vector<GradientRange> ranges;
  for (auto it = layers_.rbegin(); it != layers_.rend(); ++it)
    if ((*it)->needs_grad && !(*it)->params.empty()) ranges.push_back(RangeOf(**it));
  return ranges;
}

absl::Status Trainer::Update(const Event* ready) {
  if (ready != nullptr) RETURN_IF_ERROR(backend_->stream().Wait(*ready));
  RETURN_IF_ERROR(EnqueueUpdate());
  ++steps_;
  return absl::OkStatus();
}

absl::Status Trainer::EnqueueUpdate() {
  LayerTime& update = profile_[update_profile_];
  RETURN_IF_ERROR(Timed(&update.backward_seconds, [&]() -> absl::Status {
    if (optimizer_ != nullptr) {
      UpdateArgs args;
      args.params = static_cast<float*>(params_.data());
      args.grads = static_cast<const float*>(grads_.data());
      args.momentum = static_cast<float*>(momentum_.data());
      args.loss_scale = loss_scale_;
      args.overflow = dynamic_loss_scale() ? overflow_ : nullptr;
      args.step = device_step_;
      if (dynamic_loss_scale()) {
        args.good_steps = good_steps_;
        args.growth_interval = options_.loss_scale_growth_interval;
      }
      RETURN_IF_ERROR(optimizer_->Update(args));
    }
    return EnqueueRefreshWorkingCopies();
  }));
  return absl::OkStatus();
}

absl::Status Trainer::EnqueueRefreshWorkingCopies() {
  char* params = static_cast<char*>(params_.data());
  char* lowp_params = static_cast<char*>(lowp_params_.data());
  for (const Param& param : params_list_)
    if (param.low_precision)
      RETURN_IF_ERROR(backend_->Reorder(param.master, params + param.offset, param.spec,
                                        lowp_params + param.lowp_offset));
  return absl::OkStatus();
}

absl::Status Trainer::DeviceErrors() const {
  for (const auto& layer : layers_)
    if (layer != nullptr && layer->kernel != nullptr)
      RETURN_IF_ERROR(layer->kernel->DeviceErrors());
  return absl::OkStatus();
}

absl::StatusOr<float> Trainer::LastLoss() {
  if (loss_host_.data() != nullptr && last_step_slot_ >= 0) {
    // The last step's copy into pinned memory is done once its event is.
    RETURN_IF_ERROR(slots_[last_step_slot_].done->Synchronize());
    RETURN_IF_ERROR(DeviceErrors());
    return static_cast<const float*>(loss_host_.data())[last_step_slot_];
  }
  RETURN_IF_ERROR(backend_->stream().Synchronize());
  RETURN_IF_ERROR(DeviceErrors());
  float loss = 0;
  RETURN_IF_ERROR(
      backend_->Download(loss_spec_, loss_, TensorSpec::Plain(DType::kF32, Shape{}), &loss));
  return loss;
}

template <typename T>
absl::StatusOr<T> Trainer::ReadScalar(DType dtype, const T* device) {
  RETURN_IF_ERROR(backend_->stream().Synchronize());
  const TensorSpec scalar = TensorSpec::Plain(dtype, Shape{});
  T value{};
  RETURN_IF_ERROR(backend_->Download(scalar, device, scalar, &value));
  return value;
}

absl::StatusOr<float> Trainer::LossScale() { return ReadScalar(DType::kF32, loss_scale_); }

absl::StatusOr<int32_t> Trainer::CleanStepsSinceScaleChange() {
  return ReadScalar(DType::kI32, good_steps_);
}

absl::Status Trainer::Synchronize() {
  RETURN_IF_ERROR(backend_->stream().Synchronize());
  return DeviceErrors();
}

size_t Trainer::peak_memory_bytes() const {
  size_t bytes = arena_.size() + params_.size() + grads_.size() + momentum_.size() +
                 lowp_params_.size() + lowp_grads_.size() + state_.size() + scratch_.size() +
                 scalars_.size();
  for (const Slot& slot : slots_)
    bytes += slot.images.size() + slot.labels.size() + slot.staging.size();
  return bytes;
}

void Trainer::ResetProfile() {
  for (auto& t : profile_) t.forward_seconds = t.backward_seconds = 0;
}

absl::StatusOr<std::vector<float>> Trainer::ReadParameter(int node, int index) const {
  const int at = node >= 0 && node < static_cast<int>(node_of_.size()) ? node_of_[node] : -1;
  // An absorbed ReLU maps to the layer it was fused into: not its parameters.
  if (at >= 0 && origin_[at] == node && layer_of_[at] >= 0) {
    const Layer& layer = *layers_[layer_of_[at]];
    if (index >= 0 && index < static_cast<int>(layer.params.size())) {
      const Param& param = params_list_[layer.params[index]];
      std::vector<float> out(param.spec.shape.num_elements());
      RETURN_IF_ERROR(backend_->stream().Synchronize());
      RETURN_IF_ERROR(
          backend_->Download(param.master, static_cast<const char*>(params_.data()) + param.offset,
                             TensorSpec::Plain(DType::kF32, param.spec.shape), out.data()));
      return out;
    }
  }
  return absl::NotFoundError(absl::StrCat("node ", node, " has no parameter ", index));
}

}  // namespace cnnbench
