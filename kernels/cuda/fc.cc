// Fully connected layers on cuBLASLt. Each pass is one LtMatmulPlan made
// when the kernel is created (gemm_plan.h maps the row-major problems); the
// bias is the forward matmul's epilogue, and its gradient the weight-gradient
// matmul's (CUBLASLT_EPILOGUE_BGRADB), or a matmul with a ones vector where
// cuBLASLt offers no algorithm for that epilogue. fp16/bf16 kernels keep
// weights and bias in their storage type (the executor keeps the fp32
// masters).
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

// y(N,OC) = x W^T + b: the GEMM op with A = x, B = the weights, stored
// (OC,IC) (transposed).
class FcKernel : public CudaKernel {
 public:
  FcKernel(ContextPtr context, const FcDesc& desc)
      : CudaKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const KernelOptions& options, const Inputs& inputs) {
    const DType t = options.dtype;
    ASSIGN_OR_RETURN(FcLayout layout, FcLayoutFor(desc_, t, inputs));
    signature_.inputs = {layout.input};
    signature_.output = TensorSpec::Plain(t, Shape{desc_.n, desc_.oc});
    signature_.params = {layout.weights};
    if (desc_.bias) signature_.params.push_back(TensorSpec::Plain(t, Shape{desc_.oc}));
    signature_.backward_reads_inputs = true;  // the weight gradient reads x
    signature_.backward_reads_output = false;

    const Precision p = options.precision;
    const GemmDesc gemm = desc_.AsGemm();
    const LtEpilogue bias = desc_.bias ? LtEpilogue::kBias : LtEpilogue::kNone;
    ASSIGN_OR_RETURN(
        forward_, MakePlan(*context_, ForwardGemm(gemm), p, bias, absl::StrCat(what_, " forward")));
    ASSIGN_OR_RETURN(grad_x_, MakePlan(*context_, GradientOfA(gemm), p, LtEpilogue::kNone,
                                       absl::StrCat(what_, " backward data")));
    const std::string weights_what = absl::StrCat(what_, " backward weights");
    if (desc_.bias) {
      // dW = dy^T x, with dy as cuBLASLt's B: BGRADB sums it over the batch.
      auto fused =
          MakePlan(*context_, GradientOfB(gemm), p, LtEpilogue::kBiasGradient, weights_what);
      if (fused.ok()) {
        grad_w_ = *std::move(fused);
      } else if (absl::IsUnimplemented(fused.status())) {
        RETURN_IF_ERROR(InitBiasReduction(t, p));
      } else {
        return fused.status();
      }
    }
    if (grad_w_ == nullptr) {
      ASSIGN_OR_RETURN(grad_w_,
                       MakePlan(*context_, GradientOfB(gemm), p, LtEpilogue::kNone, weights_what));
    }
    signature_.scratch_bytes =
        Workspace({forward_.get(), grad_x_.get(), grad_w_.get(), grad_bias_.get()});
    implementation_ = forward_->name();
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    RETURN_IF_ERROR(RequireParams(args.params, "params"));
    RETURN_IF_ERROR(RequireScratch(args));
    return RunPlan(*forward_, {x, args.params[0], nullptr}, args.y,
                   desc_.bias ? args.params[1] : nullptr, args.scratch, context_->raw_stream());
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(RequireParams(args.params, "params"));
    RETURN_IF_ERROR(RequireScratch(args));
    return RunPlan(*grad_x_, {nullptr, args.params[0], args.dy}, args.dx[0], nullptr, args.scratch,
                   context_->raw_stream());
  }

  absl::Status BackwardWeights(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(RequireParams(args.dparams, "dparams"));
    RETURN_IF_ERROR(RequireScratch(args));
    cudaStream_t stream = context_->raw_stream();
    void* db = desc_.bias ? args.dparams[1] : nullptr;
    const bool fused = desc_.bias && grad_bias_ == nullptr;
    RETURN_IF_ERROR(RunPlan(*grad_w_, {x, nullptr, args.dy}, args.dparams[0], fused ? db : nullptr,
                            args.scratch, stream));
    if (grad_bias_ != nullptr)  // db(OC) = dy^T(OC,N) ones(N)
      RETURN_IF_ERROR(RunPlan(*grad_bias_, {nullptr, ones_.data(), args.dy}, db, nullptr,
                              args.scratch, stream));
    return absl::OkStatus();
  }

 private:
  absl::Status RequireParams(const std::vector<void*>& params, absl::string_view name) const {
    const size_t want = desc_.bias ? 2 : 1;
    if (params.size() < want)
      return absl::InvalidArgumentError(
          absl::StrCat(what_, ": ", name, " has ", params.size(), " entries, needs ", want));
    for (size_t i = 0; i < want; ++i)
      RETURN_IF_ERROR(Require(params[i], absl::StrCat(name, "[", i, "]")));
    return absl::OkStatus();
  }

  // The bias gradient as its own matmul: (OC,1) = dy^T ones, the ones
  // (N,1) standing in the B operand.
  absl::Status InitBiasReduction(DType t, Precision p) {
    const PassGemm sum{GemmDesc{desc_.oc, 1, desc_.n, true, false}, Operand::kDy, Operand::kB};
    ASSIGN_OR_RETURN(grad_bias_, MakePlan(*context_, sum, p, LtEpilogue::kNone,
                                          absl::StrCat(what_, " bias gradient")));
    std::vector<uint16_t> half(desc_.n);
    std::vector<float> single(desc_.n, 1.0f);
    const void* host = single.data();
    if (t == DType::kF16) {
      std::fill(half.begin(), half.end(), FloatToHalf(1.0f).bits);
      host = half.data();
    } else if (t == DType::kBF16) {
      std::fill(half.begin(), half.end(), FloatToBFloat16(1.0f).bits);
      host = half.data();
    }
    const size_t bytes = static_cast<size_t>(desc_.n) * SizeOf(t);
    ASSIGN_OR_RETURN(ones_, Buffer::Allocate(context_->device, bytes));
    return CopyBytes(ones_.data(), context_->device, host, Device::Cpu(), bytes);
  }

  const FcDesc desc_;
  PlanPtr forward_, grad_x_, grad_w_, grad_bias_;
  Buffer ones_;  // n ones in the storage type, for grad_bias_
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const FcDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<FcKernel>(std::move(context), desc, options, inputs);
}

}  // namespace cnnbench::cuda
