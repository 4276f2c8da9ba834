// Fully connected layers and the GEMM op on cuBLASLt. Each pass is one
// LtMatmulPlan made when the kernel is created (row-major problems mapped to
// cuBLASLt's column-major view by gemm_plan.h); the fc bias is the forward
// matmul's epilogue, and its gradient the weight-gradient matmul's
// (CUBLASLT_EPILOGUE_BGRADB), or a matmul with a ones vector where cuBLASLt
// offers no algorithm for that epilogue. fp16/bf16 kernels keep weights and
// bias in their storage type (the executor keeps the fp32 masters).
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/cuda/gemm_lt.h"
#include "kernels/cuda/gemm_plan.h"
#include "kernels/cuda/ops.h"

namespace cnnbench::cuda {
namespace {

using PlanPtr = std::unique_ptr<LtMatmulPlan>;

// The heuristic's answers of `context`'s backend, kept in its shared
// objects (released before its cuBLASLt handle).
LtAlgoCache* AlgoCacheOf(Context& context) {
  std::lock_guard<std::mutex> lock(context.shared_mutex);
  std::shared_ptr<void>& slot = context.shared["lt_algo_cache"];
  if (slot == nullptr) slot = std::make_shared<LtAlgoCache>();
  return static_cast<LtAlgoCache*>(slot.get());
}

absl::StatusOr<PlanPtr> MakePlan(Context& context, const PassGemm& gemm, Precision precision,
                                 LtEpilogue epilogue, const std::string& what) {
  return LtMatmulPlan::Create(context.cublaslt, ToColumnMajor(gemm), precision, epilogue, what,
                              AlgoCacheOf(context));
}

size_t Workspace(const std::vector<const LtMatmulPlan*>& plans) {
  size_t bytes = 0;
  for (const LtMatmulPlan* p : plans)
    if (p != nullptr) bytes = std::max(bytes, p->workspace_bytes());
  return bytes;
}

// The buffer each operand names in one call.
struct Operands {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* dy = nullptr;
  const void* operator[](Operand o) const {
    return o == Operand::kA ? a : o == Operand::kB ? b : dy;
  }
};

absl::Status RunPlan(LtMatmulPlan& plan, const Operands& operands, void* out, void* bias,
                     void* scratch, cudaStream_t stream) {
  return plan.Run(operands[plan.shape().lt_a], operands[plan.shape().lt_b], out, bias, scratch,
                  stream);
}

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

KernelOr CreateFc(ContextPtr context, const FcDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  auto kernel = std::make_unique<FcKernel>(std::move(context), desc);
  RETURN_IF_ERROR(kernel->Init(options, inputs));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

KernelOr CreateGemm(ContextPtr context, const GemmDesc& desc, const KernelOptions& options,
                    const Inputs& inputs) {
  auto kernel = std::make_unique<GemmKernel>(std::move(context), desc);
  RETURN_IF_ERROR(kernel->Init(options, inputs));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace cnnbench::cuda
