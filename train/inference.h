// The inference executor: a graph compiled once for forward passes only
// (train/step_plan.h's forward-only plan) — batch norm normalises with its
// running statistics, dropout passes its input through, no gradient is kept
// and every activation's memory is reused as soon as its last reader has
// run, so the footprint is what a deployment needs. A run enqueues the
// forward pass of the current batch up to the logits; the loss layer the
// graph ends with is not run (a deployment has no labels).
//
// Weights start from the same initialisers as training (same seed, same
// weights), or are copied from a Trainer compiled from the same graph on the
// same backend (CopyWeightsFrom): train, then evaluate.
#ifndef CNNBENCH_TRAIN_INFERENCE_H_
#define CNNBENCH_TRAIN_INFERENCE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/device.h"
#include "core/dtype.h"
#include "kernels/kernel.h"
#include "models/graph.h"
#include "train/input_slots.h"
#include "train/parameter_block.h"
#include "train/step_plan.h"
#include "train/trace.h"

namespace cnnbench {

class Trainer;

struct InferOptions {
  Precision precision = Precision::kFp32;
  uint64_t seed = 1;  // parameter initialisation (TrainOptions::seed's weights)
  // Fold each ReLU into the batch norm or residual add before it where the
  // backend runs the fused op (train/fusion.h), as training does.
  bool fuse_relu = true;
  // Fold each batch norm after a convolution into the convolution's weights
  // and bias (train/fusion.h FoldBatchNormForInference): the folded weights
  // are computed from the unfolded ones and the running statistics, at
  // Compile (the initial weights) and by CopyWeightsFrom.
  bool fold_batch_norm = false;
  // Each convolution read only by a ReLU runs it as its epilogue
  // (ConvDesc::relu: oneDNN's post-op, the cuda backend's epilogue kernel),
  // with fuse_relu; after a fold this is the folded conv -> ReLU pair.
  bool conv_relu = true;
  // Each residual add whose later input is a convolution read by nothing
  // else runs in that convolution (ConvDesc::residual, train/fusion.h
  // FuseResidualAdd: oneDNN's sum post-op, y written over the shortcut's
  // buffer where nothing later reads it), where the backend runs it.
  bool conv_add = true;
  // A concatenation's inputs written in place: each producer read only by
  // the concat writes a view of its output at its channel offset
  // (StepPlanOptions::concat_in_place; KernelSignature::input_views, which
  // oneDNN and the reference give at batch 1), so the concat copies nothing.
  bool concat_in_place = true;
  // On a GPU backend, Run() captures the forward pass once per input slot
  // as a CUDA graph and replays it (a slot's first run is eager, its second
  // captured); a capture that fails leaves every later run eager and
  // cuda_graph_failure() says why. Ignored on the CPU.
  bool cuda_graph = true;
  // Tests only: try the capture on the CPU too, where it always fails.
  bool capture_on_cpu_for_testing = false;
  // Every layer of every Run() timed on the stream (its time summed into
  // profile(); the input reorders as "edges"), run eagerly (no CUDA graph):
  // //tools:step_breakdown --profile --infer.
  bool profile = false;
  // Compile refuses (OOM) a plan above this many bytes; 0: what the device
  // can give now.
  size_t memory_limit_bytes = 0;
};

class Inferencer {
 public:
  static absl::StatusOr<std::unique_ptr<Inferencer>> Compile(const Graph& graph, Backend* backend,
                                                             const InferOptions& options);
  ~Inferencer();

  // Uploads a batch (N,C,H,W fp32, plain, host memory: pinned for the
  // fastest copy) into the free input slot and makes it the one the next
  // Run() reads; the host memory may be reused on return. On a GPU the copy
  // runs on a side stream and the next Run() waits for it on the device.
  absl::Status SetBatch(const float* images);
  // Enqueues the forward pass of the current batch. Before any SetBatch:
  // FailedPrecondition.
  absl::Status Run();
  // The logits of the last Run() as fp32, (batch, classes) row-major:
  // waits for it.
  absl::StatusOr<std::vector<float>> Logits();
  // Waits for everything enqueued; reports an error the device recorded.
  absl::Status Synchronize();
  // One more forward pass of the current batch, run eagerly with every
  // layer (and the input reorders, as "(edges)") timed on the stream, as
  // trace slices (train/trace.h StepTimer). Logits() then reads its output.
  absl::StatusOr<std::vector<TraceSlice>> TraceRun();

