// What a step runs, planned once from a graph and a backend with no memory
// allocated: the graph after fusion, one layer per op with its kernel and
// the layouts on its edges, the transient buffers and their lifetimes in
// the schedule (and the arena plan that packs them), the persistent blocks'
// layout (parameters, state, scratch), and the footprint every allocation
// will add up to. A plain value: the Trainer allocates, binds and runs it;
// tests inspect it with any backend. A forward-only plan (inference: no
// gradients, every buffer's lifetime ends in the forward pass) is the same
// planning with the backward half left out.
#ifndef CNNBENCH_TRAIN_STEP_PLAN_H_
#define CNNBENCH_TRAIN_STEP_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "kernels/kernel.h"
#include "models/graph.h"
#include "train/memory_plan.h"

namespace cnnbench {

// Buffer ids that are not arena buffers.
inline constexpr int kNoBuffer = -1;
inline constexpr int kImagesBuffer = -2;
inline constexpr int kLabelsBuffer = -3;
inline constexpr int kLossBuffer = -4;

// The device-side scalars (train/device_scalars.h), each in its own aligned line.
inline constexpr size_t kScalarLines = 5;

inline size_t AlignUp(size_t bytes, size_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

// Time spent in one node's kernels (or in the executor's own work: "edges",
// "update"), summed over the steps since the last ResetProfile().
struct LayerTime {
  std::string name;            // node name
  std::string op;              // canonical descriptor string
  std::string implementation;  // what the backend runs (the forward pass)
  // What the backward passes run, where it differs from the forward's
  // ("data / weights" when they differ from each other too); "" when the
  // same.
  std::string backward_implementation;
  double forward_seconds = 0;
  double backward_seconds = 0;
};

// A range of the contiguous fp32 gradient block (the same offsets as the
// parameter block) whose gradients a step has just enqueued.
struct GradientRange {
  int node = -1;
  size_t offset = 0;  // bytes
  size_t bytes = 0;
};

struct StepPlanOptions {
  Precision precision = Precision::kFp32;
  uint64_t seed = 1;         // dropout masks (KernelOptions::seed)
  int64_t batch_offset = 0;  // KernelOptions::batch_offset
  bool fuse_relu = true;     // train/fusion.h, where the backend runs the fused op
  // Refuse (OOM) a plan above this many bytes before creating any kernel,
  // and again once the plan is known; 0: what the device can give now.
  size_t memory_limit_bytes = 0;
  // Inference: no gradient buffers, and every buffer's lifetime ends at its
  // last reader in the forward pass.
  bool forward_only = false;
  // Inference only (with forward_only): fold each batch norm into the
  // convolution before it (train/fusion.h FoldBatchNormForInference); the
  // executor computes the folded weights (StepPlan::folded_bn).
  bool fold_batch_norm = false;
  // A convolution whose only reader is a ReLU takes it as its epilogue
  // (ConvDesc::relu), with fuse_relu, where the backend runs it in this use
  // (KernelOptions::forward_only); false keeps those ReLUs as layers (the
  // baseline the epilogue is measured against).
  bool conv_relu = true;
  // Inference only (with forward_only): a residual add absorbed by the
  // convolution that computes one of its inputs (train/fusion.h
  // FuseResidualAdd), where the backend runs it; false keeps the adds as
  // layers (the baseline it is measured against).
  bool conv_add = true;
  // Inference only (with forward_only): a concatenation's inputs written in
  // place, each producer's output a view of the concat's output at its
  // channel offset (KernelSignature::input_views), where the producer's
  // only reader is the concat and no reorder lies between them; false
  // copies every input in (the baseline it is measured against).
  bool concat_in_place = true;
  // Training: the logits (the loss layer's input) stay until the step ends,
  // so the batch's accuracy can be read after it (Trainer::LastLogits).
  bool keep_logits = true;
};

struct StepPlan {
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
  struct Layer {
    int node = -1;
    std::string name;
    std::unique_ptr<Kernel> kernel;
    std::vector<Input> inputs;
    int y = kNoBuffer;
    // y is input k's buffer, written over it (KernelSignature::
    // output_over_input; forward only), or -1.
    int y_over_input = -1;
    int saved = kNoBuffer;
    std::vector<int> params;            // indices into StepPlan::params
    std::vector<size_t> state_offsets;  // bytes into the state block
    bool needs_grad = false;
    std::vector<int> grad_edges;  // this node's output gradient, one per consuming edge
    int dy = kNoBuffer;           // what the backward pass reads
    bool any_dx = false;          // some input needs a gradient
    int profile_index = -1;
    // Bound by the executor once its memory exists, per input slot, so a
    // step allocates nothing: the kernel's arguments, and the edges summed
    // into dy.
    KernelArgs args[2];
    std::vector<const void*> dy_parts[2];
  };
  // One trainable tensor. Its fp32 master lives in the parameter block at
  // `offset` (its gradient and momentum at the same offset of theirs),
  // stored as the kernel wants it when the kernel takes fp32, else plain; a
  // low-precision kernel reads a working copy and writes its gradient there
  // too (at `lowp_offset`), which the step casts to fp32.
  struct Param {
    int layer = -1;
    int index = 0;
    TensorSpec spec;    // the kernel's
    TensorSpec master;  // the fp32 master's
    bool low_precision = false;
    size_t offset = 0;
    size_t lowp_offset = 0;
  };

  StepPlanOptions options;
  DType activation_type = DType::kF32;
  size_t alignment = 64;     // the backend's, of every block and arena buffer
  Graph graph;               // what runs: the given graph after fusion
  Graph original_graph;      // as given
  std::vector<int> origin;   // node of graph -> node of the given graph
  std::vector<int> node_of;  // node of the given graph -> node of graph computing it
  int fused_relus = 0;
  // Of those, the ReLUs run as a convolution's epilogue (forward-only plans;
  // an add's ReLU too, where the convolution absorbed the add).
  int conv_relu_epilogues = 0;
  // Residual adds run in the convolution before them (forward-only plans),
  // and the outputs written over an input's buffer (those convolutions'
  // where nothing later reads the shortcut).
  int conv_residual_adds = 0;
  int outputs_in_place = 0;
  // Layer outputs that are views of a concatenation's output (forward-only
  // plans, StepPlanOptions::concat_in_place), and the concatenations all
  // of whose inputs are, which then copy nothing.
  int concat_inputs_in_place = 0;
  int concats_in_place = 0;
  // Dropout and drop-path layers left out of a forward-only plan (the
  // identity there; train/fusion.h SkipIdentitiesForInference).
  int identities_skipped = 0;
  // Per node of `graph`: the given graph's batch norm folded into it, or -1.
  std::vector<int> folded_bn;
  int folded_batch_norms = 0;
  std::vector<std::unique_ptr<Layer>> layers;  // forward order
  std::vector<int> layer_of;                   // node -> index in layers, or -1
  std::vector<Param> params;                   // every parameter, forward order
  std::vector<BufferRequest> requests;         // arena buffers
  MemoryPlan memory;
  std::vector<std::vector<int>> ending_at;  // arena buffers whose lifetime ends at each step
  TensorSpec images_spec;                   // on the device: the activation type
  TensorSpec loss_spec;
  size_t params_bytes = 0, lowp_bytes = 0, state_bytes = 0, scratch_bytes = 0;
  size_t staging_bytes = 0;  // per input slot: the fp32 batch a GPU casts from
  int64_t parameter_count = 0;
  // One entry per layer, then the executor's "edges" and "update".
  std::vector<LayerTime> profile;
  int edges_profile = -1, update_profile = -1;

  // The schedule: node i's forward pass is step i, its backward pass step
  // 2N-1-i (N nodes).
  int forward_step(int node) const { return node; }
  int backward_step(int node) const { return 2 * static_cast<int>(graph.nodes.size()) - 1 - node; }
  // Every byte the executor allocates for this plan: the arena, parameters,
  // gradients and momentum, working copies, state, scratch, the two input
  // slots and the scalars (forward only: no gradients, momentum or scalars).
  size_t FootprintBytes() const;
  // The gradient bytes of a layer with parameters (with the padding after them).
  GradientRange RangeOf(const Layer& layer) const;
};

// The layer computing node `node` of the given graph (not an absorbed
// ReLU's), or NotFound.
absl::StatusOr<const StepPlan::Layer*> LayerOfNode(const StepPlan& plan, int node);
// State tensor `index` of node `node`, plain fp32, from the plan's state
// block at `state` (device memory of `backend`; waits for its stream).
absl::StatusOr<std::vector<float>> ReadStateOf(const StepPlan& plan, Backend& backend,
                                               const void* state, int node, int index);

// Uploads every layer's state tensors' starting values (its op's traits:
// batch norm's running mean 0, variance 1) into the state block at `state`.
absl::Status InitializeState(const StepPlan& plan, Backend& backend, void* state);
// The logits (the loss layer's input as its producer wrote it) at `data`,
// plain fp32 (batch, classes), read after the backend's stream.
absl::StatusOr<std::vector<float>> ReadLogits(const StepPlan& plan, Backend& backend,
                                              const void* data);
// The buffer the logits live in: the loss layer's first input's source.
inline int LogitsBuffer(const StepPlan& plan) {
  return plan.layers[plan.layer_of[plan.graph.loss]]->inputs[0].source;
}

// Plans a step of `graph` on `backend`: checks the graph (node order, a
// loss, no dangling branch), fuses ReLUs, creates every kernel (errors name
// the layer and its descriptor), requests and packs the buffers, lays out
// the persistent blocks, and checks the footprint against the memory
// available (OOM before any allocation; an absurd batch is refused before
// any kernel is created).
absl::StatusOr<StepPlan> PlanStep(const Graph& graph, Backend* backend,
                                  const StepPlanOptions& options);

}  // namespace cnnbench

#endif  // CNNBENCH_TRAIN_STEP_PLAN_H_
