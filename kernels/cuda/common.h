// Shared pieces of the cuda backend: the per-device context (stream and
// library handles), the kernel base class with argument checks, and the
// mapping of the project's types and layouts to the device kernels'.
// CUDA builds only.
#ifndef CNNBENCH_KERNELS_CUDA_COMMON_H_
#define CNNBENCH_KERNELS_CUDA_COMMON_H_

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/device.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/device_kernels.h"
#include "kernels/cuda/engine_pick.h"
#include "kernels/cuda/plan_choices.h"
#include "kernels/kernel.h"

namespace cnnbench::cuda {

class ConvPlanCache;  // conv.cc
class LtAlgoCache;    // gemm_lt.h
struct BnGraphCache;  // batch_norm.cc

// One per backend: every kernel of the backend enqueues on `stream`.
struct Context {
  Device device;
  Stream stream;
  cudnnHandle_t cudnn = nullptr;
  cublasLtHandle_t cublaslt = nullptr;
  CudaBackendOptions options;
  // What kernels of equal problems share, each made on first use by the op
  // that owns it (under shared_mutex) and released before the library
  // handles: the convolutions' plans (conv.cc), cuBLASLt's heuristic answers
  // (matmul.cc), batch norm's cuDNN graphs by descriptor and type
  // (batch_norm.cc), and the budget of run-time compiled engine builds.
  std::mutex shared_mutex;
  std::shared_ptr<ConvPlanCache> conv_plans;
  std::shared_ptr<LtAlgoCache> lt_algos;
  std::shared_ptr<BnGraphCache> bn_graphs;
  std::shared_ptr<RuntimeCompiledBudget> runtime_compiled_budget;
  // What the plan-choice file is bound to (PlanChoiceIdentity), read when
  // the context is made and the file is in use; else "".
  std::string plan_identity;

  cudaStream_t raw_stream() const { return static_cast<cudaStream_t>(stream.native_handle()); }
  static absl::StatusOr<std::shared_ptr<Context>> Create(const Device& device,
                                                         const CudaBackendOptions& options);
  ~Context();

 private:
  Context(Device d, Stream s) : device(d), stream(std::move(s)) {}
};

using KernelOr = absl::StatusOr<std::unique_ptr<Kernel>>;
using Inputs = std::vector<TensorSpec>;

// The backend's budget of failed run-time compiled engine builds
// (engine_pick.h), created on first use from its options; shared by every
// graph the backend builds.
RuntimeCompiledBudget* RuntimeCompiledBudgetOf(Context& context);
// The backend's per-graph cap on run-time compiled builds.
int RuntimeCompiledAttemptsOf(const Context& context);
// The process's plan-choice file bound to this backend's device
// (plan_choices.h), or null when there is none (no path given, the
// identity unreadable, or another GPU model bound first).
PlanChoices* PlanChoicesOf(const Context& context);

// The device kernels' element type of `dtype` (fp32, fp16, bf16, int32).
absl::StatusOr<Elem> ToElem(DType dtype);

// The activation layout kernels of this precision produce: NHWC for the
// tensor-core precisions (fp16, bf16, tf32) unless the backend was asked for
// NCHW; NCHW for fp32.
Layout ActivationLayout(const Context& context, const KernelOptions& options);

// A dense spec of `shape` in `layout` (kNCHW or kNHWC for rank 4).
TensorSpec DenseSpec(DType dtype, const Shape& shape, Layout layout);

// Base of the cuda kernels: the context, the descriptor string for errors,
// argument checks.
class CudaKernel : public Kernel {
 public:
  std::string implementation() const override { return implementation_; }

 protected:
  CudaKernel(std::shared_ptr<Context> context, std::string what)
      : context_(std::move(context)), what_(std::move(what)) {}

  // InvalidArgument naming the descriptor when `pointer` is null.
  absl::Status Require(const void* pointer, absl::string_view name) const;
  // x[i], or an error naming the descriptor when it is missing.
  absl::StatusOr<const void*> Input(const KernelArgs& args, size_t i) const;
  absl::Status RequireScratch(const KernelArgs& args) const;
  absl::Status RequireSaved(const KernelArgs& args) const;
  // The status of the launch just made, naming the descriptor and `what`.
  absl::Status Launched(cudaError_t err, absl::string_view call) const;

  std::shared_ptr<Context> context_;
  std::string what_;
  std::string implementation_;
};

// An op this backend does not run yet: unsupported, with its reason.
absl::Status NotBuiltYet(absl::string_view what);

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_COMMON_H_
