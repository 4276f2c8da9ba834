#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "train/init.h"

namespace cnnbench {
namespace {

constexpr int kNoBuffer = -1;
constexpr int kImagesBuffer = -2;
constexpr int kLabelsBuffer = -3;
constexpr int kLossBuffer = -4;

size_t Align64(size_t bytes) { return (bytes + 63) / 64 * 64; }

// The (N,C,H,W) an elementwise op's descriptor expects for input `k`, when it
// has one: a plain (N,C) tensor from an fc layer is read as (N,C,1,1).
std::optional<Shape> ExpectedInputShape(const OpDesc& op) {
  if (const auto* d = std::get_if<ReluDesc>(&op)) return d->dims.shape();
  if (const auto* d = std::get_if<DropoutDesc>(&op)) return d->dims.shape();
  if (const auto* d = std::get_if<BatchNormDesc>(&op)) return d->dims.shape();
  if (const auto* d = std::get_if<AddDesc>(&op)) return d->dims.shape();
  if (const auto* d = std::get_if<LrnDesc>(&op)) return d->dims.shape();
  return std::nullopt;
}

using Clock = std::chrono::steady_clock;
double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

struct Trainer::Layer {
  struct Input {
    int producer = -1;        // node index
    int source = kNoBuffer;   // buffer with the producer's output
    int buffer = kNoBuffer;   // what the kernel reads (== source unless reordered)
    bool reorder = false;     // source -> buffer before Forward
    TensorSpec from, to;      // producer's spec, kernel's spec
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
  std::vector<size_t> param_offsets;  // bytes into params_/grads_/momentum_
  std::vector<size_t> state_offsets;  // bytes into state_
  bool needs_grad = false;
  std::vector<int> grad_edges;  // this node's output gradient, one per consuming edge
  int dy = kNoBuffer;           // what the backward pass reads
  bool any_dx = false;          // some input needs a gradient
  int profile_index = -1;
  KernelArgs args;              // bound once after allocation: a step allocates nothing
};

Trainer::~Trainer() = default;

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::Compile(const Graph& graph, Backend* backend,
                                                          const TrainOptions& options) {
  std::unique_ptr<Trainer> trainer(new Trainer());
  RETURN_IF_ERROR(trainer->Build(graph, backend, options));
  return trainer;
}

absl::Status Trainer::Build(const Graph& graph, Backend* backend, const TrainOptions& options) {
  graph_ = graph;
  backend_ = backend;
  options_ = options;
  if (options.precision != Precision::kFp32)
    return absl::UnimplementedError(absl::StrCat(
        "unsupported: precision ", PrecisionName(options.precision), " on ",
        backend->device().ToString(), " (the executor runs fp32 there)"));
  const int num_nodes = static_cast<int>(graph.nodes.size());
  if (graph.images < 0 || graph.labels < 0 || graph.loss < 0)
    return absl::InvalidArgumentError("graph needs images, labels and a loss node");
  auto forward_step = [](int node) { return node; };
  auto backward_step = [num_nodes](int node) { return 2 * num_nodes - 1 - node; };

  // ---- Kernels, in forward order; layouts flow from producer to consumer. ----
  std::vector<TensorSpec> output_spec(num_nodes);
  std::vector<int> layer_of(num_nodes, -1);
  std::vector<bool> needs_grad(num_nodes, false);
  images_spec_ = TensorSpec::Plain(DType::kF32, graph.nodes[graph.images].output);
  output_spec[graph.images] = images_spec_;
  output_spec[graph.labels] = TensorSpec::Plain(DType::kI32, graph.nodes[graph.labels].output);
  for (int i = 0; i < num_nodes; ++i) {
    const Node& node = graph.nodes[i];
    if (node.kind != Node::Kind::kOp) continue;
    std::vector<TensorSpec> in_specs;
    const std::optional<Shape> expected = ExpectedInputShape(node.op);
    for (int in : node.inputs) {
      if (in < 0 || in >= i)
        return absl::InvalidArgumentError(
            absl::StrCat("node ", node.name, " reads node ", in, ", which does not come before it"));
      TensorSpec spec = output_spec[in];
      // Same bytes, same order: only the logical rank differs.
      if (expected && spec.is_plain() && spec.shape != *expected &&
          spec.shape.num_elements() == expected->num_elements())
        spec = TensorSpec::Plain(spec.dtype, *expected);
      in_specs.push_back(spec);
    }
    auto kernel = backend->Create(node.op, DType::kF32, in_specs);
    if (!kernel.ok())
      return absl::Status(kernel.status().code(),
                          absl::StrCat("layer ", node.name, " (", OpDescToString(node.op),
                                       "): ", kernel.status().message()));
    auto layer = std::make_unique<Layer>();
    layer->node = i;
    layer->name = node.name;
    layer->kernel = *std::move(kernel);
    const KernelSignature& sig = layer->kernel->signature();
    if (sig.inputs.size() != node.inputs.size())
      return absl::InternalError(absl::StrCat("layer ", node.name, ": kernel takes ",
                                              sig.inputs.size(), " inputs, node has ",
                                              node.inputs.size()));
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      Layer::Input input;
      input.producer = node.inputs[k];
      input.from = in_specs[k];
      input.to = sig.inputs[k];
      input.reorder = !backend->SameLayout(input.from, input.to);
      layer->inputs.push_back(std::move(input));
    }
    output_spec[i] = sig.output;
    bool grad = !sig.params.empty();
    for (int in : node.inputs) grad = grad || needs_grad[in];
    needs_grad[i] = grad;
    layer->needs_grad = grad;
    for (auto& input : layer->inputs) input.needs_grad = needs_grad[input.producer];
    layer_of[i] = static_cast<int>(layers_.size());
    LayerTime time;
    time.name = node.name;
    time.op = OpDescToString(node.op);
    time.implementation = layer->kernel->implementation();
    layer->profile_index = static_cast<int>(profile_.size());
    profile_.push_back(time);
    layers_.push_back(std::move(layer));
  }
  profile_.push_back({"edges", "reorders and gradient sums", "executor", 0, 0});
  profile_.push_back({"update", "sgd", "executor", 0, 0});

