// Pooling as the backend's own CUDA kernels (op_kernels.cu): max, average
// with padding counted and average over in-bounds elements, in NCHW or NHWC.
// cuDNN's legacy pooling takes symmetric pads only (TensorFlow's SAME pads
// the odd element after) and breaks max ties its own way; these kernels
// match the reference for every descriptor. Max pooling saves the argmax.
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/cuda/op_kernels.h"
#include "kernels/cuda/op_spec.h"
#include "kernels/cuda/ops.h"

namespace cnnbench::cuda {
namespace {

PoolKind KindOf(PoolAlgorithm algorithm) {
  switch (algorithm) {
    case PoolAlgorithm::kMax:
      return PoolKind::kMax;
    case PoolAlgorithm::kAvg:
      return PoolKind::kAvg;
    case PoolAlgorithm::kAvgExcludePad:
      return PoolKind::kAvgExcludePad;
  }
  return PoolKind::kMax;
}

PoolWindow WindowOf(const WindowDim& d) {
  PoolWindow w;
  w.in = d.in;
  w.out = d.out;
  w.kernel = d.kernel;
  w.stride = d.stride;
  w.pad_before = d.pad_before;
  return w;
}

class PoolKernel : public CudaKernel {
 public:
  PoolKernel(ContextPtr context, const PoolDesc& desc)
      : CudaKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(what_, inputs, 1));
    if (desc_.h.dilation != 1 || desc_.w.dilation != 1)
      return absl::UnimplementedError(absl::StrCat("unsupported: ", what_, ": dilated pooling"));
    if (desc_.h.in * desc_.w.in > int64_t{1} << 31)
      return absl::UnimplementedError(
          absl::StrCat("unsupported: ", what_, ": planes over 2^31 elements"));
    ASSIGN_OR_RETURN(TensorSpec input,
                     ResolveInput(what_, *context_, options, inputs, 0, desc_.input().shape()));
    ASSIGN_OR_RETURN(elem_, ToElem(options.dtype));
    geometry_ = GeometryFor(desc_, IsNhwc(input));
    signature_.inputs = {input};
    signature_.output = OutputLike(input, desc_.output());
    if (desc_.algorithm == PoolAlgorithm::kMax)
      signature_.saved_bytes = static_cast<size_t>(desc_.output().elements()) * sizeof(int32_t);
    signature_.backward_reads_inputs = false;  // the argmax or the window arithmetic suffices
    signature_.backward_reads_output = false;
    implementation_ = "cuda:pool";
    return absl::OkStatus();
  }

  static PoolGeometry GeometryFor(const PoolDesc& desc, bool nhwc) {
    PoolGeometry g;
    g.kind = KindOf(desc.algorithm);
    g.input = ActivationGeometry{desc.n, desc.c, desc.h.in, desc.w.in, nhwc};
    g.output = ActivationGeometry{desc.n, desc.c, desc.h.out, desc.w.out, nhwc};
    g.h = WindowOf(desc.h);
    g.w = WindowOf(desc.w);
    return g;
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    // Only a training forward keeps the argmax for the backward pass; an
    // inference plan gives no saved memory.
    int32_t* argmax = nullptr;
    if (geometry_.kind == PoolKind::kMax && args.training) {
      RETURN_IF_ERROR(Require(args.saved, "saved (argmax)"));
      argmax = static_cast<int32_t*>(args.saved);
    }
    return Launched(LaunchPoolForward(geometry_, x, args.y, argmax, elem_, context_->raw_stream()),
                    "pool forward");
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    if (geometry_.kind == PoolKind::kMax) RETURN_IF_ERROR(Require(args.saved, "saved (argmax)"));
    return Launched(LaunchPoolBackward(geometry_, args.dy, static_cast<const int32_t*>(args.saved),
                                       args.dx[0], elem_, context_->raw_stream()),
                    "pool backward");
  }

 private:
  const PoolDesc desc_;
  PoolGeometry geometry_;
  Elem elem_ = Elem::kF32;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const PoolDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<PoolKernel>(std::move(context), desc, options, inputs);
}

}  // namespace cnnbench::cuda
