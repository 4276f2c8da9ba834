#include "kernels/cuda/matmul.h"

#include <algorithm>
#include <mutex>

namespace cnnbench::cuda {
namespace {

// The heuristic's answers of `context`'s backend (released before its
// cuBLASLt handle).
LtAlgoCache* AlgoCacheOf(Context& context) {
  std::lock_guard<std::mutex> lock(context.shared_mutex);
  if (context.lt_algos == nullptr) context.lt_algos = std::make_shared<LtAlgoCache>();
  return context.lt_algos.get();
}

}  // namespace

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

absl::Status RunPlan(LtMatmulPlan& plan, const Operands& operands, void* out, void* bias,
                     void* scratch, cudaStream_t stream) {
  return plan.Run(operands[plan.shape().lt_a], operands[plan.shape().lt_b], out, bias, scratch,
                  stream);
}

}  // namespace cnnbench::cuda
