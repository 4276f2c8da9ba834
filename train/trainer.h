// The training-step executor: compiles a graph for a backend once (shape
// checks, kernels, one memory plan, parameter initialisation), then runs
// steps — forward, softmax cross-entropy, backward, fused SGD update — with no
// allocation and no kernel creation inside a step.
//
// The executor never touches tensor memory itself: fills, copies, gradient
// sums, casts and the loss read-back are backend operations enqueued on the
// backend's stream, so the same executor runs when every buffer is device
// memory. A step only enqueues; LastLoss() is the one call that waits.
#ifndef CNNBENCH_TRAIN_TRAINER_H_
#define CNNBENCH_TRAIN_TRAINER_H_

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
#include "train/device_scalars.h"
#include "train/input_slots.h"
#include "train/memory_plan.h"
#include "train/parameter_block.h"
#include "train/step_plan.h"
#include "train/trace.h"

namespace cnnbench {

struct TrainOptions {
  // Activations take the precision's storage type; parameters, gradients
  // and optimizer state stay fp32 masters, with a low-precision working copy
  // refreshed after each update where the kernels want one.
  Precision precision = Precision::kFp32;
  uint64_t seed = 1;  // parameter initialisation and dropout masks
  double learning_rate = 0.1;
  double momentum = 0.9;
  double weight_decay = 0.0;
  // Data parallelism: the global index of this replica's first example, so
  // N replicas at batch B draw the dropout masks one replica at N*B would.
  int64_t batch_offset = 0;
  // Fold each ReLU into the batch norm, residual add or convolution before
  // it (their only consumer) where the backend runs the fused op in training
  // (train/fusion.h). Off: the graph's layers as they are (the baseline
  // fusion is measured against).
  bool fuse_relu = true;
  // With fuse_relu: the convolutions too (ConvDesc::relu; on the CPU
  // backends). Off: those ReLUs stay layers (the baseline of that fusion).
  bool conv_relu = true;
  bool profile = false;       // time every kernel (core::Timer on the backend's stream)
  bool poison_freed = false;  // fill each transient buffer with NaN when its lifetime ends
  // On a GPU backend, Step() captures the whole step once per input slot as
  // a CUDA graph and replays it (off while profiling, which reads timers
  // inside the step); a slot's first step runs eagerly (lazy library set-up
  // stays out of the capture), its second is captured. Ignored on the CPU.
  // A capture that fails is not an error: that step and every later one run
  // eagerly, and cuda_graph_failure() says why.
  bool cuda_graph = true;
  // Tests only: try the capture on the CPU too, where it always fails, so
  // the fallback above runs without a GPU.
  bool capture_on_cpu_for_testing = false;
  // Compile refuses (OOM) a plan whose memory exceeds this many bytes before
  // allocating any of it; 0: what the device can give now (AvailableMemory).
  size_t memory_limit_bytes = 0;
  // fp16's dynamic loss scaling (kernels/loss_scale.h): the loss gradient is
  // multiplied by the scale, an update with non-finite gradients is skipped
  // and halves it, `loss_scale_growth_interval` clean ones double it. Other
  // precisions use no scale.
  float initial_loss_scale = kInitialLossScale;
  int32_t loss_scale_growth_interval = kGrowthInterval;
  // Keep the logits until the step ends, so LastLogits() can read them
  // (StepPlanOptions::keep_logits): a few kilobytes of the arena.
  bool keep_logits = true;
};

class Trainer {
 public:
  static absl::StatusOr<std::unique_ptr<Trainer>> Compile(const Graph& graph, Backend* backend,
                                                          const TrainOptions& options);
  ~Trainer();

  // Uploads one batch into the free input slot and makes it the batch the
  // next step reads: images (N,C,H,W) fp32 row-major, labels (N) int32, in
  // host memory (pinned for the fastest copy), which may be reused when this
  // returns. There are two slots, each with its kernel arguments bound at
  // compile time. On a GPU the copy runs on a side stream, after the step
  // that last read the slot and beside the step in flight, so the compute
  // stream never waits for it (a cast to the activation type, if any, runs
  // on the compute stream at the start of the next step).
  absl::Status SetBatch(const float* images, const int32_t* labels);

