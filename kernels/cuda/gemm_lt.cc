#include "kernels/cuda/gemm_lt.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "core/cuda_status.h"

namespace cnnbench::cuda {
namespace {

// The heuristic reads the bias pointer's alignment before any pointer is
// known; every buffer of the backend is 256-byte aligned, and so is this.
void* const kAlignedPlaceholder = reinterpret_cast<void*>(uintptr_t{256});

constexpr int kCandidates = 8;

}  // namespace

absl::StatusOr<LtTypes> LtTypesFor(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
      return LtTypes{CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case Precision::kTf32:
      return LtTypes{CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case Precision::kFp16:
      return LtTypes{CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case Precision::kBf16:
      return LtTypes{CUDA_R_16BF, CUBLAS_COMPUTE_32F};
  }
  return absl::InvalidArgumentError("unknown precision");
}

std::string LtAlgoCache::Key(const LtMatmul& shape, Precision precision, LtEpilogue epilogue) {
  return absl::StrCat(shape.ToString(), "/", PrecisionName(precision), "/",
                      static_cast<int>(epilogue));
}

bool LtAlgoCache::Find(const std::string& key, Choice* choice) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = choices_.find(key);
  if (found == choices_.end()) return false;
  *choice = found->second;
  return true;
}

void LtAlgoCache::Put(const std::string& key, const Choice& choice) {
  std::lock_guard<std::mutex> lock(mutex_);
  choices_.emplace(key, choice);
}

size_t LtAlgoCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return choices_.size();
}

absl::StatusOr<std::unique_ptr<LtMatmulPlan>> LtMatmulPlan::Create(
    cublasLtHandle_t handle, const LtMatmul& shape, Precision precision, LtEpilogue epilogue,
    const std::string& what, LtAlgoCache* cache) {
  ASSIGN_OR_RETURN(LtTypes types, LtTypesFor(precision));
  std::unique_ptr<LtMatmulPlan> plan(new LtMatmulPlan());
  plan->handle_ = handle;
  plan->shape_ = shape;
  plan->epilogue_ = epilogue;
  plan->what_ = what;
  CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescCreate(&plan->desc_, types.compute, CUDA_R_32F));
  const cublasOperation_t ta = shape.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = shape.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  CUBLAS_RETURN_IF_ERROR(
      cublasLtMatmulDescSetAttribute(plan->desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  CUBLAS_RETURN_IF_ERROR(
      cublasLtMatmulDescSetAttribute(plan->desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  if (epilogue != LtEpilogue::kNone) {
    const cublasLtEpilogue_t e =
        epilogue == LtEpilogue::kBias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_BGRADB;
    CUBLAS_RETURN_IF_ERROR(
        cublasLtMatmulDescSetAttribute(plan->desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e)));
    CUBLAS_RETURN_IF_ERROR(
        cublasLtMatmulDescSetAttribute(plan->desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                       &kAlignedPlaceholder, sizeof(kAlignedPlaceholder)));
  }
  CUBLAS_RETURN_IF_ERROR(
      cublasLtMatrixLayoutCreate(&plan->a_, types.storage, shape.a.rows, shape.a.cols, shape.a.ld));
  CUBLAS_RETURN_IF_ERROR(
      cublasLtMatrixLayoutCreate(&plan->b_, types.storage, shape.b.rows, shape.b.cols, shape.b.ld));
  CUBLAS_RETURN_IF_ERROR(
      cublasLtMatrixLayoutCreate(&plan->d_, types.storage, shape.d.rows, shape.d.cols, shape.d.ld));

  const std::string key = LtAlgoCache::Key(shape, precision, epilogue);
  LtAlgoCache::Choice cached;
  if (cache != nullptr && cache->Find(key, &cached)) {
    plan->algo_ = cached.algo;
    plan->workspace_bytes_ = cached.workspace_bytes;
    plan->name_ = cached.name;
    return plan;
  }

  cublasLtMatmulPreference_t preference = nullptr;
  CUBLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceCreate(&preference));
  const uint64_t max_workspace = kMaxLtWorkspace;
  cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
  int returned = 0;
  cublasStatus_t status = cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace, sizeof(max_workspace));
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLtMatmulAlgoGetHeuristic(handle, plan->desc_, plan->a_, plan->b_, plan->d_,
                                            plan->d_, preference, kCandidates, results, &returned);
  cublasLtMatmulPreferenceDestroy(preference);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || (status == CUBLAS_STATUS_SUCCESS && returned == 0))
    return absl::UnimplementedError(absl::StrCat("unsupported: ", what, ": cuBLASLt has no ",
                                                 PrecisionName(precision), " algorithm for ",
                                                 shape.ToString()));
  CUBLAS_RETURN_IF_ERROR(status);
  // The heuristic's first candidate; candidates it marks failed are skipped.
  int chosen = -1;
  for (int i = 0; i < returned && chosen < 0; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS) chosen = i;
  if (chosen < 0)
    return absl::UnimplementedError(absl::StrCat(
        "unsupported: ", what, ": no usable cuBLASLt algorithm for ", shape.ToString()));
  plan->algo_ = results[chosen].algo;
  plan->workspace_bytes_ = results[chosen].workspaceSize;

