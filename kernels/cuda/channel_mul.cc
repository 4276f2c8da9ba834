// The channel multiply as the backend's own CUDA kernels (pad_drop_kernels.h):
// y = x0 * x1[n, c] in x0's layout (NCHW or NHWC), x1 plain (N,C,1,1) or
// (N,C); backward dx0 = dy * x1 and dx1 = the sum over (H,W) of dy * x0.
// The scale's index is kernels/channel_mul.h's, host-tested.
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/cuda/op_spec.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/pad_drop_kernels.h"

namespace cnnbench::cuda {
namespace {

class ChannelMulKernel : public CudaKernel {
 public:
  ChannelMulKernel(ContextPtr context, const ChannelMulDesc& desc)
      : CudaKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(what_, inputs, 2));
    ASSIGN_OR_RETURN(TensorSpec input,
                     ResolveInput(what_, *context_, options, inputs, 0, desc_.dims.shape()));
    const Shape scale_shape = inputs.size() == 2 && desc_.IsScaleShape(inputs[1].shape)
                                  ? inputs[1].shape
                                  : Shape{desc_.dims.n, desc_.dims.c, 1, 1};
    ASSIGN_OR_RETURN(TensorSpec scales,
                     ResolveInput(what_, *context_, options, inputs, 1, scale_shape));
    ASSIGN_OR_RETURN(elem_, ToElem(options.dtype));
    geometry_ = GeometryOf(desc_.dims, input);
    signature_.inputs = {input, scales};
    signature_.output = input;
    signature_.backward_reads_inputs = true;
    signature_.backward_reads_output = false;
    implementation_ = "cuda:chmul";
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    ASSIGN_OR_RETURN(const void* s, Input(args, 1));
    RETURN_IF_ERROR(Require(args.y, "y"));
    return Launched(LaunchChannelMul(geometry_, x, s, args.y, elem_, context_->raw_stream()),
                    "channel multiply forward");
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    ASSIGN_OR_RETURN(const void* s, Input(args, 1));
    if (!args.dx.empty() && args.dx[0] != nullptr)
      RETURN_IF_ERROR(Launched(
          LaunchChannelMul(geometry_, args.dy, s, args.dx[0], elem_, context_->raw_stream()),
          "channel multiply backward (dx0)"));
    if (args.dx.size() > 1 && args.dx[1] != nullptr)
      RETURN_IF_ERROR(Launched(LaunchChannelMulScaleGradient(geometry_, args.dy, x, args.dx[1],
                                                             elem_, context_->raw_stream()),
                               "channel multiply backward (dx1)"));
    return absl::OkStatus();
  }

 private:
  const ChannelMulDesc desc_;
  ActivationGeometry geometry_;
  Elem elem_ = Elem::kF32;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const ChannelMulDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<ChannelMulKernel>(std::move(context), desc, options, inputs);
}

}  // namespace cnnbench::cuda
