// Batch normalization with oneDNN's primitive (separate scale and shift, as
// 2.6 offers), in the producer's layout. Training normalises with the batch
// statistics (kept in `saved` for backward) and then updates the running
// ones as TensorFlow does; inference normalises with the running ones.
// A fused ReLU is oneDNN's fuse_norm_relu; a fused ReLU6 (which oneDNN's
// batch norm does not fuse) clips y in place after the normalisation, and
// its backward masks dy by 0 < y < 6 into scratch before oneDNN's backward
// (masked_sum.h: ActivationForward and ActivationPasses exactly). Any other
// kind is bn_activation.cc's kernel.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/onednn/masked_sum.h"
#include "kernels/onednn/ops.h"

namespace cnnbench {
namespace onednn {
namespace {

using dnnl::memory;
using dnnl::normalization_flags;

class BatchNormKernel : public OneDnnKernel {
 public:
  BatchNormKernel(std::shared_ptr<Context> context, const BatchNormDesc& desc)
      : OneDnnKernel(std::move(context), desc.ToString()),
        desc_(desc),
        relu6_(desc.activation == ActivationKind::kRelu6) {}

  absl::Status Init(const BatchNormDesc&, const KernelOptions& options, const Inputs& inputs) {
    const DType dtype = options.dtype;
    const BatchNormDesc& d = desc_;
    RETURN_IF_ERROR(CheckInputCount(inputs, 1, what_));
    ASSIGN_OR_RETURN(const TensorSpec* given, GivenInput(inputs, 0, dtype, d.dims.shape(), what_));
    ASSIGN_OR_RETURN(memory::data_type type, ToDnnlType(dtype));
    const dnnl::engine& engine = context_->engine;
    const memory::dims dims = ToDims(d.dims.shape());
    memory::desc data_md = PlainDesc(dims, type);
    if (given != nullptr) {
      ASSIGN_OR_RETURN(data_md, DescFromSpec(*given, dims, "input 0", what_));
    }
    const float epsilon = static_cast<float>(d.epsilon);
    // Without gamma (`_noscale`) only beta is a parameter.
    normalization_flags params =
        d.scale ? normalization_flags::use_scale | normalization_flags::use_shift
                : normalization_flags::use_shift;
    // A fused ReLU: the training forward keeps its mask in a workspace
    // (saved), which the backward pass applies to dy.
    if (d.activation == ActivationKind::kRelu)
      params = params | normalization_flags::fuse_norm_relu;
    const dnnl::primitive_attr attr = UserScratchpadAttr();

    dnnl::batch_normalization_forward::desc fwd_desc(dnnl::prop_kind::forward_training, data_md,
                                                     epsilon, params);
    dnnl::batch_normalization_forward::primitive_desc fwd_pd(fwd_desc, attr, engine);
    std::vector<int> fwd_args = {DNNL_ARG_SRC, DNNL_ARG_DST, DNNL_ARG_MEAN, DNNL_ARG_VARIANCE,
                                 DNNL_ARG_SHIFT};
    if (d.scale) fwd_args.push_back(DNNL_ARG_SCALE);
    const std::vector<int> inf_args = fwd_args;
    workspace_bytes_ = fwd_pd.workspace_desc().get_size();
    if (workspace_bytes_ > 0) fwd_args.push_back(DNNL_ARG_WORKSPACE);
    forward_ = BoundPrimitive(fwd_pd, dnnl::batch_normalization_forward(fwd_pd), fwd_args, engine);

    dnnl::batch_normalization_forward::desc inf_desc(
        dnnl::prop_kind::forward_inference, data_md, epsilon,
        params | normalization_flags::use_global_stats);
    dnnl::batch_normalization_forward::primitive_desc inf_pd(inf_desc, attr, engine);
    inference_ =
        BoundPrimitive(inf_pd, dnnl::batch_normalization_forward(inf_pd), inf_args, engine);

    // prop_kind::backward gives dx and dgamma/dbeta in one pass.
    dnnl::batch_normalization_backward::desc bwd_desc(dnnl::prop_kind::backward, data_md, data_md,
                                                      epsilon, params);
    dnnl::batch_normalization_backward::primitive_desc bwd_pd(bwd_desc, attr, engine, fwd_pd);
    // oneDNN lists beta among the backward pass's inputs, though dx does not
    // depend on it.
    std::vector<int> bwd_args = {DNNL_ARG_SRC,       DNNL_ARG_MEAN,     DNNL_ARG_VARIANCE,
                                 DNNL_ARG_DIFF_DST,  DNNL_ARG_DIFF_SRC, DNNL_ARG_SHIFT,
                                 DNNL_ARG_DIFF_SHIFT};
    if (d.scale) {
      bwd_args.push_back(DNNL_ARG_SCALE);
      bwd_args.push_back(DNNL_ARG_DIFF_SCALE);
    }
    if (workspace_bytes_ > 0) bwd_args.push_back(DNNL_ARG_WORKSPACE);
    backward_ =
        BoundPrimitive(bwd_pd, dnnl::batch_normalization_backward(bwd_pd), bwd_args, engine);

    dtype_ = dtype;
    count_ = static_cast<int64_t>(data_md.get_size() / SizeOf(dtype));
    const Shape channels{d.dims.c};
    const TensorSpec input = given != nullptr ? *given : TensorSpec::Plain(dtype, d.dims.shape());
    signature_.inputs = {input};
    signature_.output = input;  // y keeps x's layout (the very spec: no reorder between them)
    for (int i = d.scale ? 0 : 1; i < 2; ++i)
      signature_.params.push_back(TensorSpec::Plain(DType::kF32, channels));
    signature_.state = {TensorSpec::Plain(DType::kF32, channels),
                        TensorSpec::Plain(DType::kF32, channels)};
    // saved: batch mean, biased batch variance (as oneDNN keeps them), then
    // dgamma and dbeta from BackwardData's pass for BackwardWeights to copy,
    // then the fused ReLU's workspace.
    stats_bytes_ = AlignUp(sizeof(float) * d.dims.c);
    signature_.saved_bytes = 4 * stats_bytes_ + workspace_bytes_;
    // scratch: with ReLU6, dy masked by 0 < y < 6; a dx nobody asked for
    // (BackwardWeights on its own); then the primitives' scratchpad.
    masked_bytes_ = relu6_ ? AlignUp(data_md.get_size()) : 0;
    scratchpad_offset_ = masked_bytes_ + AlignUp(data_md.get_size());
    signature_.scratch_bytes =
        scratchpad_offset_ + std::max({forward_.scratchpad_bytes(), inference_.scratchpad_bytes(),
                                       backward_.scratchpad_bytes()});
    signature_.backward_reads_inputs = true;
    signature_.backward_reads_output = relu6_;  // ReLU6's mask is read from y
    implementation_ = forward_.implementation();
    backward_implementation_ = backward_.implementation();
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    const BatchNormDesc& d = desc_;
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    ASSIGN_OR_RETURN(Params p, ParamsOf(args.params, false));
    ASSIGN_OR_RETURN(void* running_mean_ptr, Param(args.state, 0, "running_mean"));
    ASSIGN_OR_RETURN(void* running_var_ptr, Param(args.state, 1, "running_var"));
    RETURN_IF_ERROR(RequireScratch(args));
    float* running_mean = static_cast<float*>(running_mean_ptr);
    float* running_var = static_cast<float*>(running_var_ptr);
    ++forward_count_;
    char* scratchpad = static_cast<char*>(args.scratch) + scratchpad_offset_;
    if (!args.training) {
      return Guarded(what_, [&]() -> absl::Status {
        Bind(inference_, p);
        inference_.Set(DNNL_ARG_SRC, x);
        inference_.Set(DNNL_ARG_DST, args.y);
        inference_.Set(DNNL_ARG_MEAN, running_mean);
        inference_.Set(DNNL_ARG_VARIANCE, running_var);
        inference_.SetScratchpad(scratchpad);
        inference_.Execute(context_->stream);
        if (relu6_) ClipRelu6InPlace(dtype_, args.y, count_);
        return absl::OkStatus();
      });
    }
    RETURN_IF_ERROR(RequireSaved(args));
    float* mean = Saved(args, 0);
    float* variance = Saved(args, 1);
    RETURN_IF_ERROR(Guarded(what_, [&]() -> absl::Status {
      Bind(forward_, p);
      forward_.Set(DNNL_ARG_SRC, x);
      forward_.Set(DNNL_ARG_DST, args.y);
      forward_.Set(DNNL_ARG_MEAN, mean);
      forward_.Set(DNNL_ARG_VARIANCE, variance);
      if (workspace_bytes_ > 0) forward_.Set(DNNL_ARG_WORKSPACE, Workspace(args));
      forward_.SetScratchpad(scratchpad);
      forward_.Execute(context_->stream);
      if (relu6_) ClipRelu6InPlace(dtype_, args.y, count_);
      return absl::OkStatus();
    }));
    // TensorFlow's update, with the unbiased variance (x m/(m-1)).
    const double m = static_cast<double>(d.dims.n) * d.dims.h * d.dims.w;
    const double unbias = m > 1 ? m / (m - 1) : 1.0;
    for (int64_t c = 0; c < d.dims.c; ++c) {
      running_mean[c] =
          static_cast<float>(d.momentum * running_mean[c] + (1.0 - d.momentum) * mean[c]);
      running_var[c] = static_cast<float>(d.momentum * running_var[c] +
                                          (1.0 - d.momentum) * (variance[c] * unbias));
    }
    return absl::OkStatus();
  }

