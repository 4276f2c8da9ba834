// Drop-path as the backend's own CUDA kernels: one kernel draws each
// example's scale (kernels/drop_path.h, keyed by (seed, node, step) with
// the step read on the device from KernelArgs::step, or this kernel's count
// of training forwards when none is given) into the saved memory, a second
// scales every element by its example's; the backward scales dy by the
// same saved scales. With training = false, y = x and dx = dy (copies).
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/cuda/op_spec.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/pad_drop_kernels.h"

namespace cnnbench::cuda {
namespace {

class DropPathKernel : public CudaKernel {
 public:
  DropPathKernel(ContextPtr context, const DropPathDesc& desc, const KernelOptions& options)
      : CudaKernel(std::move(context), desc.ToString()),
        desc_(desc),
        seed_(options.seed),
        node_(options.node),
        first_example_(static_cast<uint64_t>(options.batch_offset)) {}

  absl::Status Init(const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(what_, inputs, 1));
    ASSIGN_OR_RETURN(TensorSpec input,
                     ResolveInput(what_, *context_, options, inputs, 0, desc_.dims.shape()));
    ASSIGN_OR_RETURN(elem_, ToElem(options.dtype));
    if (options.batch_offset < 0)
      return absl::InvalidArgumentError(absl::StrCat(what_, ": negative batch offset"));
    geometry_ = GeometryOf(desc_.dims, input);
    bytes_ = static_cast<size_t>(desc_.dims.elements()) * SizeOf(options.dtype);
    signature_.inputs = {input};
    signature_.output = input;
    signature_.saved_bytes = static_cast<size_t>(desc_.dims.n) * sizeof(double);  // the scales
    signature_.backward_reads_inputs = false;
    signature_.backward_reads_output = false;
    implementation_ = "cuda:droppath";
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    if (!args.training) return Copy(args.y, x, "drop-path forward (inference copy)");
    RETURN_IF_ERROR(Require(args.saved, "saved (scales)"));
    double* scale = static_cast<double*>(args.saved);
    RETURN_IF_ERROR(Launched(
        LaunchDropPathScales(desc_.dims.n, first_example_, desc_.keep, desc_.ramp_steps, seed_,
                             node_, args.step, calls_, scale, context_->raw_stream()),
        "drop-path scales"));
    ++calls_;
    return Launched(LaunchDropPathApply(geometry_, x, scale, args.y, elem_, context_->raw_stream()),
                    "drop-path forward");
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    if (!args.training) return Copy(args.dx[0], args.dy, "drop-path backward (inference copy)");
    RETURN_IF_ERROR(Require(args.saved, "saved (scales)"));
    return Launched(LaunchDropPathApply(geometry_, args.dy, static_cast<const double*>(args.saved),
                                        args.dx[0], elem_, context_->raw_stream()),
                    "drop-path backward");
  }

 private:
  absl::Status Copy(void* dst, const void* src, absl::string_view call) const {
    if (dst == src) return absl::OkStatus();
    return Launched(
        cudaMemcpyAsync(dst, src, bytes_, cudaMemcpyDeviceToDevice, context_->raw_stream()), call);
  }

  const DropPathDesc desc_;
  const uint64_t seed_, node_;
  const uint64_t first_example_;  // global index of this batch's first example
  ActivationGeometry geometry_;
  Elem elem_ = Elem::kF32;
  size_t bytes_ = 0;
  uint64_t calls_ = 0;  // training forwards so far: the step when none is given
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const DropPathDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<DropPathKernel>(std::move(context), desc, options, inputs);
}

}  // namespace cnnbench::cuda
