#include "train/trainer.h"

#include <algorithm>
#include <variant>

#include "absl/strings/str_cat.h"
#include "core/compile_log.h"
#include "core/status.h"
#include "kernels/op_traits.h"
#include "train/input_slots.h"

namespace cnnbench {
namespace {

// `status` with what was being done for which layer in front of its message
// (the code kept: OOM stays OOM).
absl::Status AtLayer(absl::string_view what, const std::string& layer, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(what, " ", layer, ": ", status.message()));
}

}  // namespace

Trainer::~Trainer() = default;

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::Compile(const Graph& graph, Backend* backend,
                                                          const TrainOptions& options) {
  if (backend == nullptr) return absl::InvalidArgumentError("Trainer::Compile: no backend");
  std::unique_ptr<Trainer> trainer(new Trainer());
  trainer->backend_ = backend;
  trainer->options_ = options;
  // The options, before anything is created or allocated.
  if (trainer->dynamic_loss_scale() &&
      !(options.initial_loss_scale >= kMinLossScale && options.initial_loss_scale <= kMaxLossScale))
    return absl::InvalidArgumentError(absl::StrCat("initial loss scale ",
                                                   options.initial_loss_scale, " is outside [",
                                                   kMinLossScale, ", ", kMaxLossScale, "]"));
  if (trainer->dynamic_loss_scale() && options.loss_scale_growth_interval < 1)
    return absl::InvalidArgumentError(absl::StrCat(
        "loss scale growth interval ", options.loss_scale_growth_interval, " must be at least 1"));
  StepPlanOptions plan;
  plan.precision = options.precision;
  plan.seed = options.seed;
  plan.batch_offset = options.batch_offset;
  plan.fuse_relu = options.fuse_relu;
  plan.conv_relu = options.conv_relu;
  plan.memory_limit_bytes = options.memory_limit_bytes;
  plan.keep_logits = options.keep_logits;
  ASSIGN_OR_RETURN_AS_IS(trainer->step_, PlanStep(graph, backend, plan));
  RETURN_IF_ERROR(trainer->AllocateAndBind());
  return trainer;
}