  // ---- Buffers and their lifetimes in the schedule. ----
  auto request = [this](std::string name, size_t bytes, int first, int last) {
    requests_.push_back({std::move(name), bytes, first, last});
    return static_cast<int>(requests_.size()) - 1;
  };
  const auto consumers = graph.Consumers();
  for (auto& layer_ptr : layers_)
    if (layer_ptr->node != graph.loss && consumers[layer_ptr->node].empty())
      return absl::InvalidArgumentError(absl::StrCat(
          "layer ", layer_ptr->name, ": its output is not used by any layer (a dangling branch)"));
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
        const Layer& consumer = *layers_[layer_of[c]];
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
        const int last = sig.backward_reads_inputs && layer.needs_grad ? backward_step(i)
                                                                       : forward_step(i);
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
    for (size_t k = 0; k < layer.inputs.size(); ++k) {
      auto& input = layer.inputs[k];
      if (!input.needs_grad) continue;
      Layer& producer = *layers_[layer_of[input.producer]];
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
    if (layer.grad_edges.size() > 1)
      layer.dy = request(layer.name + "/dy_sum", layer.kernel->signature().output.bytes,
                         backward_step(layer.node), backward_step(layer.node));
  }

  plan_ = PlanMemory(requests_);
  RETURN_IF_ERROR(VerifyPlan(requests_, plan_));
  ending_at_.assign(2 * num_nodes, {});
  for (int b = 0; b < static_cast<int>(requests_.size()); ++b)
    ending_at_[requests_[b].last].push_back(b);

  // ---- Persistent memory: parameters (one block, so the update is fused), state. ----
  size_t param_bytes = 0, state_bytes = 0, scratch_bytes = 0;
  for (auto& layer : layers_) {
    const KernelSignature& sig = layer->kernel->signature();
    for (const TensorSpec& p : sig.params) {
      if (p.dtype != DType::kF32)
        return absl::UnimplementedError(absl::StrCat("layer ", layer->name,
                                                     ": parameters must be fp32 (master copy)"));
      layer->param_offsets.push_back(param_bytes);
      param_bytes += Align64(p.bytes);
      parameter_count_ += p.shape.num_elements();
    }
    for (const TensorSpec& s : sig.state) {
      layer->state_offsets.push_back(state_bytes);
      state_bytes += Align64(s.bytes);
    }
    scratch_bytes = std::max(scratch_bytes, sig.scratch_bytes);
  }
  params_bytes_ = param_bytes;
  const Device device = backend->device();
  ASSIGN_OR_RETURN(arena_, Buffer::Allocate(device, plan_.arena_bytes));
  ASSIGN_OR_RETURN(params_, Buffer::Allocate(device, param_bytes));
  ASSIGN_OR_RETURN(grads_, Buffer::Allocate(device, param_bytes));
  ASSIGN_OR_RETURN(momentum_, Buffer::Allocate(device, param_bytes));
  ASSIGN_OR_RETURN(state_, Buffer::Allocate(device, state_bytes));
  ASSIGN_OR_RETURN(scratch_, Buffer::Allocate(device, scratch_bytes));
  ASSIGN_OR_RETURN(images_, Buffer::Allocate(device, images_spec_.bytes));
  ASSIGN_OR_RETURN(labels_, Buffer::Allocate(device, graph.batch * sizeof(int32_t)));
  ASSIGN_OR_RETURN(loss_, Buffer::Allocate(device, 64));
  // Padding between parameters stays zero, so the fused update leaves it zero.
  std::memset(params_.data(), 0, param_bytes);
  std::memset(grads_.data(), 0, param_bytes);
  std::memset(momentum_.data(), 0, param_bytes);
  std::memset(images_.data(), 0, images_.size());
  std::memset(labels_.data(), 0, labels_.size());
  std::memset(arena_.data(), 0, arena_.size());

