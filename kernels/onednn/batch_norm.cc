// Batch normalization with oneDNN's primitive (separate scale and shift, as
// 2.6 offers), in the producer's layout. Training normalises with the batch
// statistics (kept in `saved` for backward) and then updates the running
// ones as TensorFlow does; inference normalises with the running ones.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/onednn/ops.h"

namespace cnnbench {
namespace onednn {
namespace {

using dnnl::memory;
using dnnl::normalization_flags;

class BatchNormKernel : public OneDnnKernel {
 public:
  BatchNormKernel(std::shared_ptr<Context> context, const BatchNormDesc& desc)
      : OneDnnKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(DType dtype, const Inputs& inputs) {
    const BatchNormDesc& d = desc_;
    RETURN_IF_ERROR(CheckInputCount(inputs, 1, what_));
    ASSIGN_OR_RETURN(const TensorSpec* given,
                     GivenInput(inputs, 0, dtype, d.dims.shape(), what_));
    ASSIGN_OR_RETURN(memory::data_type type, ToDnnlType(dtype));
    const dnnl::engine& engine = context_->engine;
    const memory::dims dims = ToDims(d.dims.shape());
    memory::desc data_md = PlainDesc(dims, type);
    if (given != nullptr) {
      ASSIGN_OR_RETURN(data_md, DescFromSpec(*given, dims, "input 0", what_));
    }
    const float epsilon = static_cast<float>(d.epsilon);
    // Without gamma (`_noscale`) only beta is a parameter.
    const normalization_flags params =
        d.scale ? normalization_flags::use_scale | normalization_flags::use_shift
                : normalization_flags::use_shift;
    const dnnl::primitive_attr attr = UserScratchpadAttr();

    dnnl::batch_normalization_forward::desc fwd_desc(dnnl::prop_kind::forward_training, data_md,
                                                     epsilon, params);
    dnnl::batch_normalization_forward::primitive_desc fwd_pd(fwd_desc, attr, engine);
    std::vector<int> fwd_args = {DNNL_ARG_SRC, DNNL_ARG_DST, DNNL_ARG_MEAN, DNNL_ARG_VARIANCE,
                                 DNNL_ARG_SHIFT};
    if (d.scale) fwd_args.push_back(DNNL_ARG_SCALE);
    forward_ = BoundPrimitive(fwd_pd, dnnl::batch_normalization_forward(fwd_pd), fwd_args, engine);

    dnnl::batch_normalization_forward::desc inf_desc(
        dnnl::prop_kind::forward_inference, data_md, epsilon,
        params | normalization_flags::use_global_stats);
    dnnl::batch_normalization_forward::primitive_desc inf_pd(inf_desc, attr, engine);
    inference_ =
        BoundPrimitive(inf_pd, dnnl::batch_normalization_forward(inf_pd), fwd_args, engine);

    // prop_kind::backward gives dx and dgamma/dbeta in one pass.
    dnnl::batch_normalization_backward::desc bwd_desc(dnnl::prop_kind::backward, data_md, data_md,
                                                      epsilon, params);
    dnnl::batch_normalization_backward::primitive_desc bwd_pd(bwd_desc, attr, engine, fwd_pd);
    std::vector<int> bwd_args = {DNNL_ARG_SRC,      DNNL_ARG_MEAN,     DNNL_ARG_VARIANCE,
                                 DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC, DNNL_ARG_DIFF_SHIFT};
    if (d.scale) {
      bwd_args.push_back(DNNL_ARG_SCALE);
      bwd_args.push_back(DNNL_ARG_DIFF_SCALE);
    }
    backward_ = BoundPrimitive(bwd_pd, dnnl::batch_normalization_backward(bwd_pd), bwd_args,
                               engine);

    const Shape channels{d.dims.c};
    const TensorSpec input = given != nullptr ? *given : TensorSpec::Plain(dtype, d.dims.shape());
    signature_.inputs = {input};
    signature_.output = input;  // y keeps x's layout (the very spec: no reorder between them)
    for (int i = d.scale ? 0 : 1; i < 2; ++i)
      signature_.params.push_back(TensorSpec::Plain(DType::kF32, channels));
    signature_.state = {TensorSpec::Plain(DType::kF32, channels),
                        TensorSpec::Plain(DType::kF32, channels)};
    // saved: batch mean (C) then biased batch variance (C), as oneDNN keeps them.
    stats_bytes_ = AlignUp(sizeof(float) * d.dims.c);
    signature_.saved_bytes = 2 * stats_bytes_;
    // Scratch: the primitives' scratchpad after room for the diff of the
    // data (when only dparams are wanted) and of gamma/beta (when only dx is).
    diff_params_bytes_ = 2 * stats_bytes_;
    diff_data_bytes_ = AlignUp(data_md.get_size());
    scratchpad_offset_ = diff_params_bytes_ + diff_data_bytes_;
    signature_.scratch_bytes =
        scratchpad_offset_ + std::max({forward_.scratchpad_bytes(), inference_.scratchpad_bytes(),
                                       backward_.scratchpad_bytes()});
    signature_.backward_reads_inputs = true;
    signature_.backward_reads_output = false;
    implementation_ = forward_.implementation();
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    const BatchNormDesc& d = desc_;
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    ASSIGN_OR_RETURN(Params p, ParamsOf(args.params, "params"));
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
        return absl::OkStatus();
      });
    }
    RETURN_IF_ERROR(RequireSaved(args));
    float* mean = static_cast<float*>(args.saved);
    float* variance = reinterpret_cast<float*>(static_cast<char*>(args.saved) + stats_bytes_);
    RETURN_IF_ERROR(Guarded(what_, [&]() -> absl::Status {
      Bind(forward_, p);
      forward_.Set(DNNL_ARG_SRC, x);
      forward_.Set(DNNL_ARG_DST, args.y);
      forward_.Set(DNNL_ARG_MEAN, mean);
      forward_.Set(DNNL_ARG_VARIANCE, variance);
      forward_.SetScratchpad(scratchpad);
      forward_.Execute(context_->stream);
      return absl::OkStatus();
    }));
    // TensorFlow's update, with the unbiased variance (x m/(m-1)).
    const double m = static_cast<double>(d.dims.n) * d.dims.h * d.dims.w;
    const float unbias = m > 1 ? static_cast<float>(m / (m - 1)) : 1.0f;
    const float momentum = static_cast<float>(d.momentum);
    const float rest = static_cast<float>(1.0 - d.momentum);
    for (int64_t c = 0; c < d.dims.c; ++c) {
      running_mean[c] = momentum * running_mean[c] + rest * mean[c];
      running_var[c] = momentum * running_var[c] + rest * (variance[c] * unbias);
    }
    return absl::OkStatus();
  }

