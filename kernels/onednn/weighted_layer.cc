#include "kernels/onednn/weighted_layer.h"

#include <algorithm>
#include <vector>

#include "core/status.h"
#include "kernels/onednn/masked_sum.h"

namespace cnnbench {
namespace onednn {

void WeightedLayer::Bind(const dnnl::primitive_desc_base& forward_pd, dnnl::primitive forward,
                         const dnnl::primitive_desc_base& backward_data_pd,
                         dnnl::primitive backward_data,
                         const dnnl::primitive_desc_base& backward_weights_pd,
                         dnnl::primitive backward_weights) {
  const dnnl::engine& engine = context_->engine;
  std::vector<int> forward_args = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
  std::vector<int> backward_weights_args = {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS};
  if (bias_) {
    forward_args.push_back(DNNL_ARG_BIAS);
    backward_weights_args.push_back(DNNL_ARG_DIFF_BIAS);
  }
  forward_ = BoundPrimitive(forward_pd, std::move(forward), forward_args, engine);
  backward_data_ = BoundPrimitive(backward_data_pd, std::move(backward_data),
                                  {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC}, engine);
  backward_weights_ = BoundPrimitive(backward_weights_pd, std::move(backward_weights),
                                     backward_weights_args, engine);
  // Backward data may read the weights in another layout than the forward
  // stores them (see ChooseBackwardData): reorder them into scratch first.
  const dnnl::memory::desc& weights = forward_.desc(DNNL_ARG_WEIGHTS);
  const dnnl::memory::desc& data_weights = backward_data_.desc(DNNL_ARG_WEIGHTS);
  size_t reorder_scratchpad = 0;
  if (data_weights != weights) {
    weights_reorder_ = MakeReorder(*context_, weights, data_weights);
    reordered_weights_bytes_ = AlignUp(data_weights.get_size());
    reorder_scratchpad = weights_reorder_.scratchpad_bytes();
  }
  // Backward weights may write another layout (see ChooseBackwardWeights).
  const dnnl::memory::desc& diff_weights = backward_weights_.desc(DNNL_ARG_DIFF_WEIGHTS);
  size_t dweights_reorder_scratchpad = 0;
  if (diff_weights != weights) {
    dweights_reorder_ = MakeReorder(*context_, diff_weights, weights);
    dweights_bytes_ = AlignUp(diff_weights.get_size());
    dweights_reorder_scratchpad = dweights_reorder_.scratchpad_bytes();
  }
  // And may read x and dy in other layouts than the forward's.
  size_t copies_scratchpad = 0;
  const dnnl::memory::desc& x = forward_.desc(DNNL_ARG_SRC);
  const dnnl::memory::desc& weights_x = backward_weights_.desc(DNNL_ARG_SRC);
  if (weights_x != x) {
    x_reorder_ = MakeReorder(*context_, x, weights_x);
    x_copy_bytes_ = AlignUp(weights_x.get_size());
    copies_scratchpad = x_reorder_.scratchpad_bytes();
  }
  const dnnl::memory::desc& y = forward_.desc(DNNL_ARG_DST);
  const dnnl::memory::desc& weights_dy = backward_weights_.desc(DNNL_ARG_DIFF_DST);
  if (weights_dy != y) {
    dy_reorder_ = MakeReorder(*context_, y, weights_dy);
    dy_copy_bytes_ = AlignUp(weights_dy.get_size());
    copies_scratchpad = std::max(copies_scratchpad, dy_reorder_.scratchpad_bytes());
  }
  signature_.scratch_bytes = std::max(
      {forward_.scratchpad_bytes(),
       reordered_weights_bytes_ + std::max(reorder_scratchpad, backward_data_.scratchpad_bytes()),
       dweights_bytes_ + x_copy_bytes_ + dy_copy_bytes_ +
           std::max({backward_weights_.scratchpad_bytes(), dweights_reorder_scratchpad,
                     copies_scratchpad})});
  signature_.backward_reads_inputs = true;  // backward weights reads x
  signature_.backward_reads_output = false;
  implementation_ = forward_.implementation();
}

void WeightedLayer::BindForward(const dnnl::primitive_desc_base& forward_pd,
                                dnnl::primitive forward) {
  std::vector<int> forward_args = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
  if (bias_) forward_args.push_back(DNNL_ARG_BIAS);
  forward_ = BoundPrimitive(forward_pd, std::move(forward), forward_args, context_->engine);
  signature_.scratch_bytes = forward_.scratchpad_bytes();
  signature_.backward_reads_inputs = false;  // there is no backward
  signature_.backward_reads_output = false;
  implementation_ = forward_.implementation();
}

void WeightedLayer::MaskOutputGradient(ActivationKind kind) {
  const dnnl::engine& engine = context_->engine;
  const dnnl::memory::desc dst = forward_.desc(DNNL_ARG_DST);
  masked_ = true;
  mask_kind_ = kind;
  masked_bytes_ = AlignUp(dst.get_size());
  signature_.backward_reads_output = true;
  if (dst.data_type() == dnnl::memory::data_type::f32 ||
      dst.data_type() == dnnl::memory::data_type::bf16) {
    mask_loop_ = true;
    mask_dtype_ = dst.data_type() == dnnl::memory::data_type::f32 ? DType::kF32 : DType::kBF16;
    mask_count_ = static_cast<int64_t>(dst.get_size() / SizeOf(mask_dtype_));
    signature_.scratch_bytes += masked_bytes_;
    return;
  }
  const dnnl::primitive_attr attr = UserScratchpadAttr();
  const EltwiseActivation eltwise = OneDnnActivation(kind, /*use_dst=*/true);
  dnnl::eltwise_forward::primitive_desc hint(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, eltwise.algorithm, dst,
                                  eltwise.alpha, eltwise.beta),
      attr, engine);
  dnnl::eltwise_backward::primitive_desc pd(
      dnnl::eltwise_backward::desc(eltwise.algorithm, dst, dst, eltwise.alpha, eltwise.beta), attr,
      engine, hint);
  mask_ = BoundPrimitive(pd, dnnl::eltwise_backward(pd),
                         {DNNL_ARG_DST, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC}, engine);
  signature_.scratch_bytes =
      masked_bytes_ + std::max(signature_.scratch_bytes, mask_.scratchpad_bytes());
}

std::string WeightedLayer::pass_implementation(OpPass pass) const {
  switch (pass) {
    case OpPass::kForward:
      return forward_.implementation();
    case OpPass::kBackwardData:
      if (backward_data_.valid()) return backward_data_.implementation();
      break;
    case OpPass::kBackwardWeights:
      if (backward_weights_.valid()) return backward_weights_.implementation();
      break;
  }
  return implementation_;
}

absl::Status WeightedLayer::Forward(const KernelArgs& args) {
  ASSIGN_OR_RETURN(const void* x, Input(args, 0));
  ASSIGN_OR_RETURN(void* weights, Param(args.params, 0, "weights"));
  void* bias = nullptr;
  if (bias_) {
    ASSIGN_OR_RETURN(bias, Param(args.params, 1, "bias"));
  }
  RETURN_IF_ERROR(Require(args.y, "y"));
  RETURN_IF_ERROR(RequireScratch(args));
  return Guarded(what_, [&]() -> absl::Status {
    forward_.Set(DNNL_ARG_SRC, x);
    forward_.Set(DNNL_ARG_WEIGHTS, weights);
    if (bias_) forward_.Set(DNNL_ARG_BIAS, bias);
    forward_.Set(DNNL_ARG_DST, args.y);
    forward_.SetScratchpad(args.scratch);
    forward_.Execute(context_->stream);
    return absl::OkStatus();
  });
}

absl::Status WeightedLayer::Mask(const KernelArgs& args, char* scratch) {
  RETURN_IF_ERROR(Require(args.y, "y (the activation epilogue's backward reads it)"));
  if (mask_loop_) {
    const void* parts[1] = {args.dy};
    MaskedSum(mask_dtype_, mask_kind_, args.y, parts, 1, scratch, mask_count_);
    return absl::OkStatus();
  }
  return Guarded(what_, [&]() -> absl::Status {
    mask_.Set(DNNL_ARG_DST, args.y);
    mask_.Set(DNNL_ARG_DIFF_DST, args.dy);
    mask_.Set(DNNL_ARG_DIFF_SRC, scratch);
    mask_.SetScratchpad(scratch + masked_bytes_);
    mask_.Execute(context_->stream);
    return absl::OkStatus();
  });
}

absl::Status WeightedLayer::Backward(const KernelArgs& args) {
  if (!backward_weights_.valid()) return ForwardOnlyError(what_);
  RETURN_IF_ERROR(Require(args.dy, "dy"));
  RETURN_IF_ERROR(RequireScratch(args));
  char* scratch = static_cast<char*>(args.scratch);
  const void* dy = args.dy;
  if (masked_) {  // once for both passes
    RETURN_IF_ERROR(Mask(args, scratch));
    dy = scratch;
    scratch += masked_bytes_;
  }
  if (!args.dx.empty() && args.dx[0] != nullptr)
    RETURN_IF_ERROR(RunBackwardData(args, dy, scratch));
  return RunBackwardWeights(args, dy, scratch);
}

absl::Status WeightedLayer::BackwardData(const KernelArgs& args) {
  if (!backward_data_.valid()) return ForwardOnlyError(what_);
  if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
  RETURN_IF_ERROR(Require(args.dy, "dy"));
  RETURN_IF_ERROR(RequireScratch(args));
  char* scratch = static_cast<char*>(args.scratch);
  if (!masked_) return RunBackwardData(args, args.dy, scratch);
  RETURN_IF_ERROR(Mask(args, scratch));
  return RunBackwardData(args, scratch, scratch + masked_bytes_);
}

absl::Status WeightedLayer::BackwardWeights(const KernelArgs& args) {
  if (!backward_weights_.valid()) return ForwardOnlyError(what_);
  RETURN_IF_ERROR(Require(args.dy, "dy"));
  RETURN_IF_ERROR(RequireScratch(args));
  char* scratch = static_cast<char*>(args.scratch);
  if (!masked_) return RunBackwardWeights(args, args.dy, scratch);
  RETURN_IF_ERROR(Mask(args, scratch));
  return RunBackwardWeights(args, scratch, scratch + masked_bytes_);
}

absl::Status WeightedLayer::RunBackwardData(const KernelArgs& args, const void* dy, char* scratch) {
  ASSIGN_OR_RETURN(void* weights, Param(args.params, 0, "weights"));
  return Guarded(what_, [&]() -> absl::Status {
    const void* data_weights = weights;
    if (weights_reorder_.valid()) {
      weights_reorder_.Set(DNNL_ARG_FROM, weights);
      weights_reorder_.Set(DNNL_ARG_TO, scratch);
      weights_reorder_.SetScratchpad(scratch + reordered_weights_bytes_);
      weights_reorder_.Execute(context_->stream);
      data_weights = scratch;
    }
    backward_data_.Set(DNNL_ARG_DIFF_DST, dy);
    backward_data_.Set(DNNL_ARG_WEIGHTS, data_weights);
    backward_data_.Set(DNNL_ARG_DIFF_SRC, args.dx[0]);
    backward_data_.SetScratchpad(scratch + reordered_weights_bytes_);
    backward_data_.Execute(context_->stream);
    return absl::OkStatus();
  });
}

absl::Status WeightedLayer::RunBackwardWeights(const KernelArgs& args, const void* dy,
                                               char* scratch) {
  ASSIGN_OR_RETURN(const void* x, Input(args, 0));
  ASSIGN_OR_RETURN(void* dweights, Param(args.dparams, 0, "dweights"));
  void* dbias = nullptr;
  if (bias_) {
    ASSIGN_OR_RETURN(dbias, Param(args.dparams, 1, "dbias"));
  }
  return Guarded(what_, [&]() -> absl::Status {
    // Scratch: [diff weights][x's copy][dy's copy][the primitives' scratchpad].
    char* x_copy = scratch + dweights_bytes_;
    char* dy_copy = x_copy + x_copy_bytes_;
    char* scratchpad = dy_copy + dy_copy_bytes_;
    if (x_reorder_.valid()) {
      x_reorder_.Set(DNNL_ARG_FROM, x);
      x_reorder_.Set(DNNL_ARG_TO, x_copy);
      x_reorder_.SetScratchpad(scratchpad);
      x_reorder_.Execute(context_->stream);
      x = x_copy;
    }
    if (dy_reorder_.valid()) {
      dy_reorder_.Set(DNNL_ARG_FROM, dy);
      dy_reorder_.Set(DNNL_ARG_TO, dy_copy);
      dy_reorder_.SetScratchpad(scratchpad);
      dy_reorder_.Execute(context_->stream);
      dy = dy_copy;
    }
    backward_weights_.Set(DNNL_ARG_SRC, x);
    backward_weights_.Set(DNNL_ARG_DIFF_DST, dy);
    backward_weights_.Set(DNNL_ARG_DIFF_WEIGHTS,
                          dweights_reorder_.valid() ? static_cast<void*>(scratch) : dweights);
    if (bias_) backward_weights_.Set(DNNL_ARG_DIFF_BIAS, dbias);
    backward_weights_.SetScratchpad(scratchpad);
    backward_weights_.Execute(context_->stream);
    if (dweights_reorder_.valid()) {
      dweights_reorder_.Set(DNNL_ARG_FROM, scratch);
      dweights_reorder_.Set(DNNL_ARG_TO, dweights);
      dweights_reorder_.SetScratchpad(scratchpad);
      dweights_reorder_.Execute(context_->stream);
    }
    return absl::OkStatus();
  });
}

}  // namespace onednn
}  // namespace cnnbench
