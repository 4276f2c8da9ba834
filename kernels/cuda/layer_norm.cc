// Layer normalisation over the channels of each (n, h, w) as the backend's
// own CUDA kernels (norm_kernels.h; arithmetic kernels/layer_norm.h's,
// host-tested): fp32 NCHW or fp16/bf16 NHWC, gamma and beta fp32, each
// position's mean and 1/sqrt(var + eps) kept in saved memory (in scratch
// in inference, which gives none).
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/cuda/norm_kernels.h"
#include "kernels/cuda/op_spec.h"
#include "kernels/cuda/ops.h"

namespace cnnbench::cuda {
namespace {

class LayerNormKernel : public CudaKernel {
 public:
  LayerNormKernel(ContextPtr context, const LayerNormDesc& desc)
      : CudaKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(what_, inputs, 1));
    ASSIGN_OR_RETURN(TensorSpec input,
                     ResolveInput(what_, *context_, options, inputs, 0, desc_.dims.shape()));
    ASSIGN_OR_RETURN(elem_, ToElem(options.dtype));
    geometry_ = GeometryOf(desc_.dims, input);
    const Shape channels{desc_.dims.c};
    signature_.inputs = {input};
    signature_.output = input;
    signature_.params = {TensorSpec::Plain(DType::kF32, channels),
                         TensorSpec::Plain(DType::kF32, channels)};
    signature_.saved_bytes = 2 * static_cast<size_t>(desc_.positions()) * sizeof(float);
    signature_.scratch_bytes = signature_.saved_bytes;  // inference's statistics
    signature_.backward_reads_inputs = true;
    signature_.backward_reads_output = false;
    implementation_ = "cuda:lnorm";
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    ASSIGN_OR_RETURN(const float* gamma, ParamAt(args.params, 0, "gamma"));
    ASSIGN_OR_RETURN(const float* beta, ParamAt(args.params, 1, "beta"));
    float* mean = static_cast<float*>(args.saved != nullptr ? args.saved : args.scratch);
    RETURN_IF_ERROR(Require(mean, "saved or scratch"));
    return Launched(LaunchLayerNormForward(geometry_, static_cast<float>(desc_.epsilon), x, gamma,
                                           beta, args.y, mean, mean + desc_.positions(), elem_,
                                           context_->raw_stream()),
                    "layer norm forward");
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(Require(args.saved, "saved"));
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    ASSIGN_OR_RETURN(const float* gamma, ParamAt(args.params, 0, "gamma"));
    const float* mean = static_cast<const float*>(args.saved);
    return Launched(LaunchLayerNormInputGradient(geometry_, x, args.dy, gamma, mean,
                                                 mean + desc_.positions(), args.dx[0], elem_,
                                                 context_->raw_stream()),
                    "layer norm backward (dx)");
  }

  absl::Status BackwardWeights(const KernelArgs& args) override {
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(Require(args.saved, "saved"));
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    ASSIGN_OR_RETURN(float* dgamma, ParamAt(args.dparams, 0, "dgamma"));
    ASSIGN_OR_RETURN(float* dbeta, ParamAt(args.dparams, 1, "dbeta"));
    const float* mean = static_cast<const float*>(args.saved);
    return Launched(LaunchLayerNormParamGradients(geometry_, x, args.dy, mean,
                                                  mean + desc_.positions(), dgamma, dbeta, elem_,
                                                  context_->raw_stream()),
                    "layer norm backward (dgamma, dbeta)");
  }

 private:
  absl::StatusOr<float*> ParamAt(const std::vector<void*>& list, size_t i,
                                 absl::string_view name) const {
    if (i >= list.size() || list[i] == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(what_, ": ", name, " is missing"));
    return static_cast<float*>(list[i]);
  }

  const LayerNormDesc desc_;
  ActivationGeometry geometry_;
  Elem elem_ = Elem::kF32;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const LayerNormDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<LayerNormKernel>(std::move(context), desc, options, inputs);
}

}  // namespace cnnbench::cuda
