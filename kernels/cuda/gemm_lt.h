// One cuBLASLt matmul made ready once: its descriptor, matrix layouts and
// the heuristic's algorithm, chosen when the kernel is created; Run only
// enqueues. CUDA builds only.
#ifndef CNNBENCH_KERNELS_CUDA_GEMM_LT_H_
#define CNNBENCH_KERNELS_CUDA_GEMM_LT_H_

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "kernels/cuda/gemm_plan.h"

namespace cnnbench::cuda {

// Where the bias enters: none, added to D's rows (forward), or D's column
// sums of Lt's B written as the bias gradient (the fc weight gradient's
// dy^T reduced over the batch).
enum class LtEpilogue { kNone, kBias, kBiasGradient };

// The storage type and the compute type of a precision: fp32 in
// CUBLAS_COMPUTE_32F, tf32 as CUBLAS_COMPUTE_32F_FAST_TF32, fp16 and bf16
// operands with fp32 accumulation.
struct LtTypes {
  cudaDataType_t storage = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
};
absl::StatusOr<LtTypes> LtTypesFor(Precision precision);

// The most workspace a matmul may ask for (cuBLAS's advice for Hopper).
constexpr size_t kMaxLtWorkspace = size_t{32} << 20;

// The heuristic's choices by problem (shape, precision, epilogue): the
// kernels of one backend that share a problem (a model's equal fc layers,
// a GEMM case's repetitions) ask cuBLASLt once. Thread-safe.
class LtAlgoCache {
 public:
  struct Choice {
    cublasLtMatmulAlgo_t algo{};
    size_t workspace_bytes = 0;
    std::string name;
  };
  // The key of a problem: equal keys, equal heuristic answers.
  static std::string Key(const LtMatmul& shape, Precision precision, LtEpilogue epilogue);
  bool Find(const std::string& key, Choice* choice) const;
  void Put(const std::string& key, const Choice& choice);
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Choice> choices_;
};

class LtMatmulPlan {
 public:
  // Nothing is run here but the heuristic query (none when `cache` holds
  // the problem's answer; the answer is put there otherwise); the result is
  // the first of its candidates. Unimplemented ("unsupported: ...") when
  // cuBLASLt has no algorithm for the problem.
  static absl::StatusOr<std::unique_ptr<LtMatmulPlan>> Create(
      cublasLtHandle_t handle, const LtMatmul& shape, Precision precision, LtEpilogue epilogue,
      const std::string& what, LtAlgoCache* cache = nullptr);
  ~LtMatmulPlan();
  LtMatmulPlan(const LtMatmulPlan&) = delete;
  LtMatmulPlan& operator=(const LtMatmulPlan&) = delete;

  // D = op(A) op(B) (+ bias on the forward epilogue; the bias gradient
  // written to `bias` on kBiasGradient); `workspace` holds workspace_bytes().
  absl::Status Run(const void* a, const void* b, void* d, void* bias, void* workspace,
                   cudaStream_t stream);

  size_t workspace_bytes() const { return workspace_bytes_; }
  // The chosen algorithm: "cublasLt:algo<id>,tile<t>,stages<s>[,splitk<n>]".
  const std::string& name() const { return name_; }
  const LtMatmul& shape() const { return shape_; }

 private:
  LtMatmulPlan() = default;

  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  LtMatmul shape_;
  LtEpilogue epilogue_ = LtEpilogue::kNone;
  size_t workspace_bytes_ = 0;
  std::string name_;
  std::string what_;
};

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_GEMM_LT_H_
