#include "train/inference.h"

#include <cmath>
#include <variant>

#include "absl/strings/str_cat.h"
#include "core/compile_log.h"
#include "core/status.h"
#include "kernels/op_traits.h"
#include "train/init.h"
#include "train/trainer.h"

namespace cnnbench {
namespace {

absl::Status AtLayer(absl::string_view what, const std::string& layer, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(what, " ", layer, ": ", status.message()));
}

}  // namespace

Inferencer::~Inferencer() = default;

absl::StatusOr<std::unique_ptr<Inferencer>> Inferencer::Compile(const Graph& graph,
                                                                Backend* backend,
                                                                const InferOptions& options) {
  if (backend == nullptr) return absl::InvalidArgumentError("Inferencer::Compile: no backend");
  std::unique_ptr<Inferencer> inferencer(new Inferencer());
  inferencer->backend_ = backend;
  inferencer->options_ = options;
  StepPlanOptions plan;
  plan.precision = options.precision;
  plan.seed = options.seed;
  plan.fuse_relu = options.fuse_relu;
  plan.fold_batch_norm = options.fold_batch_norm;
  plan.conv_relu = options.conv_relu;
  plan.conv_add = options.conv_add;
  plan.concat_in_place = options.concat_in_place;
  plan.memory_limit_bytes = options.memory_limit_bytes;
  plan.forward_only = true;
  ASSIGN_OR_RETURN_AS_IS(inferencer->step_, PlanStep(graph, backend, plan));
  RETURN_IF_ERROR(inferencer->AllocateAndBind());
  RETURN_IF_ERROR(inferencer->timer_.SetProfiling(options.profile, backend->stream()));
  return inferencer;
}

absl::Status Inferencer::AllocateAndBind() {
  const Device device = backend_->device();
  ASSIGN_OR_RETURN(state_, Buffer::Allocate(device, step_.state_bytes));
  ASSIGN_OR_RETURN(arena_, Buffer::Allocate(device, step_.memory.arena_bytes));
  ASSIGN_OR_RETURN(block_, ParameterBlock::Allocate(step_, backend_));
  ASSIGN_OR_RETURN(scratch_, Buffer::Allocate(device, step_.scratch_bytes));
  ASSIGN_OR_RETURN(inputs_, InputSlots::Create(backend_, step_.images_spec, step_.graph.batch));
  no_labels_.assign(static_cast<size_t>(step_.graph.batch), 0);

  RETURN_IF_ERROR(block_.Clear());
  RETURN_IF_ERROR(backend_->Fill(arena_.data(), 0, arena_.size()));
  RETURN_IF_ERROR(inputs_->Clear());
  for (Buffer* b : {&state_, &scratch_}) RETURN_IF_ERROR(backend_->Fill(b->data(), 0, b->size()));
  RETURN_IF_ERROR(block_.Initialize(step_, options_.seed));
  RETURN_IF_ERROR(InitializeState(step_, *backend_, state_.data()));
  // Folded layers: their weights from the initial convolutions and batch norms.
  if (step_.folded_batch_norms > 0) RETURN_IF_ERROR(Load(InitialWeights()));
  logits_layer_ = step_.layer_of[step_.graph.loss];
  char* state = static_cast<char*>(state_.data());
  for (auto& layer_ptr : step_.layers) {
    StepPlan::Layer& layer = *layer_ptr;
    for (int slot = 0; slot < 2; ++slot) {
      KernelArgs& args = layer.args[slot];
      for (auto& in : layer.inputs) {
        args.x.push_back(BufferData(in.buffer, slot));
        args.dx.push_back(nullptr);
      }
      args.y = BufferData(layer.y, slot);
      for (int p : layer.params) args.params.push_back(block_.weights(step_.params[p]));
      for (size_t offset : layer.state_offsets) args.state.push_back(state + offset);
      args.saved = BufferData(layer.saved, slot);
      args.scratch = scratch_.data();
      args.training = false;
    }
  }
  return backend_->stream().Synchronize();
}

