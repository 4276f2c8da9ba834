#include "kernels/backends.h"

#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_backend.h"

namespace cnnbench {

absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(absl::string_view name,
                                                       const Device& device) {
  if (device.is_cuda()) {
    if (name == "cuda") return CreateCudaBackend(device);
    return absl::UnimplementedError(absl::StrCat("unsupported: backend '", name, "' on ",
                                                 device.ToString(), " (GPUs run 'cuda')"));
  }
  if (name == "cuda")
    return absl::UnimplementedError(
        absl::StrCat("unsupported: backend 'cuda' on ", device.ToString(), " (it runs on cuda:N)"));
  if (name == "reference") return CreateReferenceBackend();
  if (name == "onednn") return CreateOneDnnBackend();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown backend '", name, "' (known: reference, onednn, cuda)"));
}

}  // namespace cnnbench
