#include "kernels/cuda/common.h"

#include "absl/strings/str_cat.h"
#include "core/cuda_status.h"
#include "kernels/cuda/conv_graph.h"

namespace cnnbench::cuda {

int RuntimeCompiledAttemptsOf(const Context& context) {
  return ResolveRuntimeCompiledAttempts(context.options.runtime_compiled_attempts);
}

RuntimeCompiledBudget* RuntimeCompiledBudgetOf(Context& context) {
  std::lock_guard<std::mutex> lock(context.shared_mutex);
  if (context.runtime_compiled_budget == nullptr)
    context.runtime_compiled_budget = std::make_shared<RuntimeCompiledBudget>(
        RuntimeCompiledFailureBudget(RuntimeCompiledAttemptsOf(context)));
  return context.runtime_compiled_budget.get();
}

PlanChoices* PlanChoicesOf(const Context& context) {
  PlanChoices& choices = PlanChoices::Process();
  if (!choices.enabled()) return nullptr;
  if (context.plan_identity.empty() || !choices.Bind(context.plan_identity)) return nullptr;
  return &choices;
}

absl::StatusOr<std::shared_ptr<Context>> Context::Create(const Device& device,
                                                         const CudaBackendOptions& options) {
  RETURN_IF_ERROR(CheckDevice(device));
  if (!device.is_cuda())
    return absl::InvalidArgumentError(
        absl::StrCat("the cuda backend runs on cuda:N, not ", device.ToString()));
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device.ordinal));
  ASSIGN_OR_RETURN(Stream stream, Stream::Create(device));
  std::shared_ptr<Context> context(new Context(device, std::move(stream)));
  context->options = options;
  CUDNN_RETURN_IF_ERROR(cudnnCreate(&context->cudnn));
  CUDNN_RETURN_IF_ERROR(cudnnSetStream(context->cudnn, context->raw_stream()));
  CUBLAS_RETURN_IF_ERROR(cublasLtCreate(&context->cublaslt));
  if (PlanChoices::Process().enabled()) context->plan_identity = PlanChoiceIdentity(device.ordinal);
  return context;
}

Context::~Context() {
  // What kernels shared (cuDNN plans among it) goes before the handles.
  {
    std::lock_guard<std::mutex> lock(shared_mutex);
    conv_plans.reset();
    lt_algos.reset();
    bn_graphs.reset();
    runtime_compiled_budget.reset();
  }
  if (cublaslt != nullptr) cublasLtDestroy(cublaslt);
  if (cudnn != nullptr) cudnnDestroy(cudnn);
}

absl::StatusOr<Elem> ToElem(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return Elem::kF32;
    case DType::kF16:
      return Elem::kF16;
    case DType::kBF16:
      return Elem::kBF16;
    case DType::kI32:
      return Elem::kI32;
    default:
      return absl::UnimplementedError(
          absl::StrCat("unsupported: ", DTypeName(dtype), " on the cuda backend"));
  }
}

Layout ActivationLayout(const Context& context, const KernelOptions& options) {
  if (options.precision == Precision::kFp32 || !context.options.nhwc) return Layout::kNCHW;
  return Layout::kNHWC;
}

TensorSpec DenseSpec(DType dtype, const Shape& shape, Layout layout) {
  TensorSpec spec = TensorSpec::Plain(dtype, shape);
  if (shape.rank() == 4) spec.layout = layout;
  return spec;
}

absl::Status CudaKernel::Require(const void* pointer, absl::string_view name) const {
  if (pointer != nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what_, ": ", name, " is null"));
}

absl::StatusOr<const void*> CudaKernel::Input(const KernelArgs& args, size_t i) const {
  if (i >= args.x.size() || args.x[i] == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(what_, ": input ", i, " is missing"));
  return args.x[i];
}

absl::Status CudaKernel::RequireScratch(const KernelArgs& args) const {
  if (signature_.scratch_bytes == 0 || args.scratch != nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what_, ": needs ", signature_.scratch_bytes, " bytes of scratch, got none"));
}

absl::Status CudaKernel::RequireSaved(const KernelArgs& args) const {
  if (signature_.saved_bytes == 0 || args.saved != nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what_, ": needs ", signature_.saved_bytes, " saved bytes, got none"));
}

absl::Status CudaKernel::Launched(cudaError_t err, absl::string_view call) const {
  if (err == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what_, ": ", call, " failed: ", cudaGetErrorName(err),
                                          " (", cudaGetErrorString(err), ")"));
}

absl::Status NotBuiltYet(absl::string_view what) {
  return absl::UnimplementedError(
      absl::StrCat("unsupported: ", what, " on the cuda backend (not built yet)"));
}

}  // namespace cnnbench::cuda