  // Copies the fp32 master weights and the state (batch norm's running
  // statistics) from `trainer`, which must have been compiled from the same
  // graph on the same backend with the same precision and fusion (the
  // layouts are compared; a mismatch is an error naming the first one).
  // With folded batch norms, layer by layer through plain fp32, the folded
  // layers' weights computed from the trainer's.
  absl::Status CopyWeightsFrom(const Trainer& trainer);
  // Parameter `index` / state tensor `index` of node `node` of the graph
  // given to Compile, plain fp32 (waits for the stream).
  absl::StatusOr<std::vector<float>> ReadParameter(int node, int index) const;
  absl::StatusOr<std::vector<float>> ReadState(int node, int index) const;

  // Every byte the executor holds: the arena, the weights, the state,
  // scratch, the input slots and the scalars.
  size_t peak_memory_bytes() const;
  const StepPlan& step_plan() const { return step_; }
  int64_t parameter_count() const { return step_.parameter_count; }
  int64_t batch() const { return step_.graph.batch; }
  int64_t classes() const { return step_.graph.classes; }
  Backend* backend() const { return backend_; }
  int64_t runs() const { return runs_; }
  // Batch norms folded into convolutions (InferOptions::fold_batch_norm).
  int folded_batch_norms() const { return step_.folded_batch_norms; }
  // ReLUs fused into the layer before them (batch norm, add, convolution),
  // and of those, the convolutions' epilogues (InferOptions::conv_relu).
  int fused_relus() const { return step_.fused_relus; }
  int conv_relu_epilogues() const { return step_.conv_relu_epilogues; }
  // Residual adds run in the convolution before them (InferOptions::conv_add).
  int conv_residual_adds() const { return step_.conv_residual_adds; }
  // Concatenations whose inputs are all written in place, so they copy
  // nothing (InferOptions::concat_in_place).
  int concats_in_place() const { return step_.concats_in_place; }
  int identities_skipped() const { return step_.identities_skipped; }
  // With InferOptions::profile: each layer's forward seconds summed over the
  // Run() calls since Compile or ResetProfile (and TraceRun's), one entry
  // per layer, then "edges" (the input reorders) and "update" (unused).
  const std::vector<LayerTime>& profile() const { return step_.profile; }
  void ResetProfile();
  bool cuda_graph_active() const;
  const std::string& cuda_graph_failure() const { return cuda_graph_failure_; }

 private:
  Inferencer() = default;
  absl::Status AllocateAndBind();
  void* BufferData(int buffer, int slot) const;
  absl::Status EnqueueForward(int slot);
  absl::Status CaptureForward(int slot);
  absl::Status DeviceErrors() const;
  // Where a load reads the given graph's parameters and state, plain fp32.
  struct WeightSource {
    std::function<absl::StatusOr<std::vector<float>>(int node, int index)> param, state;
  };
  // The training initialisers' values (the seed's), as ParameterBlock's.
  WeightSource InitialWeights() const;
  // Every layer's parameters and state from `source`, the folded layers'
  // computed from their convolution's and batch norm's.
  absl::Status Load(const WeightSource& source);

  Backend* backend_ = nullptr;
  InferOptions options_;
  StepPlan step_;
  Buffer arena_;
  ParameterBlock block_;
  Buffer state_, scratch_;
  std::unique_ptr<InputSlots> inputs_;
  std::vector<int32_t> no_labels_;  // the slots' labels: a forward pass reads none
  int logits_layer_ = -1;           // the loss layer's index: its input is the logits
  int last_slot_ = -1;
  CapturedWork graphs_[2];
  bool eager_done_[2] = {false, false};
  std::string cuda_graph_failure_;
  int64_t runs_ = 0;
  StepTimer timer_;  // TraceRun's, and every Run()'s with InferOptions::profile
};

// Of `logits` (batch rows of `classes`), how many rows have their label
// among the `k` highest: as TensorFlow's in_top_k, a label is in the top k
// when fewer than k classes score strictly higher (ties at the boundary
// count as in), and a row whose label's score is not finite never is.
// Labels outside [0, classes) are an error naming the row.
absl::StatusOr<int64_t> CountInTopK(const std::vector<float>& logits,
                                    const std::vector<int32_t>& labels, int64_t classes, int k);

}  // namespace cnnbench

#endif  // CNNBENCH_TRAIN_INFERENCE_H_
