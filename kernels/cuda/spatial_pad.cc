// The spatial pad/crop as the backend's own CUDA kernel: every output
// element copies its source (pad_drop_math.h's ShiftSource) or is 0, in
// NCHW or NHWC; the backward is the same copy the other way.
#include "core/status.h"
#include "kernels/cuda/op_spec.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/pad_drop_kernels.h"

namespace cnnbench::cuda {
namespace {

class SpatialPadKernel : public CudaKernel {
 public:
  SpatialPadKernel(ContextPtr context, const SpatialPadDesc& desc)
      : CudaKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(what_, inputs, 1));
    ASSIGN_OR_RETURN(TensorSpec spec,
                     ResolveInput(what_, *context_, options, inputs, 0, desc_.dims.shape()));
    ASSIGN_OR_RETURN(elem_, ToElem(options.dtype));
    signature_.inputs.push_back(spec);
    signature_.output = OutputLike(spec, desc_.output());
    signature_.backward_reads_inputs = false;
    signature_.backward_reads_output = false;
    const ActivationGeometry in = GeometryOf(desc_.dims, spec);
    const ActivationGeometry out = GeometryOf(desc_.output(), spec);
    forward_ = {in, out, desc_.top, desc_.left};
    backward_ = {out, in, -desc_.top, -desc_.left};
    implementation_ = "cuda:spad";
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    RETURN_IF_ERROR(Require(args.y, "y"));
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    return Launched(LaunchShiftedCopy(forward_, x, args.y, elem_, context_->raw_stream()),
                    "spatial pad forward");
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    return Launched(
        LaunchShiftedCopy(backward_, args.dy, args.dx[0], elem_, context_->raw_stream()),
        "spatial pad backward");
  }

 private:
  const SpatialPadDesc desc_;
  Elem elem_ = Elem::kF32;
  ShiftGeometry forward_, backward_;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const SpatialPadDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<SpatialPadKernel>(std::move(context), desc, options, inputs);
}

}  // namespace cnnbench::cuda