  // oneDNN computes dx and dgamma/dbeta in one pass: BackwardData keeps the
  // latter in saved, and a BackwardWeights after it (same forward, x and dy)
  // copies them instead of running the pass again.
  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    RETURN_IF_ERROR(RequireSaved(args));
    RETURN_IF_ERROR(RunBackward(args, args.dx[0], Params{Saved(args, 2), Saved(args, 3)}));
    done_ = {forward_count_, args.x[0], args.dy, args.saved};
    return absl::OkStatus();
  }

  absl::Status BackwardWeights(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(Params diff, ParamsOf(args.dparams, true));
    const BackwardRecord now = {forward_count_, args.x.empty() ? nullptr : args.x[0], args.dy,
                                args.saved};
    if (done_ == now) {
      const size_t bytes = sizeof(float) * desc_.dims.c;
      if (desc_.scale) std::memcpy(diff.gamma, Saved(args, 2), bytes);
      std::memcpy(diff.beta, Saved(args, 3), bytes);
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(RequireScratch(args));
    return RunBackward(args, static_cast<char*>(args.scratch) + masked_bytes_, diff);
  }

 private:
  struct Params {
    void* gamma = nullptr;  // absent with _noscale
    void* beta = nullptr;
  };

  // Vector i of saved: 0 mean, 1 variance, 2 dgamma, 3 dbeta.
  float* Saved(const KernelArgs& args, int i) const {
    return reinterpret_cast<float*>(static_cast<char*>(args.saved) + i * stats_bytes_);
  }

  // The fused ReLU's mask, after the four vectors.
  void* Workspace(const KernelArgs& args) const {
    return static_cast<char*>(args.saved) + 4 * stats_bytes_;
  }

  // gamma (unless _noscale) and beta from params, or their gradients from
  // dparams (`diff`). Literal names: no string is built on the success path.
  absl::StatusOr<Params> ParamsOf(const std::vector<void*>& list, bool diff) const {
    Params p;
    if (desc_.scale) {
      ASSIGN_OR_RETURN(p.gamma, Param(list, 0, diff ? "dparams[0] (dgamma)" : "params[0] (gamma)"));
      ASSIGN_OR_RETURN(p.beta, Param(list, 1, diff ? "dparams[1] (dbeta)" : "params[1] (beta)"));
    } else {
      ASSIGN_OR_RETURN(p.beta, Param(list, 0, diff ? "dparams[0] (dbeta)" : "params[0] (beta)"));
    }
    return p;
  }

  void Bind(BoundPrimitive& primitive, const Params& p) {
    if (desc_.scale) primitive.Set(DNNL_ARG_SCALE, p.gamma);
    primitive.Set(DNNL_ARG_SHIFT, p.beta);
  }

  // One backward pass writing dx and dgamma/dbeta (`diff`); with ReLU6, on
  // dy masked by 0 < y < 6 (the head of scratch).
  absl::Status RunBackward(const KernelArgs& args, void* dx, const Params& diff) {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    ASSIGN_OR_RETURN(Params p, ParamsOf(args.params, false));
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(RequireSaved(args));
    RETURN_IF_ERROR(RequireScratch(args));
    char* scratch = static_cast<char*>(args.scratch);
    const void* dy = args.dy;
    if (relu6_) {
      RETURN_IF_ERROR(Require(args.y, "y (the fused ReLU6's backward reads it)"));
      const void* parts[1] = {args.dy};
      MaskedSum(dtype_, ActivationKind::kRelu6, args.y, parts, 1, scratch, count_);
      dy = scratch;
    }
    return Guarded(what_, [&]() -> absl::Status {
      backward_.Set(DNNL_ARG_SRC, x);
      backward_.Set(DNNL_ARG_MEAN, Saved(args, 0));
      backward_.Set(DNNL_ARG_VARIANCE, Saved(args, 1));
      backward_.Set(DNNL_ARG_DIFF_DST, dy);
      backward_.Set(DNNL_ARG_DIFF_SRC, dx);
      if (desc_.scale) {
        backward_.Set(DNNL_ARG_SCALE, p.gamma);
        backward_.Set(DNNL_ARG_DIFF_SCALE, diff.gamma);
      }
      backward_.Set(DNNL_ARG_SHIFT, p.beta);
      backward_.Set(DNNL_ARG_DIFF_SHIFT, diff.beta);
      if (workspace_bytes_ > 0) backward_.Set(DNNL_ARG_WORKSPACE, Workspace(args));
      backward_.SetScratchpad(scratch + scratchpad_offset_);
      backward_.Execute(context_->stream);
      return absl::OkStatus();
    });
  }

  const BatchNormDesc desc_;
  const bool relu6_;  // a fused ReLU6 (a fused ReLU is fuse_norm_relu)
  DType dtype_ = DType::kF32;
  int64_t count_ = 0;  // elements of y's storage (padding included)
  BoundPrimitive forward_;
  BoundPrimitive inference_;
  BoundPrimitive backward_;
  size_t stats_bytes_ = 0;        // one (C) fp32 vector of saved, aligned
  size_t workspace_bytes_ = 0;    // the fused ReLU's mask (0 without one)
  size_t masked_bytes_ = 0;       // scratch: ReLU6's masked dy (0 without one)
  size_t scratchpad_offset_ = 0;  // then a spare dx, then the primitives' scratchpad
  int64_t forward_count_ = 0;
  BackwardRecord done_;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const BatchNormDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  if (!ActivationMasks(desc.activation))
    return CreateBatchNormActivation(std::move(context), desc, options, inputs);
  return MakeKernel<BatchNormKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