  // Runs the backward primitive once for dx and dgamma/dbeta: dparams given
  // here are written too, and a following BackwardWeights for the same
  // forward, dy and buffers then has nothing left to do.
  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    const bool with_dparams = HasAllDparams(args);
    RETURN_IF_ERROR(RunBackward(args, args.dx[0], with_dparams));
    if (with_dparams)
      done_ = {forward_count_, args.dy, args.saved, {args.dparams[0], LastDparam(args)}};
    return absl::OkStatus();
  }

  absl::Status BackwardWeights(const KernelArgs& args) override {
    if (HasAllDparams(args) && done_.forward_count == forward_count_ && done_.dy == args.dy &&
        done_.saved == args.saved && done_.dparams[0] == args.dparams[0] &&
        done_.dparams[1] == LastDparam(args)) {
      done_.forward_count = -1;  // used once: a second call recomputes
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Params unused, ParamsOf(args.dparams, "dparams"));
    (void)unused;
    return RunBackward(args, nullptr, true);
  }

 private:
  struct Params {
    void* gamma = nullptr;  // absent with _noscale
    void* beta = nullptr;
  };
  // Which backward wrote dparams last, so BackwardWeights can skip a rerun.
  struct BackwardRecord {
    int64_t forward_count = -1;
    const void* dy = nullptr;
    const void* saved = nullptr;
    void* dparams[2] = {nullptr, nullptr};  // fixed size: no allocation per call
  };

  absl::StatusOr<Params> ParamsOf(const std::vector<void*>& list, absl::string_view name) const {
    Params p;
    if (desc_.scale) {
      ASSIGN_OR_RETURN(p.gamma, Param(list, 0, absl::StrCat(name, "[0] (gamma)")));
      ASSIGN_OR_RETURN(p.beta, Param(list, 1, absl::StrCat(name, "[1] (beta)")));
    } else {
      ASSIGN_OR_RETURN(p.beta, Param(list, 0, absl::StrCat(name, "[0] (beta)")));
    }
    return p;
  }

  bool HasAllDparams(const KernelArgs& args) const {
    const size_t count = desc_.scale ? 2 : 1;
    if (args.dparams.size() < count) return false;
    for (size_t i = 0; i < count; ++i)
      if (args.dparams[i] == nullptr) return false;
    return true;
  }

  // dbeta's pointer (the second dparam with gamma, the only one without).
  void* LastDparam(const KernelArgs& args) const {
    return args.dparams[desc_.scale ? 1 : 0];
  }

  void Bind(BoundPrimitive& primitive, const Params& p) {
    if (desc_.scale) primitive.Set(DNNL_ARG_SCALE, p.gamma);
    primitive.Set(DNNL_ARG_SHIFT, p.beta);
  }

  // dx (or scratch when null) and dgamma/dbeta (into dparams when
  // `write_dparams`, else scratch).
  absl::Status RunBackward(const KernelArgs& args, void* dx, bool write_dparams) {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    ASSIGN_OR_RETURN(Params p, ParamsOf(args.params, "params"));
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(RequireSaved(args));
    RETURN_IF_ERROR(RequireScratch(args));
    char* scratch = static_cast<char*>(args.scratch);
    Params diff{scratch, scratch + stats_bytes_};
    if (write_dparams) {
      ASSIGN_OR_RETURN(diff, ParamsOf(args.dparams, "dparams"));
    }
    if (dx == nullptr) dx = scratch + diff_params_bytes_;
    const char* saved = static_cast<const char*>(args.saved);
    return Guarded(what_, [&]() -> absl::Status {
      backward_.Set(DNNL_ARG_SRC, x);
      backward_.Set(DNNL_ARG_MEAN, saved);
      backward_.Set(DNNL_ARG_VARIANCE, saved + stats_bytes_);
      backward_.Set(DNNL_ARG_DIFF_DST, args.dy);
      backward_.Set(DNNL_ARG_DIFF_SRC, dx);
      if (desc_.scale) {
        backward_.Set(DNNL_ARG_SCALE, p.gamma);
        backward_.Set(DNNL_ARG_DIFF_SCALE, diff.gamma);
      }
      backward_.Set(DNNL_ARG_DIFF_SHIFT, diff.beta);
      backward_.SetScratchpad(scratch + scratchpad_offset_);
      backward_.Execute(context_->stream);
      return absl::OkStatus();
    });
  }

  const BatchNormDesc desc_;
  BoundPrimitive forward_;
  BoundPrimitive inference_;
  BoundPrimitive backward_;
  size_t stats_bytes_ = 0;         // one (C) fp32 vector, aligned
  size_t diff_params_bytes_ = 0;   // scratch head: dgamma, dbeta nobody asked for
  size_t diff_data_bytes_ = 0;     // then a dx nobody asked for
  size_t scratchpad_offset_ = 0;   // then the primitives' scratchpad
  int64_t forward_count_ = 0;
  BackwardRecord done_;
};

}  // namespace

KernelOr CreateBatchNorm(std::shared_ptr<Context> context, const BatchNormDesc& desc,
                         DType dtype, const Inputs& inputs) {
  RETURN_IF_ERROR(desc.Validate());
  auto kernel = std::make_unique<BatchNormKernel>(std::move(context), desc);
  RETURN_IF_ERROR(Guarded(desc.ToString(), [&] { return kernel->Init(dtype, inputs); }));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace onednn
}  // namespace cnnbench