  // One training step on the current batch: ForwardBackward() then Update().
  // Before any SetBatch, FailedPrecondition (there is no batch).
  // Enqueues only; on a GPU the loss is copied into pinned host memory
  // behind the forward pass, within the step (see LastLoss()).
  absl::Status Step();
  // Forward, loss and backward of one step. The gradient hook (if any) is
  // called as each layer's weight gradients are enqueued.
  absl::Status ForwardBackward();
  // The fused update of every parameter (and the low-precision copies);
  // enqueued after `ready` completes when given (e.g. a gradient all-reduce
  // on another stream).
  absl::Status Update(const Event* ready = nullptr);
  // The loss of the most recent step (before its update): waits for that
  // step's forward and backward only (on a GPU its event, then a read of the
  // pinned copy), so a device fault in its update is reported by the next
  // call that waits for more (Synchronize, the next LastLoss).
  absl::StatusOr<float> LastLoss();
  // The loss scale the next step uses (1 unless fp16) and the clean updates
  // counted towards growing it: waits for the steps enqueued so far.
  absl::StatusOr<float> LossScale();
  absl::StatusOr<int32_t> CleanStepsSinceScaleChange();
  // Waits until everything enqueued so far is done. Both this and LastLoss
  // then report an error the device recorded meanwhile (Kernel::DeviceErrors:
  // a bad label in a replayed step).
  absl::Status Synchronize();

  // Called during ForwardBackward after a layer's fp32 weight gradients
  // have been enqueued, in backward order (the offsets fall from the end of
  // the gradient block to its start). Data-parallel training starts each
  // gradient bucket's all-reduce from here, overlapping the rest of backward.
  using GradientReadyHook = std::function<absl::Status(const GradientRange&)>;
  void SetGradientReadyHook(GradientReadyHook hook) { gradient_ready_ = std::move(hook); }
  // The ranges the hook reports in a step, in the order it reports them.
  std::vector<GradientRange> GradientRanges() const;

  // Every byte the executor holds: parameters, gradients, momentum, state,
  // inputs, scratch and the activation arena.
  size_t peak_memory_bytes() const;
  size_t arena_bytes() const { return step_.memory.arena_bytes; }
  const std::vector<BufferRequest>& buffer_requests() const { return step_.requests; }
  const MemoryPlan& memory_plan() const { return step_.memory; }
  // What Compile planned (train/step_plan.h): the layers, buffers and layout.
  const StepPlan& step_plan() const { return step_; }
  int64_t parameter_count() const { return step_.parameter_count; }
  Backend* backend() const { return backend_; }
  // The fp32 master parameters (device memory), `gradient_bytes()` long,
  // at the same offsets as the gradients. After writing them (e.g. rank 0's
  // weights broadcast to every replica) call ParametersChanged().
  void* parameters() const { return block_.masters(); }
  // Refreshes the low-precision working copies from the fp32 masters
  // (enqueued; nothing to do in fp32).
  absl::Status ParametersChanged() { return block_.RefreshWorkingCopies(step_); }
  // The state block (batch norm's running statistics; device memory),
  // `step_plan().state_bytes` long, at the plan's state offsets.
  void* state() const { return state_.data(); }
  // The fp32 gradient block (device memory), `gradient_bytes()` long.
  void* gradients() const { return block_.gradients(); }
  size_t gradient_bytes() const { return step_.params_bytes; }
  // Steps run so far (the host's count; the device keeps its own for dropout).
  int64_t steps() const { return steps_; }
  // Whether Step() replays a captured CUDA graph.
  bool cuda_graph_active() const;
  // Why a capture failed ("" if none did): the steps then run eagerly.
  const std::string& cuda_graph_failure() const { return cuda_graph_failure_; }

  const std::vector<LayerTime>& profile() const { return step_.profile; }
  void ResetProfile();

  // One more step, run eagerly (never a replayed graph) with every layer's
  // passes, the edges' work and the update timed on the backend's stream,
  // as trace slices (train/trace.h): each starts when the host enqueued it
  // (the previous one having finished) and lasts what the stream's timer
  // measured. On a GPU each slice is also an NVTX range named after its
  // layer, for Nsight Systems. Trains like any step; the profile sums are
  // left as they were. Needs a batch (SetBatch) like Step. `after`, where
  // given, runs once the step is done, still traced (a real-data case feeds
  // the next batch there, as its timed steps do, each part a HostSpan on
  // the "upload" lane).
  absl::StatusOr<std::vector<TraceSlice>> TraceStep(
      const std::function<absl::Status(StepTimer&)>& after = nullptr);
  // TraceStep's parts, for an executor that runs the step itself (a
  // Replica, whose all-reduce sits between backward and the update): from
  // BeginTrace on, every layer's passes, the edges and the update become
  // slices in `*sink` timed from `origin`; EndTrace stops and puts the
  // profile sums back as they were at BeginTrace.
  absl::Status BeginTrace(std::vector<TraceSlice>* sink,
                          std::chrono::steady_clock::time_point origin);
  void EndTrace();
  // The profile's and the trace's timer (HostSpan for the executor's caller).
  StepTimer& step_timer() { return timer_; }

