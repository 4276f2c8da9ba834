// The GEMM op on cuBLASLt: each pass (forward, dA, dB) is one LtMatmulPlan
// made when the kernel is created, the row-major problem mapped to
// cuBLASLt's column-major view by gemm_plan.h.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/cuda/gemm_lt.h"
#include "kernels/cuda/gemm_plan.h"
#include "kernels/cuda/matmul.h"
#include "kernels/cuda/ops.h"

namespace cnnbench::cuda {
namespace {

class GemmKernel : public CudaKernel {
 public:
  GemmKernel(ContextPtr context, const GemmDesc& desc)
      : CudaKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const KernelOptions& options, const Inputs& inputs) {
    const DType t = options.dtype;
    const TensorSpec a =
        TensorSpec::Plain(t, desc_.transpose_a ? Shape{desc_.k, desc_.m} : Shape{desc_.m, desc_.k});
    const TensorSpec b =
        TensorSpec::Plain(t, desc_.transpose_b ? Shape{desc_.n, desc_.k} : Shape{desc_.k, desc_.n});
    if (!inputs.empty()) {
      if (inputs.size() != 2)
        return absl::InvalidArgumentError(
            absl::StrCat(what_, ": takes 2 inputs, got ", inputs.size()));
      for (size_t i = 0; i < 2; ++i) {
        const TensorSpec& want = i == 0 ? a : b;
        if (!inputs[i].is_plain() || inputs[i].layout == Layout::kNHWC || inputs[i].dtype != t ||
            inputs[i].shape.num_elements() != want.shape.num_elements())
          return absl::InvalidArgumentError(absl::StrCat(what_, ": input ", i, " spec ",
                                                         inputs[i].DebugString(), " does not fit"));
      }
    }
    signature_.inputs = {a, b};
    signature_.output = TensorSpec::Plain(t, Shape{desc_.m, desc_.n});
    signature_.backward_reads_inputs = true;
    signature_.backward_reads_output = false;
    const Precision p = options.precision;
    ASSIGN_OR_RETURN(forward_, MakePlan(*context_, ForwardGemm(desc_), p, LtEpilogue::kNone,
                                        absl::StrCat(what_, " forward")));
    ASSIGN_OR_RETURN(grad_a_, MakePlan(*context_, GradientOfA(desc_), p, LtEpilogue::kNone,
                                       absl::StrCat(what_, " backward dA")));
    ASSIGN_OR_RETURN(grad_b_, MakePlan(*context_, GradientOfB(desc_), p, LtEpilogue::kNone,
                                       absl::StrCat(what_, " backward dB")));
    signature_.scratch_bytes = Workspace({forward_.get(), grad_a_.get(), grad_b_.get()});
    implementation_ = forward_->name();
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* a, Input(args, 0));
    ASSIGN_OR_RETURN(const void* b, Input(args, 1));
    RETURN_IF_ERROR(Require(args.y, "y"));
    RETURN_IF_ERROR(RequireScratch(args));
    return RunPlan(*forward_, {a, b, nullptr}, args.y, nullptr, args.scratch,
                   context_->raw_stream());
  }

  // dA and dB, each where its dx is asked for.
  absl::Status BackwardData(const KernelArgs& args) override {
    const bool want_a = args.dx.size() > 0 && args.dx[0] != nullptr;
    const bool want_b = args.dx.size() > 1 && args.dx[1] != nullptr;
    if (!want_a && !want_b) return absl::OkStatus();
    ASSIGN_OR_RETURN(const void* a, Input(args, 0));
    ASSIGN_OR_RETURN(const void* b, Input(args, 1));
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(RequireScratch(args));
    const Operands operands{a, b, args.dy};
    if (want_a)
      RETURN_IF_ERROR(
          RunPlan(*grad_a_, operands, args.dx[0], nullptr, args.scratch, context_->raw_stream()));
    if (want_b)
      RETURN_IF_ERROR(
          RunPlan(*grad_b_, operands, args.dx[1], nullptr, args.scratch, context_->raw_stream()));
    return absl::OkStatus();
  }

 private:
  const GemmDesc desc_;
  PlanPtr forward_, grad_a_, grad_b_;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const GemmDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<GemmKernel>(std::move(context), desc, options, inputs);
}

}  // namespace cnnbench::cuda