absl::Status Trainer::AllocateAndBind() {
  const Device device = backend_->device();
  // The device allocation and first-touch orders are the ones the step
  // figures were measured with (on a GPU the pinned host copy of the loss,
  // host memory, is now made with the scalars, after the input slots): touching the input slots
  // after the scalars, state and scratch instead made the resnet50_v1.5 batch-32 CPU step 25%
  // slower on the development VM (docs/results/2026-12-02-restructure-step.md).
  ASSIGN_OR_RETURN(state_, Buffer::Allocate(device, step_.state_bytes));
  ASSIGN_OR_RETURN(arena_, Buffer::Allocate(device, step_.memory.arena_bytes));
  ASSIGN_OR_RETURN(block_, ParameterBlock::Allocate(step_, backend_));
  ASSIGN_OR_RETURN(scratch_, Buffer::Allocate(device, step_.scratch_bytes));
  ASSIGN_OR_RETURN(inputs_, InputSlots::Create(backend_, step_.images_spec, step_.graph.batch));
  ASSIGN_OR_RETURN(scalars_, DeviceScalars::Allocate(backend_, step_.loss_spec));

  // Every page is touched here, not in the first timed step.
  RETURN_IF_ERROR(block_.Clear());
  RETURN_IF_ERROR(backend_->Fill(arena_.data(), 0, arena_.size()));
  RETURN_IF_ERROR(inputs_->Clear());
  RETURN_IF_ERROR(scalars_.Clear());
  for (Buffer* b : {&state_, &scratch_}) RETURN_IF_ERROR(backend_->Fill(b->data(), 0, b->size()));
  RETURN_IF_ERROR(scalars_.SetLossScale(dynamic_loss_scale() ? options_.initial_loss_scale : 1.0f));

  SgdDesc sgd;
  sgd.count = static_cast<int64_t>(step_.params_bytes / sizeof(float));
  sgd.learning_rate = options_.learning_rate;
  sgd.momentum = options_.momentum;
  sgd.weight_decay = options_.weight_decay;
  if (sgd.count > 0) {
    ASSIGN_OR_RETURN(optimizer_, backend_->CreateOptimizer(sgd));
  }
  bf16_copies_.clear();
  if (optimizer_ != nullptr && optimizer_->WritesBf16Copies())
    bf16_copies_ = block_.Bf16Copies(step_);
  RETURN_IF_ERROR(block_.Initialize(step_, options_.seed));
  RETURN_IF_ERROR(InitializeState());
  RETURN_IF_ERROR(timer_.SetProfiling(options_.profile, backend_->stream()));

  char* state = static_cast<char*>(state_.data());
  for (auto& layer_ptr : step_.layers) {
    Layer& layer = *layer_ptr;
    for (int slot = 0; slot < 2; ++slot) {
      KernelArgs& args = layer.args[slot];
      for (auto& in : layer.inputs) {
        args.x.push_back(BufferData(in.buffer, slot));
        args.dx.push_back(BufferData(in.reorder ? in.grad_tmp : in.grad, slot));
      }
      args.y = BufferData(layer.y, slot);
      for (int p : layer.params) {
        args.params.push_back(block_.weights(step_.params[p]));
        args.dparams.push_back(block_.weight_gradient(step_.params[p]));
      }
      for (size_t offset : layer.state_offsets) args.state.push_back(state + offset);
      args.saved = BufferData(layer.saved, slot);
      args.scratch = scratch_.data();
      args.dy = BufferData(layer.dy, slot);
      args.training = true;
      args.step = scalars_.step();
      if (dynamic_loss_scale() &&
          std::holds_alternative<SoftmaxXentDesc>(step_.graph.nodes[layer.node].op))
        args.loss_scale = scalars_.loss_scale();
      if (layer.grad_edges.size() > 1) {
        for (int e : layer.grad_edges) layer.dy_parts[slot].push_back(BufferData(e, slot));
        if (TakesOutputGradientParts(layer.kernel->signature(), layer.grad_edges.size()))
          args.dy_parts = layer.dy_parts[slot];
      }
    }
  }
  return backend_->stream().Synchronize();
}

absl::Status Trainer::InitializeState() {
  return cnnbench::InitializeState(step_, *backend_, state_.data());
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
      return scalars_.loss();
    default:
      return static_cast<char*>(arena_.data()) + step_.memory.offsets[buffer];
  }
}

