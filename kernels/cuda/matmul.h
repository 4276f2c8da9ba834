// What the fc and GEMM kernels share: making a pass's cuBLASLt plan (with
// the backend's cache of heuristic answers), the workspace of several plans,
// and running a plan over one call's operands. CUDA builds only.
#ifndef CNNBENCH_KERNELS_CUDA_MATMUL_H_
#define CNNBENCH_KERNELS_CUDA_MATMUL_H_

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "kernels/cuda/common.h"
#include "kernels/cuda/gemm_lt.h"
#include "kernels/cuda/gemm_plan.h"

namespace cnnbench::cuda {

using PlanPtr = std::unique_ptr<LtMatmulPlan>;

// The plan of one pass, its algorithm from `context`'s cache.
absl::StatusOr<PlanPtr> MakePlan(Context& context, const PassGemm& gemm, Precision precision,
                                 LtEpilogue epilogue, const std::string& what);

// The largest workspace of `plans` (null entries: none).
size_t Workspace(const std::vector<const LtMatmulPlan*>& plans);

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
                     void* scratch, cudaStream_t stream);

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_MATMUL_H_
