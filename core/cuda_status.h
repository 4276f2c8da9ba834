// Error macros for the CUDA libraries (only in CUDA builds): each carries
// file:line, the call and the library's own message; out-of-memory becomes an
// OOM error.
#ifndef CNNBENCH_CORE_CUDA_STATUS_H_
#define CNNBENCH_CORE_CUDA_STATUS_H_

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>

#include "absl/strings/str_cat.h"
#include "core/status.h"

namespace cnnbench {

inline absl::Status CudaError(cudaError_t err, const char* expr, const char* file, int line) {
  std::string msg = absl::StrCat(file, ":", line, ": ", expr, " failed: ", cudaGetErrorName(err),
                                 " (", cudaGetErrorString(err), ")");
  if (err == cudaErrorMemoryAllocation) return OutOfMemoryError(msg);
  return absl::InternalError(msg);
}

// cuDNN's last error message on this thread (cuDNN 9: which sub-library
// failed to load, which attribute was bad), or "" (reading it clears it).
inline std::string CudnnLastError() {
  char message[1024] = {0};
  cudnnGetLastErrorString(message, sizeof(message));
  return message;
}

inline absl::Status CudnnError(cudnnStatus_t err, const char* expr, const char* file, int line) {
  std::string msg =
      absl::StrCat(file, ":", line, ": ", expr, " failed: ", cudnnGetErrorString(err));
  if (const std::string last = CudnnLastError(); !last.empty())
    absl::StrAppend(&msg, " [cuDNN: ", last, "]");
  if (err == CUDNN_STATUS_ALLOC_FAILED) return OutOfMemoryError(msg);
  if (err == CUDNN_STATUS_NOT_SUPPORTED) return absl::UnimplementedError(msg);
  return absl::InternalError(msg);
}

inline absl::Status CublasError(cublasStatus_t err, const char* expr, const char* file, int line) {
  std::string msg =
      absl::StrCat(file, ":", line, ": ", expr, " failed: ", cublasGetStatusName(err), " (",
                   cublasGetStatusString(err), ")");
  if (err == CUBLAS_STATUS_ALLOC_FAILED) return OutOfMemoryError(msg);
  if (err == CUBLAS_STATUS_NOT_SUPPORTED) return absl::UnimplementedError(msg);
  return absl::InternalError(msg);
}

inline absl::Status NcclError(ncclResult_t err, const char* expr, const char* file, int line) {
  return absl::InternalError(
      absl::StrCat(file, ":", line, ": ", expr, " failed: ", ncclGetErrorString(err)));
}

}  // namespace cnnbench

#define CUDA_RETURN_IF_ERROR(expr)                                                     \
  do {                                                                                 \
    cudaError_t cnnbench_err_ = (expr);                                                \
    if (cnnbench_err_ != cudaSuccess)                                                  \
      return ::cnnbench::CudaError(cnnbench_err_, #expr, __FILE__, __LINE__);          \
  } while (0)

#define CUDNN_RETURN_IF_ERROR(expr)                                                    \
  do {                                                                                 \
    cudnnStatus_t cnnbench_err_ = (expr);                                              \
    if (cnnbench_err_ != CUDNN_STATUS_SUCCESS)                                         \
      return ::cnnbench::CudnnError(cnnbench_err_, #expr, __FILE__, __LINE__);         \
  } while (0)

#define CUBLAS_RETURN_IF_ERROR(expr)                                                   \
  do {                                                                                 \
    cublasStatus_t cnnbench_err_ = (expr);                                             \
    if (cnnbench_err_ != CUBLAS_STATUS_SUCCESS)                                        \
      return ::cnnbench::CublasError(cnnbench_err_, #expr, __FILE__, __LINE__);        \
  } while (0)

#define NCCL_RETURN_IF_ERROR(expr)                                                     \
  do {                                                                                 \
    ncclResult_t cnnbench_err_ = (expr);                                               \
    if (cnnbench_err_ != ncclSuccess)                                                  \
      return ::cnnbench::NcclError(cnnbench_err_, #expr, __FILE__, __LINE__);          \
  } while (0)

#endif  // CNNBENCH_CORE_CUDA_STATUS_H_
