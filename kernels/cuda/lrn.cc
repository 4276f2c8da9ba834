// Across-channel LRN as TensorFlow defines it (docs/kernels.md), as the
// backend's own CUDA kernels in NCHW or NHWC. cuDNN's LRN divides alpha by
// the window size and takes at most 16 channels per window, so it would fit
// only part of the descriptors. Saved: s = bias + alpha * sum x^2 per element
// (fp32, in x's layout); backward reads x, dy and s.
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/cuda/op_kernels.h"
#include "kernels/cuda/op_spec.h"
#include "kernels/cuda/ops.h"

namespace cnnbench::cuda {
namespace {

class LrnKernel : public CudaKernel {
 public:
  LrnKernel(ContextPtr context, const LrnDesc& desc)
      : CudaKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(what_, inputs, 1));
    ASSIGN_OR_RETURN(TensorSpec input,
                     ResolveInput(what_, *context_, options, inputs, 0, desc_.dims.shape()));
    ASSIGN_OR_RETURN(elem_, ToElem(options.dtype));
    geometry_.dims = GeometryOf(desc_.dims, input);
    geometry_.radius = desc_.depth_radius;
    geometry_.bias = static_cast<float>(desc_.bias);
    geometry_.alpha = static_cast<float>(desc_.alpha);
    geometry_.beta = static_cast<float>(desc_.beta);
    signature_.inputs = {input};
    signature_.output = input;
    signature_.saved_bytes = static_cast<size_t>(desc_.dims.elements()) * sizeof(float);
    signature_.backward_reads_inputs = true;
    signature_.backward_reads_output = false;
    implementation_ = "cuda:lrn";
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    // Inference may run without saved memory: s is then not kept.
    return Launched(LaunchLrnForward(geometry_, x, args.y, static_cast<float*>(args.saved), elem_,
                                     context_->raw_stream()),
                    "lrn forward");
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(Require(args.saved, "saved"));
    return Launched(LaunchLrnBackward(geometry_, x, args.dy, static_cast<const float*>(args.saved),
                                      args.dx[0], elem_, context_->raw_stream()),
                    "lrn backward");
  }

 private:
  const LrnDesc desc_;
  LrnGeometry geometry_;
  Elem elem_ = Elem::kF32;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const LrnDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<LrnKernel>(std::move(context), desc, options, inputs);
}

}  // namespace cnnbench::cuda
