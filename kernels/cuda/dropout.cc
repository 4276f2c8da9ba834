// Inverted dropout as the backend's own CUDA kernels: the mask is
// core/random.h's DropoutKeeps over each element's global logical index
// (whatever the stored layout), keyed by (seed, node, step) with the step
// read on the device from KernelArgs::step, or this kernel's count of
// training forwards when none is given. Saved: one mask byte per stored
// element. With training = false, y = x and dx = dy (copies).
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/cuda/op_kernels.h"
#include "kernels/cuda/op_spec.h"
#include "kernels/cuda/ops.h"

namespace cnnbench::cuda {
namespace {

class DropoutKernel : public CudaKernel {
 public:
  DropoutKernel(ContextPtr context, const DropoutDesc& desc, const KernelOptions& options)
      : CudaKernel(std::move(context), desc.ToString()),
        desc_(desc),
        seed_(options.seed),
        node_(options.node) {}

  absl::Status Init(const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(what_, inputs, 1));
    ASSIGN_OR_RETURN(TensorSpec input,
                     ResolveInput(what_, *context_, options, inputs, 0, desc_.dims.shape()));
    ASSIGN_OR_RETURN(elem_, ToElem(options.dtype));
    if (options.batch_offset < 0)
      return absl::InvalidArgumentError(absl::StrCat(what_, ": negative batch offset"));
    geometry_.dims = GeometryOf(desc_.dims, input);
    geometry_.first_index = static_cast<uint64_t>(options.batch_offset) *
                            static_cast<uint64_t>(desc_.dims.elements() / desc_.dims.n);
    geometry_.rate = desc_.rate;
    bytes_ = static_cast<size_t>(desc_.dims.elements()) * SizeOf(options.dtype);
    signature_.inputs = {input};
    signature_.output = input;
    signature_.saved_bytes = static_cast<size_t>(desc_.dims.elements());
    signature_.backward_reads_inputs = false;
    signature_.backward_reads_output = false;
    implementation_ = "cuda:dropout";
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    if (!args.training) return Copy(args.y, x, "dropout forward (inference copy)");
    RETURN_IF_ERROR(Require(args.saved, "saved (mask)"));
    RETURN_IF_ERROR(Launched(
        LaunchDropoutForward(geometry_, seed_, node_, args.step, calls_, x, args.y,
                             static_cast<uint8_t*>(args.saved), elem_, context_->raw_stream()),
        "dropout forward"));
    ++calls_;
    return absl::OkStatus();
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    if (!args.training) return Copy(args.dx[0], args.dy, "dropout backward (inference copy)");
    RETURN_IF_ERROR(Require(args.saved, "saved (mask)"));
    return Launched(
        LaunchDropoutBackward(geometry_, args.dy, static_cast<const uint8_t*>(args.saved),
                              args.dx[0], elem_, context_->raw_stream()),
        "dropout backward");
  }

 private:
  absl::Status Copy(void* dst, const void* src, absl::string_view call) const {
    if (dst == src) return absl::OkStatus();
    return Launched(
        cudaMemcpyAsync(dst, src, bytes_, cudaMemcpyDeviceToDevice, context_->raw_stream()), call);
  }

  const DropoutDesc desc_;
  const uint64_t seed_, node_;
  DropoutGeometry geometry_;
  Elem elem_ = Elem::kF32;
  size_t bytes_ = 0;
  uint64_t calls_ = 0;  // training forwards so far: the step when none is given
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const DropoutDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<DropoutKernel>(std::move(context), desc, options, inputs);
}

}  // namespace cnnbench::cuda