void* Inferencer::BufferData(int buffer, int slot) const {
  switch (buffer) {
    case kNoBuffer:
    case kLossBuffer:  // the loss layer is not run
      return nullptr;
    case kImagesBuffer:
      return inputs_->images(slot);
    case kLabelsBuffer:
      return inputs_->labels(slot);
    default:
      return static_cast<char*>(arena_.data()) + step_.memory.offsets[buffer];
  }
}

absl::Status Inferencer::SetBatch(const float* images) {
  if (images == nullptr) return absl::InvalidArgumentError("Inferencer::SetBatch: null images");
  return inputs_->Set(images, no_labels_.data());
}

void Inferencer::ResetProfile() {
  for (auto& t : step_.profile) t.forward_seconds = t.backward_seconds = 0;
}

bool Inferencer::cuda_graph_active() const {
  return options_.cuda_graph && !options_.profile && cuda_graph_failure_.empty() &&
         (!backend_->device().is_cpu() || options_.capture_on_cpu_for_testing);
}

absl::Status Inferencer::Run() {
  if (!inputs_->has_batch())
    return absl::FailedPreconditionError(
        "Inferencer::Run before any SetBatch: there is no batch to run on");
  const int slot = inputs_->active();
  const Stream& stream = backend_->stream();
  RETURN_IF_ERROR(inputs_->EnqueueReady(slot));
  if (cuda_graph_active() && eager_done_[slot]) {
    if (!graphs_[slot].valid()) {
      absl::Status captured = CaptureForward(slot);
      if (!captured.ok() && IsOutOfMemory(captured)) return captured;
      if (!captured.ok()) {
        cuda_graph_failure_ = std::string(captured.message());
        CompileLog({{"kernel", "inference"}, {"cuda_graph", "no"}, {"why", cuda_graph_failure_}});
      }
    }
  }
  if (cuda_graph_active() && graphs_[slot].valid()) {
    RETURN_IF_ERROR(graphs_[slot].Launch(stream));
  } else {
    // A slot's first run is eager: libraries set up lazily on first use,
    // which must not happen inside a capture.
    eager_done_[slot] = true;
    RETURN_IF_ERROR(EnqueueForward(slot));
  }
  RETURN_IF_ERROR(inputs_->done(slot).Record(stream));
  last_slot_ = slot;
  ++runs_;
  return absl::OkStatus();
}

absl::Status Inferencer::CaptureForward(int slot) {
  ASSIGN_OR_RETURN_AS_IS(graphs_[slot],
                         CapturedWork::Capture(backend_->stream(), "the forward pass",
                                               [&] { return EnqueueForward(slot); }));
  return absl::OkStatus();
}