  int32_t id = 0, splitk = 0;
  uint32_t tile = 0, stages = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&plan->algo_, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id),
                                       nullptr);
  cublasLtMatmulAlgoConfigGetAttribute(&plan->algo_, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
                                       sizeof(tile), nullptr);
  cublasLtMatmulAlgoConfigGetAttribute(&plan->algo_, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                       sizeof(stages), nullptr);
  cublasLtMatmulAlgoConfigGetAttribute(&plan->algo_, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                       sizeof(splitk), nullptr);
  plan->name_ = absl::StrCat("cublasLt:algo", id, ",tile", tile, ",stages", stages,
                             splitk > 1 ? absl::StrCat(",splitk", splitk) : "");
  if (cache != nullptr) cache->Put(key, {plan->algo_, plan->workspace_bytes_, plan->name_});
  return plan;
}

LtMatmulPlan::~LtMatmulPlan() {
  if (d_ != nullptr) cublasLtMatrixLayoutDestroy(d_);
  if (b_ != nullptr) cublasLtMatrixLayoutDestroy(b_);
  if (a_ != nullptr) cublasLtMatrixLayoutDestroy(a_);
  if (desc_ != nullptr) cublasLtMatmulDescDestroy(desc_);
}

absl::Status LtMatmulPlan::Run(const void* a, const void* b, void* d, void* bias, void* workspace,
                               cudaStream_t stream) {
  if (a == nullptr || b == nullptr || d == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(what_, ": null matrix"));
  if (workspace_bytes_ > 0 && workspace == nullptr)
    return absl::InvalidArgumentError(
        absl::StrCat(what_, ": needs ", workspace_bytes_, " bytes of scratch, got none"));
  if (epilogue_ != LtEpilogue::kNone) {
    if (bias == nullptr) return absl::InvalidArgumentError(absl::StrCat(what_, ": null bias"));
    CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                          &bias, sizeof(bias)));
  }
  const float alpha = 1.0f, beta = 0.0f;
  const cublasStatus_t status = cublasLtMatmul(handle_, desc_, &alpha, a, a_, b, b_, &beta, d, d_,
                                               d, d_, &algo_, workspace, workspace_bytes_, stream);
  if (status != CUBLAS_STATUS_SUCCESS)
    return absl::InternalError(absl::StrCat(what_, ": cublasLtMatmul (", shape_.ToString(),
                                            ") failed: ", cublasGetStatusName(status), " (",
                                            cublasGetStatusString(status), ")"));
  return absl::OkStatus();
}

}  // namespace cnnbench::cuda
