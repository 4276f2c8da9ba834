// The activation op (ReLU, ReLU6) as a small CUDA kernel over the stored
// elements: layout-agnostic, so the output keeps the input's spec (NCHW or
// NHWC).
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/cuda/op_spec.h"
#include "kernels/cuda/ops.h"

namespace cnnbench::cuda {
namespace {

class ReluKernel : public CudaKernel {
 public:
  ReluKernel(ContextPtr context, const ReluDesc& desc)
      : CudaKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const KernelOptions& options, const Inputs& inputs) {
    if (inputs.size() > 1)
      return absl::InvalidArgumentError(
          absl::StrCat(what_, ": takes 1 input, got ", inputs.size()));
    // A blocked input is "unsupported: ..." as for every other op here.
    ASSIGN_OR_RETURN(const TensorSpec input,
                     ResolveInput(what_, *context_, options, inputs, 0, desc_.dims.shape()));
    ASSIGN_OR_RETURN(elem_, ToElem(options.dtype));
    signature_.inputs = {input};
    signature_.output = input;
    signature_.backward_reads_inputs = true;
    signature_.backward_reads_output = false;
    implementation_ = desc_.kind == ActivationKind::kRelu
                          ? "cuda:relu"
                          : absl::StrCat("cuda:activation", ActivationSuffix(desc_.kind));
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    return Launched(LaunchActivationForward(desc_.kind, x, args.y, elem_, desc_.dims.elements(),
                                            context_->raw_stream()),
                    "relu forward");
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    return Launched(LaunchActivationBackward(desc_.kind, x, args.dy, args.dx[0], elem_,
                                             desc_.dims.elements(), context_->raw_stream()),
                    "relu backward");
  }

 private:
  const ReluDesc desc_;
  Elem elem_ = Elem::kF32;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const ReluDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<ReluKernel>(std::move(context), desc, options, inputs);
}

}  // namespace cnnbench::cuda
