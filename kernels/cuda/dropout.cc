// Not built yet: the backend reports these ops as unsupported.
#include "absl/strings/str_cat.h"
#include "kernels/cuda/ops.h"

namespace cnnbench::cuda {

KernelOr CreateDropout(ContextPtr, const DropoutDesc& desc, const KernelOptions&, const Inputs&) {
  return NotBuiltYet(absl::StrCat("dropout ", desc.ToString()));
}

}  // namespace cnnbench::cuda
