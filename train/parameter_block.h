// The trainable memory a step plan lays out: the fp32 masters, their
// gradients and momentum (one contiguous block each, at the plan's offsets,
// so the update is one fused call and a gradient bucket one range), and the
// low-precision working copies with their gradients (fp16/bf16 kernels read
// and write those; the step casts the gradients into the fp32 block and the
// update refreshes the copies).
#ifndef CNNBENCH_TRAIN_PARAMETER_BLOCK_H_
#define CNNBENCH_TRAIN_PARAMETER_BLOCK_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/device.h"
#include "kernels/kernel.h"
#include "train/step_plan.h"

namespace cnnbench {

class ParameterBlock {
 public:
  ParameterBlock() = default;
  // Allocates the blocks `plan` lays out (touching none of them), in the
  // order masters, gradients, momentum, working copies, their gradients.
  static absl::StatusOr<ParameterBlock> Allocate(const StepPlan& plan, Backend* backend);

  // Zero-fills every block, in allocation order: padding between
  // parameters stays zero under the fused update, and every page is touched
  // here rather than in the first timed step.
  absl::Status Clear();
  // Every parameter from its op's initialiser (train/init.h), keyed by the
  // given graph's node so a fused graph starts from the same weights; the
  // working copies refreshed from the masters. The layers a batch norm was
  // folded into are left zero: their weights are the fold's
  // (train/inference.h computes them).
  absl::Status Initialize(const StepPlan& plan, uint64_t seed);

  // Where a kernel reads parameter `p` and writes its gradient.
  void* weights(const StepPlan::Param& p) const;
  void* weight_gradient(const StepPlan::Param& p) const;
  // Enqueues the fp32 casts of `layer`'s low-precision weight gradients
  // into the gradient block (nothing in fp32).
  absl::Status CastGradients(const StepPlan& plan, const StepPlan::Layer& layer) const;
  // Enqueues the refresh of every working copy from its master; with
  // `except_bf16_copies`, of those Bf16Copies leaves out (the update wrote
  // the rest).
  absl::Status RefreshWorkingCopies(const StepPlan& plan, bool except_bf16_copies = false) const;
  // The working copies an optimizer that WritesBf16Copies() refreshes in
  // its update: the bf16 ones whose master converts elementwise
  // (Backend::CastsElementwise), in master order (offsets in elements of
  // the master block).
  std::vector<Bf16Copy> Bf16Copies(const StepPlan& plan) const;
  // Parameter `p`'s fp32 master in plain layout (waits for the stream).
  absl::StatusOr<std::vector<float>> Read(const StepPlan::Param& p) const;
  // Sets parameter `p` from plain fp32 `values` (its master and working copy).
  absl::Status Write(const StepPlan::Param& p, const std::vector<float>& values) const;

  float* masters() const { return static_cast<float*>(masters_.data()); }
  float* gradients() const { return static_cast<float*>(gradients_.data()); }
  float* momentum() const { return static_cast<float*>(momentum_.data()); }
  // Device memory the blocks hold.
  size_t bytes() const;

 private:
  Backend* backend_ = nullptr;
  // Per parameter of the plan: whether it is one of Bf16Copies (set once,
  // at Allocate).
  std::vector<bool> bf16_copy_;
  Buffer masters_, gradients_, momentum_, lowp_weights_, lowp_gradients_;
};

}  // namespace cnnbench

#endif  // CNNBENCH_TRAIN_PARAMETER_BLOCK_H_