absl::Status Trainer::PoisonBuffersEndingAt(int step) {
  for (int b : step_.ending_at[step])  // 0xff bytes: NaN in fp32, bf16 and fp16
    RETURN_IF_ERROR(backend_->Fill(BufferData(b, 0), 0xff, step_.requests[b].bytes));
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
  ASSIGN_OR_RETURN_AS_IS(
      graphs_[slot], CapturedWork::Capture(backend_->stream(), "the step", [&]() -> absl::Status {
        RETURN_IF_ERROR(EnqueueForwardBackward(slot));
        return EnqueueUpdate();
      }));
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
  const int num_nodes = static_cast<int>(step_.graph.nodes.size());
  if (options_.poison_freed) RETURN_IF_ERROR(backend_->Fill(arena_.data(), 0xff, arena_.size()));

  // Forward.
  for (auto& layer_ptr : step_.layers) {
    Layer& layer = *layer_ptr;
    const KernelArgs& args = layer.args[slot];
    // The input reorders (timed, and traced, only where there are some).
    const bool reorders = std::any_of(layer.inputs.begin(), layer.inputs.end(),
                                      [](const auto& in) { return in.reorder; });
    absl::Status s =
        !reorders ? absl::OkStatus()
                  : Timed(step_.edges_profile, Pass::kForward, [&]() -> absl::Status {
                      for (auto& in : layer.inputs)
                        if (in.reorder)
                          RETURN_IF_ERROR(backend_->Reorder(in.from, BufferData(in.source, slot),
                                                            in.to, BufferData(in.buffer, slot)));
                      return absl::OkStatus();
                    });
    if (!s.ok()) return AtLayer("reordering the input of", layer.name, s);
    s = Timed(layer.profile_index, Pass::kForward, [&] { return layer.kernel->Forward(args); });
    if (!s.ok()) return AtLayer("forward of", layer.name, s);
    if (options_.poison_freed) RETURN_IF_ERROR(PoisonBuffersEndingAt(layer.node));
  }
  RETURN_IF_ERROR(scalars_.EnqueueHostLossCopy(slot));

  // Backward.
  for (auto it = step_.layers.rbegin(); it != step_.layers.rend(); ++it) {
    Layer& layer = **it;
    const KernelArgs& args = layer.args[slot];
    const int step = 2 * num_nodes - 1 - layer.node;
    if (layer.needs_grad) {
      if (layer.grad_edges.size() > 1 && args.dy_parts.empty()) {
        // Gradients of an output read by several layers add up.
        absl::Status s = Timed(step_.edges_profile, Pass::kBackward, [&] {
          return backend_->AddN(layer.kernel->signature().output, layer.dy_parts[slot],
                                BufferData(layer.dy, slot));
        });
        if (!s.ok()) return AtLayer("summing the output gradients of", layer.name, s);
      }
      absl::Status s =
          Timed(layer.profile_index, Pass::kBackward, [&] { return layer.kernel->Backward(args); });
      if (!s.ok()) return AtLayer("backward of", layer.name, s);
      s = Timed(step_.edges_profile, Pass::kBackward, [&]() -> absl::Status {
        for (auto& in : layer.inputs)
          if (in.needs_grad && in.reorder)
            RETURN_IF_ERROR(backend_->Reorder(in.to, BufferData(in.grad_tmp, slot), in.from,
                                              BufferData(in.grad, slot)));
        // Low-precision weight gradients become fp32 in the gradient block.
        return block_.CastGradients(step_, layer);
      });
      if (!s.ok()) return AtLayer("the gradient casts and reorders of", layer.name, s);
      if (gradient_ready_ && !layer.params.empty())
        RETURN_IF_ERROR(gradient_ready_(step_.RangeOf(layer)));
    }
    if (options_.poison_freed) RETURN_IF_ERROR(PoisonBuffersEndingAt(step));
  }
  return absl::OkStatus();
}

std::vector<std::string> Trainer::ReorderedEdges() const {
  std::vector<std::string> edges;
  for (const auto& layer : step_.layers)
    for (const auto& in : layer->inputs)
      if (in.reorder)
        edges.push_back(absl::StrCat(step_.graph.nodes[in.producer].name, " -> ", layer->name));
  return edges;
}

std::vector<GradientRange> Trainer::GradientRanges() const {
  std::vector<GradientRange> ranges;
  for (auto it = step_.layers.rbegin(); it != step_.layers.rend(); ++it)
    if ((*it)->needs_grad && !(*it)->params.empty()) ranges.push_back(step_.RangeOf(**it));
  return ranges;
}

absl::Status Trainer::Update(const Event* ready) {
  if (ready != nullptr) RETURN_IF_ERROR(backend_->stream().Wait(*ready));
  RETURN_IF_ERROR(EnqueueUpdate());
  ++steps_;
  return absl::OkStatus();
}

absl::Status Trainer::EnqueueUpdate() {
  RETURN_IF_ERROR(Timed(step_.update_profile, Pass::kBackward, [&]() -> absl::Status {
    if (optimizer_ != nullptr) {
      UpdateArgs args;
      args.params = block_.masters();
      args.grads = block_.gradients();
      args.momentum = block_.momentum();
      args.loss_scale = scalars_.loss_scale();
      args.overflow = dynamic_loss_scale() ? scalars_.overflow() : nullptr;
      args.step = scalars_.step();
      if (dynamic_loss_scale()) {
        args.good_steps = scalars_.good_steps();
        args.growth_interval = options_.loss_scale_growth_interval;
      }
      args.bf16_copies = bf16_copies_.data();
      args.num_bf16_copies = static_cast<int>(bf16_copies_.size());
      RETURN_IF_ERROR(optimizer_->Update(args));
    }
    return block_.RefreshWorkingCopies(step_, /*except_bf16_copies=*/!bf16_copies_.empty());
  }));
  return absl::OkStatus();
}