  // The logits of the most recent step's batch as fp32, (batch, classes)
  // row-major (waits for that step). FailedPrecondition before any step, or
  // when compiled with TrainOptions::keep_logits false.
  absl::StatusOr<std::vector<float>> LastLogits();

  // Parameter `index` of node `node` (of the graph given to Compile) in
  // plain layout (fp32 master).
  absl::StatusOr<std::vector<float>> ReadParameter(int node, int index) const;
  // State tensor `index` (batch norm: 0 running mean, 1 running variance)
  // of node `node` of the graph given to Compile, plain fp32.
  absl::StatusOr<std::vector<float>> ReadState(int node, int index) const;
  // ReLUs fused into the layer before them (TrainOptions::fuse_relu).
  int fused_relus() const { return step_.fused_relus; }
  // The graph edges a step reorders (forward, and again backward when the
  // input needs a gradient): "producer -> consumer" of each, where the
  // consumer's kernel wants another layout than its producer's output has.
  std::vector<std::string> ReorderedEdges() const;

 private:
  using Layer = StepPlan::Layer;
  using Param = StepPlan::Param;

  Trainer() = default;

  absl::Status DeviceErrors() const;
  // Allocates the plan's memory, initialises it, and binds every kernel's
  // arguments once.
  absl::Status AllocateAndBind();
  absl::Status InitializeState();
  void* BufferData(int buffer, int slot) const;
  absl::Status PoisonBuffersEndingAt(int step);
  // The work of ForwardBackward/Update without the host-side bookkeeping, so
  // a capture records exactly what a step enqueues.
  absl::Status EnqueueForwardBackward(int slot);
  absl::Status EnqueueUpdate();
  // Captures slot `slot`'s step into graphs_[slot]; an error says which part failed.
  absl::Status CaptureStep(int slot);

  // Runs `work`, timed for the profile (and the trace) when on: profile
  // entry `index`'s forward or backward sum (StepTimer).
  enum class Pass { kForward, kBackward };
  template <typename Work>
  absl::Status Timed(int index, Pass pass, Work&& work) {
    const bool executor = index == step_.edges_profile || index == step_.update_profile;
    return timer_.Time(step_.profile[index], pass == Pass::kForward, executor,
                       index == step_.update_profile ? "update"
                       : pass == Pass::kForward      ? "forward"
                                                     : "backward",
                       std::forward<Work>(work));
  }

  bool dynamic_loss_scale() const { return options_.precision == Precision::kFp16; }

  Backend* backend_ = nullptr;
  TrainOptions options_;
  StepPlan step_;  // what runs (train/step_plan.h)
  std::unique_ptr<Optimizer> optimizer_;
  // The bf16 working copies the optimizer's update writes (ParameterBlock::
  // Bf16Copies; empty where it writes none and the copies are refreshed
  // after it).
  std::vector<Bf16Copy> bf16_copies_;
  // The plan's memory: the activation arena, the trainable blocks, state
  // and scratch, the two input slots, the device scalars.
  Buffer arena_;
  ParameterBlock block_;
  Buffer state_, scratch_;
  std::unique_ptr<InputSlots> inputs_;  // the two batches a step alternates between
  DeviceScalars scalars_;
  int last_step_slot_ = -1;              // the slot of the last step enqueued
  CapturedWork graphs_[2];               // per input slot, captured on its second use
  bool eager_done_[2] = {false, false};  // the slot's first step ran eagerly
  std::string cuda_graph_failure_;       // a capture failed: every step runs eagerly
  int64_t steps_ = 0;
  GradientReadyHook gradient_ready_;
  StepTimer timer_;                              // the profile's and the trace's
  std::vector<LayerTime> profile_before_trace_;  // BeginTrace's, put back by EndTrace
};

}  // namespace cnnbench

#endif  // CNNBENCH_TRAIN_TRAINER_H_