  SgdDesc sgd;
  sgd.count = static_cast<int64_t>(param_bytes / sizeof(float));
  sgd.learning_rate = options.learning_rate;
  sgd.momentum = options.momentum;
  sgd.weight_decay = options.weight_decay;
  if (sgd.count > 0) {
    ASSIGN_OR_RETURN(optimizer_, backend->CreateOptimizer(sgd));
  }
  RETURN_IF_ERROR(InitializeParameters());

  // Bind every kernel's buffers once; addresses never change after this.
  char* params = static_cast<char*>(params_.data());
  char* grads = static_cast<char*>(grads_.data());
  char* state = static_cast<char*>(state_.data());
  for (auto& layer_ptr : layers_) {
    Layer& layer = *layer_ptr;
    KernelArgs& args = layer.args;
    for (auto& in : layer.inputs) {
      args.x.push_back(BufferData(in.buffer));
      args.dx.push_back(BufferData(in.reorder ? in.grad_tmp : in.grad));
      layer.any_dx = layer.any_dx || in.needs_grad;
    }
    args.y = BufferData(layer.y);
    for (size_t offset : layer.param_offsets) {
      args.params.push_back(params + offset);
      args.dparams.push_back(grads + offset);
    }
    for (size_t offset : layer.state_offsets) args.state.push_back(state + offset);
    args.saved = BufferData(layer.saved);
    args.scratch = scratch_.data();
    args.dy = BufferData(layer.dy);
    args.training = true;
  }
  return absl::OkStatus();
}

absl::Status Trainer::InitializeParameters() {
  const auto consumers = graph_.Consumers();
  for (size_t l = 0; l < layers_.size(); ++l) {
    Layer& layer = *layers_[l];
    const Node& node = graph_.nodes[layer.node];
    const KernelSignature& sig = layer.kernel->signature();
    // A layer followed by a ReLU gets the ReLU-aware scale (as tf_cnn_benchmarks' affine).
    bool relu_after = consumers[layer.node].size() == 1 &&
                      std::holds_alternative<ReluDesc>(graph_.nodes[consumers[layer.node][0]].op);
    for (size_t p = 0; p < sig.params.size(); ++p) {
      const TensorSpec& spec = sig.params[p];
      const TensorSpec plain = TensorSpec::Plain(DType::kF32, spec.shape);
      const uint64_t seed = ParameterSeed(options_.seed, layer.node, static_cast<int>(p));
      std::vector<float> values =
          InitialParameter(node.op, static_cast<int>(p), spec.shape, relu_after, seed);
      void* dst = static_cast<char*>(params_.data()) + layer.param_offsets[p];
      RETURN_IF_ERROR(backend_->Reorder(plain, values.data(), spec, dst));
    }
    for (size_t s = 0; s < sig.state.size(); ++s) {
      const TensorSpec& spec = sig.state[s];
      // Batch norm's running mean starts at 0, running variance at 1.
      std::vector<float> values(spec.shape.num_elements(), s == 1 ? 1.0f : 0.0f);
      void* dst = static_cast<char*>(state_.data()) + layer.state_offsets[s];
      RETURN_IF_ERROR(
          backend_->Reorder(TensorSpec::Plain(DType::kF32, spec.shape), values.data(), spec, dst));
    }
  }
  return absl::OkStatus();
}

void* Trainer::BufferData(int buffer) const {
  switch (buffer) {
    case kNoBuffer: return nullptr;
    case kImagesBuffer: return images_.data();
    case kLabelsBuffer: return labels_.data();
    case kLossBuffer: return loss_.data();
    default: return static_cast<char*>(arena_.data()) + plan_.offsets[buffer];
  }
}

void Trainer::PoisonBuffersEndingAt(int step) {
  for (int b : ending_at_[step]) std::memset(BufferData(b), 0xff, requests_[b].bytes);  // NaNs
}

absl::Status Trainer::SetBatch(const float* images, const int32_t* labels) {
  std::memcpy(images_.data(), images, images_spec_.bytes);
  std::memcpy(labels_.data(), labels, graph_.batch * sizeof(int32_t));
  return absl::OkStatus();
}

absl::StatusOr<float> Trainer::Step() {
  const int num_nodes = static_cast<int>(graph_.nodes.size());
  const bool profile = options_.profile;
  LayerTime& edges = profile_[profile_.size() - 2];
  LayerTime& update = profile_.back();
  if (options_.poison_freed) std::memset(arena_.data(), 0xff, arena_.size());

  // Forward.
  for (auto& layer_ptr : layers_) {
    Layer& layer = *layer_ptr;
    Clock::time_point start = profile ? Clock::now() : Clock::time_point();
    for (auto& in : layer.inputs)
      if (in.reorder)
        RETURN_IF_ERROR(backend_->Reorder(in.from, BufferData(in.source), in.to,
                                          BufferData(in.buffer)));
    if (profile) edges.forward_seconds += SecondsSince(start);
    if (profile) start = Clock::now();
    absl::Status s = layer.kernel->Forward(layer.args);
    if (profile) profile_[layer.profile_index].forward_seconds += SecondsSince(start);
    if (!s.ok())
      return absl::Status(s.code(), absl::StrCat("forward of ", layer.name, ": ", s.message()));
    if (options_.poison_freed) PoisonBuffersEndingAt(layer.node);
  }
  float loss = 0;
  std::memcpy(&loss, loss_.data(), sizeof(float));

  // Backward.
  for (auto it = layers_.rbegin(); it != layers_.rend(); ++it) {
    Layer& layer = **it;
    const int step = 2 * num_nodes - 1 - layer.node;
    if (layer.needs_grad) {
      Clock::time_point start = profile ? Clock::now() : Clock::time_point();
      if (layer.grad_edges.size() > 1) {
        // Gradients of an output read by several layers add up.
        float* sum = static_cast<float*>(BufferData(layer.dy));
        const size_t n = layer.kernel->signature().output.bytes / sizeof(float);
        std::memcpy(sum, BufferData(layer.grad_edges[0]), n * sizeof(float));
        for (size_t e = 1; e < layer.grad_edges.size(); ++e) {
          const float* g = static_cast<const float*>(BufferData(layer.grad_edges[e]));
          for (size_t j = 0; j < n; ++j) sum[j] += g[j];
        }
      }
      if (profile) edges.backward_seconds += SecondsSince(start);
      if (profile) start = Clock::now();
      absl::Status s = absl::OkStatus();
      if (layer.any_dx) s = layer.kernel->BackwardData(layer.args);
      if (s.ok() && !layer.param_offsets.empty()) s = layer.kernel->BackwardWeights(layer.args);
      if (profile) profile_[layer.profile_index].backward_seconds += SecondsSince(start);
      if (!s.ok())
        return absl::Status(s.code(), absl::StrCat("backward of ", layer.name, ": ", s.message()));
      if (profile) start = Clock::now();
      for (auto& in : layer.inputs)
        if (in.needs_grad && in.reorder)
          RETURN_IF_ERROR(backend_->Reorder(in.to, BufferData(in.grad_tmp), in.from,
                                            BufferData(in.grad)));
      if (profile) edges.backward_seconds += SecondsSince(start);
    }
    if (options_.poison_freed) PoisonBuffersEndingAt(step);
  }

  // Fused update over every parameter at once.
  if (optimizer_ != nullptr) {
    Clock::time_point start = profile ? Clock::now() : Clock::time_point();
    RETURN_IF_ERROR(optimizer_->Update(static_cast<float*>(params_.data()),
                                       static_cast<const float*>(grads_.data()),
                                       static_cast<float*>(momentum_.data())));
    if (profile) update.backward_seconds += SecondsSince(start);
  }
  return loss;
}

size_t Trainer::peak_memory_bytes() const {
  return arena_.size() + params_.size() + grads_.size() + momentum_.size() + state_.size() +
         scratch_.size() + images_.size() + labels_.size() + loss_.size();
}

void Trainer::ResetProfile() {
  for (auto& t : profile_) t.forward_seconds = t.backward_seconds = 0;
}

absl::StatusOr<std::vector<float>> Trainer::ReadParameter(int node, int index) const {
  for (const auto& layer : layers_) {
    if (layer->node != node) continue;
    const auto& params = layer->kernel->signature().params;
    if (index < 0 || index >= static_cast<int>(params.size())) break;
    std::vector<float> out(params[index].shape.num_elements());
    RETURN_IF_ERROR(backend_->Reorder(
        params[index], static_cast<const char*>(params_.data()) + layer->param_offsets[index],
        TensorSpec::Plain(DType::kF32, params[index].shape), out.data()));
    return out;
  }
  return absl::NotFoundError(absl::StrCat("node ", node, " has no parameter ", index));
}

}  // namespace cnnbench
