// The cuda backend's convolution as three cuDNN graphs (conv_fprop,
// conv_dgrad, conv_wgrad) built with cudnn-frontend: building and validating
// them needs no device; choosing plans (heuristics, then a timed choice) and
// running them need a GPU. Builds without the cudnn-frontend headers link
// conv_graph_none.cc instead, where every call is "unsupported: ...".
#ifndef CNNBENCH_KERNELS_CUDA_CONV_GRAPH_H_
#define CNNBENCH_KERNELS_CUDA_CONV_GRAPH_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "kernels/cuda/conv_problem.h"

// cuDNN's handle type (cudnnHandle_t is cudnnContext*), declared here so the
// header stays free of CUDA's.
struct cudnnContext;

namespace cnnbench::cuda {

struct RuntimeCompiledBudget;  // engine_pick.h
class PlanChoices;             // plan_choices.h

// The identity plan choices are bound to (plan_choices.h): cuDNN's and
// cudnn-frontend's versions and device `ordinal`'s name and compute
// capability; "" where it cannot be read (no GPU, no cudnn-frontend).
std::string PlanChoiceIdentity(int ordinal);

// Whether this build has cudnn-frontend; else the reason, for messages.
bool ConvGraphsAvailable();
std::string ConvGraphsUnavailableReason();

// Device memory of one pass. Every graph names its tensors x, w and y (the
// descriptor's input, weights and output); one of them is the pass's
// output: y in fprop, x (dx) in dgrad, w (dw) in wgrad, the others being
// x and w, dy and w, x and dy.
struct ConvBuffers {
  void* x = nullptr;
  void* w = nullptr;
  void* y = nullptr;
};

// How plans are chosen.
struct ConvPlanChoice {
  // Candidates built per pass, in the heuristics' order (mode A, then the
  // fallback list); the first that builds is kept unless timing picks another.
  int candidates = 4;
  // Time the built candidates on scratch buffers and keep the fastest.
  bool timed = true;
  int timed_runs = 3;  // after one warm-up run; the best run counts
  // At most this many builds of run-time compiled (NVRTC) engines per pass,
  // success or failure (engine_pick.h).
  int runtime_compiled_attempts = 2;
  // The backend's budget of failed run-time compiled builds (null: none).
  RuntimeCompiledBudget* runtime_compiled_budget = nullptr;
  // Only engines cuDNN does not mark NONDETERMINISTIC (bitwise-repeatable
  // results, for tests that compare runs bit for bit).
  bool deterministic = false;
  // Only the forward pass is lowered, built and timed (an inference plan's
  // kernel, KernelOptions::forward_only); the backward passes are
  // "forward-only" in implementation() and refuse in Run.
  bool forward_only = false;
  // The plan-choice file (null: none). With `timed`, a pass whose choice it
  // holds builds that engine alone, untimed; a pass chosen here is
  // recorded in it. A recorded engine that no longer builds is dropped and
  // the search runs; the compile log's plan_cache= field says which
  // (hit, miss, stale: why).
  PlanChoices* plan_choices = nullptr;
};

class ConvGraphs {
 public:
  ~ConvGraphs();

  // Builds the three graphs for `problem` and validates them (no device
  // needed). Errors name the descriptor and cudnn-frontend's message.
  static absl::StatusOr<std::unique_ptr<ConvGraphs>> Validate(const ConvProblem& problem);

  // Lowers the graphs to cuDNN with `cudnn` (whose stream the timing runs
  // on), asks the heuristics for engines whose numerics fit the precision
  // (no tensor cores for fp32, no reduced-precision reductions or
  // down-converted inputs anywhere), builds candidates (engine_pick.h:
  // precompiled engines; run-time compiled ones, capped, only where none
  // builds; reduced-precision reductions only where nothing else builds,
  // said in the plan's name) and picks one per pass, each pass written to
  // the compile log (core/compile_log.h).
  // A forward pass with no engine is an "unsupported: ..." error here; a
  // backward pass with none is that error from Run (and "none" in
  // implementation()), so a layer whose dx nobody asks for still runs.
  // The compile deadline (core/compile_log.h) is checked before each pass
  // is built and timed, and its error is returned as it is.
  // Needs a GPU; allocates only temporary buffers for the timing (when they
  // do not fit, the heuristics' first choice is kept).
  absl::Status ChoosePlans(cudnnContext* cudnn, const ConvPlanChoice& choice);

  // Enqueues `pass` on `cudnn`'s stream with a workspace of at least
  // workspace_bytes(pass).
  absl::Status Run(ConvPass pass, cudnnContext* cudnn, const ConvBuffers& buffers,
                   void* workspace) const;

  const ConvProblem& problem() const;
  // After ChoosePlans: the chosen plan's workspace and engine name.
  int64_t workspace_bytes(ConvPass pass) const;
  std::string plan_name(ConvPass pass) const;
  // "cudnn:fprop=<engine>,dgrad=<engine>,wgrad=<engine>".
  std::string implementation() const;
  // After Validate: the pass's output tensor as the validated graph has it.
  ConvTensor output(ConvPass pass) const;

 private:
  struct Impl;
  explicit ConvGraphs(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_CONV_GRAPH_H_
