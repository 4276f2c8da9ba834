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
#include "train/input_slots.h"
#include "train/trainer_internal.h"

namespace cnnbench {

Trainer::~Trainer() = default;

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
    // Each step copies its loss here behind its forward pass (one float per
    // input slot), so LastLoss waits for that step only and reads host memory.
    if (loss_spec_.dtype == DType::kF32) {
      ASSIGN_OR_RETURN(loss_host_, Buffer::AllocatePinnedHost(2 * sizeof(float)));
    }
  }
  ASSIGN_OR_RETURN(inputs_, InputSlots::Create(backend_, images_spec_, graph_.batch));
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
  // zero; and every page is touched here, not in the first timed step. The
  // order is the one the step figures were measured with: touching the
  // input slots after the scalars, state and scratch instead made the
  // resnet50_v1.5 batch-32 CPU step 25% slower on the development VM
  // (docs/results/2026-12-02-restructure-step.md).
  for (Buffer* b : {&params_, &grads_, &momentum_, &lowp_params_, &lowp_grads_, &arena_})
    RETURN_IF_ERROR(backend_->Fill(b->data(), 0, b->size()));
  RETURN_IF_ERROR(inputs_->Clear());
  for (Buffer* b : {&scalars_, &state_, &scratch_})
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
      return inputs_->images(slot);
    case kLabelsBuffer:
      return inputs_->labels(slot);
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
  return inputs_->Set(images, labels);
}

bool Trainer::cuda_graph_active() const {
  return options_.cuda_graph && !options_.profile && cuda_graph_failure_.empty() &&
         (!backend_->device().is_cpu() || options_.capture_on_cpu_for_testing);
}

absl::Status Trainer::Step() {
  if (!inputs_->has_batch())
    return absl::FailedPreconditionError(
        "Trainer::Step before any SetBatch: there is no batch to train on");
  if (!cuda_graph_active()) {
    RETURN_IF_ERROR(ForwardBackward());
    return Update();
  }
  const int slot = inputs_->active();
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
  RETURN_IF_ERROR(inputs_->EnqueueReady(slot));
  RETURN_IF_ERROR(graphs_[slot].Launch(stream));
  RETURN_IF_ERROR(inputs_->done(slot).Record(stream));
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

absl::Status Trainer::ForwardBackward() {
  if (!inputs_->has_batch())
    return absl::FailedPreconditionError(
        "Trainer::ForwardBackward before any SetBatch: there is no batch to train on");
  const int slot = inputs_->active();
  RETURN_IF_ERROR(inputs_->EnqueueReady(slot));
  RETURN_IF_ERROR(EnqueueForwardBackward(slot));
  RETURN_IF_ERROR(inputs_->done(slot).Record(backend_->stream()));
  // Only now: LastLoss waits for this event before reading the slot's copy.
  last_step_slot_ = slot;
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
    RETURN_IF_ERROR(inputs_->done(last_step_slot_).Synchronize());
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
  if (inputs_ != nullptr) bytes += inputs_->bytes();
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
