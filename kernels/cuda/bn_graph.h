// The cuda backend's training batch norm as two cuDNN graphs built with
// cudnn-frontend, with the fused ReLU inside them. The ReLU takes one of two
// forms, tried in this order (the chosen one is in implementation() and the
// compile log):
//   mask:     the form cudnn-frontend's samples build ("DBN + add + ReLU"):
//             forward is norm forward, RELU_FWD, and a boolean mask
//             CMP_GT(y, 0) as an output kept for backward; backward is
//             MUL(dy, mask), then norm backward;
//   relu_bwd: forward is norm forward then RELU_FWD; backward is
//             RELU_BWD(dy, y), then norm backward (no mask buffer).
// cuDNN's norm engines run NHWC activations,
// so the kernel uses these graphs for NHWC and keeps cuDNN's legacy calls
// otherwise, or where no engine builds (batch_norm.cc). Validating needs no
// device; choosing plans and running need a GPU. Builds without the headers
// link bn_graph_none.cc, where Validate is "unsupported: ...".
#ifndef CNNBENCH_KERNELS_CUDA_BN_GRAPH_H_
#define CNNBENCH_KERNELS_CUDA_BN_GRAPH_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/dtype.h"

struct cudnnContext;

namespace cnnbench::cuda {

struct RuntimeCompiledBudget;  // engine_pick.h
class PlanChoices;             // plan_choices.h

enum class BnReluForm { kNone, kMask, kReluBwd };
// "none", "mask", "relu_bwd".
inline const char* BnReluFormName(BnReluForm form) {
  return form == BnReluForm::kMask ? "mask" : form == BnReluForm::kReluBwd ? "relu_bwd" : "none";
}

struct BnProblem {
  int64_t n = 0, c = 0, h = 0, w = 0;
  bool nhwc = true;              // the activations' storage order
  DType io_type = DType::kBF16;  // x, y, dy, dx; the per-channel vectors are fp32
  bool relu = false;
  double epsilon = 1e-3;
  double momentum = 0.9;       // running = momentum * running + (1 - momentum) * batch
  bool deterministic = false;  // only engines not marked NONDETERMINISTIC
  // At most this many builds of run-time compiled engines per graph
  // (engine_pick.h).
  int runtime_compiled_attempts = 2;
  // The backend's budget of failed run-time compiled builds (null: none).
  RuntimeCompiledBudget* runtime_compiled_budget = nullptr;
  // The plan-choice file (plan_choices.h; null: none): a recorded form and
  // its two engines are tried first, alone; what ChoosePlans settles on is
  // recorded. Keyed by `what`, the data type and determinism.
  PlanChoices* plan_choices = nullptr;
  std::string what;  // the descriptor, for messages
};

// Device memory of the forward graph: x, gamma, beta in; y, the batch mean
// and 1/sqrt(var + epsilon) out (the per-channel vectors fp32).
struct BnForwardBuffers {
  const void* x = nullptr;
  const void* scale = nullptr;
  const void* bias = nullptr;
  void* y = nullptr;
  void* mean = nullptr;
  void* inv_variance = nullptr;
  // When forward_takes_running_stats(): the running statistics (read) and
  // somewhere for cuDNN's updated ones (C fp32 each, not used after).
  const void* running_mean = nullptr;
  const void* running_var = nullptr;
  void* next_mean = nullptr;
  void* next_var = nullptr;
  // With the mask form: relu_mask_bytes() written here, read by Backward.
  void* relu_mask = nullptr;
};

// Of the backward graph: dy, x, gamma, the saved mean and inverse std, and
// with relu the forward's output y (its mask) in; dx, dgamma, dbeta out.
struct BnBackwardBuffers {
  const void* dy = nullptr;
  const void* x = nullptr;
  const void* y = nullptr;
  const void* scale = nullptr;
  const void* mean = nullptr;
  const void* inv_variance = nullptr;
  const void* relu_mask = nullptr;  // the mask form: what Forward wrote
  void* dx = nullptr;
  void* dscale = nullptr;
  void* dbias = nullptr;
};

class BnGraphs {
 public:
  ~BnGraphs();

  // Builds both graphs of every ReLU form and validates them (no device
  // needed); an error when no form validates.
  static absl::StatusOr<std::unique_ptr<BnGraphs>> Validate(const BnProblem& problem);

  // Lowers the graphs with `cudnn` and keeps, per graph, the first engine
  // configuration that builds (engine_pick.h: heuristics mode A, or the
  // fallback list; precompiled engines, then at most
  // runtime_compiled_attempts run-time compiled builds); where no forward
  // engine builds, the forward graph is rebuilt with the running statistics
  // in it and tried again. Forms are tried in order until both graphs of
  // one build. "unsupported: ..." naming each form's reason when none does.
  // Each pass goes to the compile log. Needs a GPU.
  absl::Status ChoosePlans(cudnnContext* cudnn);
  // After ChoosePlans: the ReLU form that runs, and the bytes of its mask
  // (0 unless kMask; one byte per element, enough for a bit or a byte).
  BnReluForm relu_form() const;
  int64_t relu_mask_bytes() const;
  // Whether Forward needs BnForwardBuffers' running statistics.
  bool forward_takes_running_stats() const;

  // Enqueue on `cudnn`'s stream, with at least workspace_bytes() of workspace.
  absl::Status Forward(cudnnContext* cudnn, const BnForwardBuffers& buffers, void* workspace) const;
  absl::Status Backward(cudnnContext* cudnn, const BnBackwardBuffers& buffers,
                        void* workspace) const;

  // After ChoosePlans: the larger of the two plans' workspaces, and
  // "cudnn:bn_graph:fwd=<engine>,bwd=<engine>" (",relu=<form>" with a ReLU).
  int64_t workspace_bytes() const;
  std::string implementation() const;

 private:
  struct Impl;
  explicit BnGraphs(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_BN_GRAPH_H_