absl::Status Inferencer::EnqueueForward(int slot) {
  for (int l = 0; l < static_cast<int>(step_.layers.size()); ++l) {
    if (l == logits_layer_) continue;  // the loss: a deployment has no labels
    StepPlan::Layer& layer = *step_.layers[l];
    for (auto& in : layer.inputs) {
      if (!in.reorder) continue;
      absl::Status s = timer_.Time(step_.profile[step_.edges_profile], true, true, "forward", [&] {
        return backend_->Reorder(in.from, BufferData(in.source, slot), in.to,
                                 BufferData(in.buffer, slot));
      });
      if (!s.ok()) return AtLayer("reordering the input of", layer.name, s);
    }
    absl::Status s = timer_.Time(step_.profile[layer.profile_index], true, false, "forward",
                                 [&] { return layer.kernel->Forward(layer.args[slot]); });
    if (!s.ok()) return AtLayer("forward of", layer.name, s);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TraceSlice>> Inferencer::TraceRun() {
  if (!inputs_->has_batch())
    return absl::FailedPreconditionError(
        "Inferencer::TraceRun before any SetBatch: there is no batch to run on");
  const int slot = inputs_->active();
  RETURN_IF_ERROR(backend_->stream().Synchronize());
  std::vector<TraceSlice> slices;
  RETURN_IF_ERROR(timer_.StartTrace(&slices, backend_->stream()));
  absl::Status status = inputs_->EnqueueReady(slot);
  if (status.ok()) status = EnqueueForward(slot);
  if (status.ok()) status = inputs_->done(slot).Record(backend_->stream());
  if (status.ok()) status = backend_->stream().Synchronize();
  timer_.StopTrace();
  RETURN_IF_ERROR(status);
  last_slot_ = slot;
  return slices;
}

absl::Status Inferencer::DeviceErrors() const {
  for (const auto& layer : step_.layers) RETURN_IF_ERROR(layer->kernel->DeviceErrors());
  return absl::OkStatus();
}

absl::Status Inferencer::Synchronize() {
  RETURN_IF_ERROR(backend_->stream().Synchronize());
  return DeviceErrors();
}

absl::StatusOr<std::vector<float>> Inferencer::Logits() {
  if (last_slot_ < 0)
    return absl::FailedPreconditionError("Inferencer::Logits before any Run: there are none");
  RETURN_IF_ERROR(Synchronize());
  return ReadLogits(step_, *backend_, BufferData(LogitsBuffer(step_), last_slot_));
}

Inferencer::WeightSource Inferencer::InitialWeights() const {
  const Graph& given = step_.original_graph;
  const uint64_t seed = options_.seed;
  WeightSource source;
  source.param = [&given, seed](int node, int index) -> absl::StatusOr<std::vector<float>> {
    const OpDesc& op = given.nodes[node].op;
    const std::vector<Shape> shapes = ParameterShapes(op);
    if (index < 0 || index >= static_cast<int>(shapes.size()))
      return absl::NotFoundError(absl::StrCat("node ", node, " has no parameter ", index));
    const auto consumers = given.Consumers();
    // As ParameterBlock::Initialize: the ReLU-aware scale before a ReLU.
    const bool relu_after = consumers[node].size() == 1 &&
                            std::holds_alternative<ReluDesc>(given.nodes[consumers[node][0]].op);
    return InitialParameter(op, index, shapes[index], relu_after, ParameterSeed(seed, node, index));
  };
  source.state = [&given](int node, int index) -> absl::StatusOr<std::vector<float>> {
    const OpDesc& op = given.nodes[node].op;
    const std::vector<Shape> shapes = StateShapes(op);
    if (index < 0 || index >= static_cast<int>(shapes.size()))
      return absl::NotFoundError(absl::StrCat("node ", node, " has no state tensor ", index));
    return std::vector<float>(shapes[index].num_elements(), StateStart(op, index));
  };
  return source;
}

absl::Status Inferencer::Load(const WeightSource& source) {
  const Graph& given = step_.original_graph;
  char* state = static_cast<char*>(state_.data());
  for (const auto& layer : step_.layers) {
    const int node = step_.origin[layer->node];
    const int bn_node = step_.folded_bn.empty() ? -1 : step_.folded_bn[layer->node];
    const KernelSignature& sig = layer->kernel->signature();
    if (bn_node >= 0) {
      // w' = w s, b' = (b - mean) s + beta, s = gamma / sqrt(var + eps), per output channel.
      const ConvDesc& conv = std::get<ConvDesc>(given.nodes[node].op);
      const BatchNormDesc& bn = std::get<BatchNormDesc>(given.nodes[bn_node].op);
      ASSIGN_OR_RETURN(std::vector<float> w, source.param(node, 0));
      std::vector<float> b(conv.k, 0.0f);
      if (conv.bias) {
        ASSIGN_OR_RETURN(b, source.param(node, 1));
      }
      std::vector<float> gamma(conv.k, 1.0f);
      if (bn.scale) {
        ASSIGN_OR_RETURN(gamma, source.param(bn_node, 0));
      }
      ASSIGN_OR_RETURN(const std::vector<float> beta, source.param(bn_node, bn.scale ? 1 : 0));
      ASSIGN_OR_RETURN(const std::vector<float> mean, source.state(bn_node, 0));
      ASSIGN_OR_RETURN(const std::vector<float> var, source.state(bn_node, 1));
      const size_t per_channel = w.size() / static_cast<size_t>(conv.k);
      for (int64_t k = 0; k < conv.k; ++k) {
        const double s = gamma[k] / std::sqrt(static_cast<double>(var[k]) + bn.epsilon);
        for (size_t i = 0; i < per_channel; ++i) w[k * per_channel + i] *= static_cast<float>(s);
        b[k] = static_cast<float>((b[k] - mean[k]) * s + beta[k]);
      }
      RETURN_IF_ERROR(block_.Write(step_.params[layer->params[0]], w));
      RETURN_IF_ERROR(block_.Write(step_.params[layer->params[1]], b));
      continue;
    }
    for (size_t p = 0; p < layer->params.size(); ++p) {
      ASSIGN_OR_RETURN(const std::vector<float> values, source.param(node, static_cast<int>(p)));
      RETURN_IF_ERROR(block_.Write(step_.params[layer->params[p]], values));
    }
    for (size_t s = 0; s < sig.state.size(); ++s) {
      ASSIGN_OR_RETURN(const std::vector<float> values, source.state(node, static_cast<int>(s)));
      RETURN_IF_ERROR(backend_->Upload(TensorSpec::Plain(DType::kF32, sig.state[s].shape),
                                       values.data(), sig.state[s],
                                       state + layer->state_offsets[s]));
    }
  }
  return backend_->stream().Synchronize();
}

absl::Status Inferencer::CopyWeightsFrom(const Trainer& trainer) {
  const StepPlan& from = trainer.step_plan();
  if (trainer.backend() != backend_)
    return absl::InvalidArgumentError(
        "CopyWeightsFrom: the trainer runs on another backend object");
  // A plan with other layers than the trainer's (folded batch norms, ReLUs
  // as convolution epilogues, which a training plan never has) loads layer
  // by layer from the trainer's parameters of the same given graph.
  bool same_layers = from.graph.nodes.size() == step_.graph.nodes.size();
  for (size_t i = 0; same_layers && i < step_.graph.nodes.size(); ++i)
    same_layers = OpDescToString(from.graph.nodes[i].op) == OpDescToString(step_.graph.nodes[i].op);
  if (step_.folded_batch_norms > 0 || !same_layers) {
    if (from.original_graph.nodes.size() != step_.original_graph.nodes.size())
      return absl::InvalidArgumentError(absl::StrCat(
          "CopyWeightsFrom: the trainer's graph has ", from.original_graph.nodes.size(),
          " nodes, this one ", step_.original_graph.nodes.size()));
    for (size_t i = 0; i < from.original_graph.nodes.size(); ++i)
      if (OpDescToString(from.original_graph.nodes[i].op) !=
          OpDescToString(step_.original_graph.nodes[i].op))
        return absl::InvalidArgumentError(absl::StrCat("CopyWeightsFrom: node ",
                                                       step_.original_graph.nodes[i].name,
                                                       " differs in the trainer"));
    RETURN_IF_ERROR(trainer.backend()->stream().Synchronize());
    WeightSource source;
    source.param = [&trainer](int node, int index) { return trainer.ReadParameter(node, index); };
    source.state = [&trainer](int node, int index) { return trainer.ReadState(node, index); };
    return Load(source);
  }
  if (from.graph.nodes.size() != step_.graph.nodes.size() ||
      from.params.size() != step_.params.size() || from.params_bytes != step_.params_bytes ||
      from.state_bytes != step_.state_bytes)
    return absl::InvalidArgumentError(absl::StrCat(
        "CopyWeightsFrom: the trainer's plan has ", from.graph.nodes.size(), " layers, ",
        from.params.size(), " parameters, ", from.params_bytes, " parameter bytes and ",
        from.state_bytes, " state bytes; this one ", step_.graph.nodes.size(), ", ",
        step_.params.size(), ", ", step_.params_bytes, " and ", step_.state_bytes));
  for (size_t i = 0; i < step_.graph.nodes.size(); ++i)
    if (OpDescToString(from.graph.nodes[i].op) != OpDescToString(step_.graph.nodes[i].op))
      return absl::InvalidArgumentError(
          absl::StrCat("CopyWeightsFrom: layer ", step_.graph.nodes[i].name, " is ",
                       OpDescToString(step_.graph.nodes[i].op), " here, ",
                       OpDescToString(from.graph.nodes[i].op), " in the trainer"));
  for (size_t p = 0; p < step_.params.size(); ++p) {
    const StepPlan::Param &a = from.params[p], &b = step_.params[p];
    if (a.offset != b.offset || a.master.bytes != b.master.bytes ||
        a.master.dtype != b.master.dtype || a.master.layout != b.master.layout)
      return absl::InvalidArgumentError(
          absl::StrCat("CopyWeightsFrom: parameter ", b.index, " of layer ",
                       step_.layers[b.layer]->name, " is laid out as ", b.master.DebugString(),
                       " here, ", a.master.DebugString(), " in the trainer"));
  }
  RETURN_IF_ERROR(trainer.backend()->stream().Synchronize());
  RETURN_IF_ERROR(backend_->Copy(block_.masters(), trainer.parameters(), step_.params_bytes));
  RETURN_IF_ERROR(backend_->Copy(state_.data(), trainer.state(), step_.state_bytes));
  RETURN_IF_ERROR(block_.RefreshWorkingCopies(step_));
  // A captured forward reads the same memory: nothing to recapture.
  return backend_->stream().Synchronize();
}

absl::StatusOr<std::vector<float>> Inferencer::ReadParameter(int node, int index) const {
  ASSIGN_OR_RETURN(const StepPlan::Layer* layer, LayerOfNode(step_, node));
  if (index < 0 || index >= static_cast<int>(layer->params.size()))
    return absl::NotFoundError(absl::StrCat("node ", node, " has no parameter ", index));
  return block_.Read(step_.params[layer->params[index]]);
}

absl::StatusOr<std::vector<float>> Inferencer::ReadState(int node, int index) const {
  return ReadStateOf(step_, *backend_, state_.data(), node, index);
}

size_t Inferencer::peak_memory_bytes() const {
  size_t bytes = arena_.size() + block_.bytes() + state_.size() + scratch_.size();
  if (inputs_ != nullptr) bytes += inputs_->bytes();
  return bytes;
}

absl::StatusOr<int64_t> CountInTopK(const std::vector<float>& logits,
                                    const std::vector<int32_t>& labels, int64_t classes, int k) {
  if (classes <= 0 || k <= 0)
    return absl::InvalidArgumentError(
        absl::StrCat("top-", k, " of ", classes, " classes: both must be positive"));
  const int64_t rows = static_cast<int64_t>(labels.size());
  if (static_cast<int64_t>(logits.size()) != rows * classes)
    return absl::InvalidArgumentError(absl::StrCat("top-", k, ": ", logits.size(), " logits for ",
                                                   rows, " labels of ", classes, " classes"));
  int64_t correct = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t label = labels[r];
    if (label < 0 || label >= classes)
      return absl::InvalidArgumentError(absl::StrCat("top-", k, ": label ", label, " of row ", r,
                                                     " is outside [0, ", classes, ")"));
    const float* row = logits.data() + r * classes;
    const float target = row[label];
    if (!std::isfinite(target)) continue;
    int64_t higher = 0;
    for (int64_t c = 0; c < classes && higher < k; ++c)
      if (row[c] > target) ++higher;
    if (higher < k) ++correct;
  }
  return correct;
}

}  // namespace cnnbench
