// CreateCudaBackend in builds without CUDA.
#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_backend.h"

namespace cnnbench {

absl::StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(const Device& device,
                                                           const CudaBackendOptions&) {
  return absl::UnimplementedError(absl::StrCat(
      "unsupported: the cuda backend on ", device.ToString(),
      " (this build has no CUDA: no toolkit found, or --config=nocuda)"));
}

}  // namespace cnnbench
