// Not built yet: the backend reports these ops as unsupported.
#include "absl/strings/str_cat.h"
#include "kernels/cuda/ops.h"

namespace cnnbench::cuda {

KernelOr CreateFc(ContextPtr, const FcDesc& desc, const KernelOptions&, const Inputs&) {
  return NotBuiltYet(absl::StrCat("fully connected ", desc.ToString()));
}

KernelOr CreateGemm(ContextPtr, const GemmDesc& desc, const KernelOptions&, const Inputs&) {
  return NotBuiltYet(absl::StrCat("gemm ", desc.ToString()));
}

}  // namespace cnnbench::cuda