absl::Status Trainer::DeviceErrors() const {
  for (const auto& layer : step_.layers)
    if (layer != nullptr && layer->kernel != nullptr)
      RETURN_IF_ERROR(layer->kernel->DeviceErrors());
  return absl::OkStatus();
}

absl::StatusOr<float> Trainer::LastLoss() {
  if (scalars_.has_host_loss() && last_step_slot_ >= 0) {
    // The last step's copy into pinned memory is done once its event is.
    RETURN_IF_ERROR(inputs_->done(last_step_slot_).Synchronize());
    RETURN_IF_ERROR(DeviceErrors());
    return scalars_.host_loss(last_step_slot_);
  }
  RETURN_IF_ERROR(backend_->stream().Synchronize());
  RETURN_IF_ERROR(DeviceErrors());
  return scalars_.ReadLoss();
}

absl::StatusOr<std::vector<float>> Trainer::LastLogits() {
  if (last_step_slot_ < 0)
    return absl::FailedPreconditionError("Trainer::LastLogits before any step: there are none");
  if (!options_.keep_logits)
    return absl::FailedPreconditionError(
        "Trainer::LastLogits: compiled with keep_logits false, the logits are not kept");
  RETURN_IF_ERROR(Synchronize());
  return ReadLogits(step_, *backend_, BufferData(LogitsBuffer(step_), last_step_slot_));
}

absl::StatusOr<float> Trainer::LossScale() { return scalars_.ReadLossScale(); }

absl::StatusOr<int32_t> Trainer::CleanStepsSinceScaleChange() { return scalars_.ReadGoodSteps(); }

absl::Status Trainer::Synchronize() {
  RETURN_IF_ERROR(backend_->stream().Synchronize());
  return DeviceErrors();
}

size_t Trainer::peak_memory_bytes() const {
  size_t bytes =
      arena_.size() + block_.bytes() + state_.size() + scratch_.size() + scalars_.bytes();
  if (inputs_ != nullptr) bytes += inputs_->bytes();
  return bytes;
}

void Trainer::ResetProfile() {
  for (auto& t : step_.profile) t.forward_seconds = t.backward_seconds = 0;
}

absl::Status Trainer::BeginTrace(std::vector<TraceSlice>* sink,
                                 std::chrono::steady_clock::time_point origin) {
  if (!inputs_->has_batch())
    return absl::FailedPreconditionError(
        "tracing a training step before any SetBatch: there is no batch to train on");
  RETURN_IF_ERROR(backend_->stream().Synchronize());
  profile_before_trace_ = step_.profile;
  return timer_.StartTrace(sink, backend_->stream(), origin);
}

void Trainer::EndTrace() {
  timer_.StopTrace();
  step_.profile = profile_before_trace_;
}

absl::StatusOr<std::vector<TraceSlice>> Trainer::TraceStep(
    const std::function<absl::Status(StepTimer&)>& after) {
  std::vector<TraceSlice> slices;
  RETURN_IF_ERROR(BeginTrace(&slices, std::chrono::steady_clock::now()));
  absl::Status status = ForwardBackward();
  if (status.ok()) status = Update();
  if (status.ok()) status = backend_->stream().Synchronize();
  if (status.ok() && after) status = after(timer_);
  EndTrace();
  RETURN_IF_ERROR(status);
  return slices;
}

absl::StatusOr<std::vector<float>> Trainer::ReadState(int node, int index) const {
  return ReadStateOf(step_, *backend_, state_.data(), node, index);
}

absl::StatusOr<std::vector<float>> Trainer::ReadParameter(int node, int index) const {
  const int at =
      node >= 0 && node < static_cast<int>(step_.node_of.size()) ? step_.node_of[node] : -1;
  // An absorbed ReLU maps to the layer it was fused into: not its parameters.
  if (at >= 0 && step_.origin[at] == node && step_.layer_of[at] >= 0) {
    const Layer& layer = *step_.layers[step_.layer_of[at]];
    if (index >= 0 && index < static_cast<int>(layer.params.size())) {
      return block_.Read(step_.params[layer.params[index]]);
    }
  }
  return absl::NotFoundError(absl::StrCat("node ", node, " has no parameter ", index));
}

}  // namespace cnnbench
