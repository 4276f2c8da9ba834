// Not built yet: the backend reports these ops as unsupported.
#include "absl/strings/str_cat.h"
#include "kernels/cuda/ops.h"

namespace cnnbench::cuda {

KernelOr CreateConcat(ContextPtr, const ConcatDesc& desc, const KernelOptions&, const Inputs&) {
  return NotBuiltYet(absl::StrCat("concat ", desc.ToString()));
}

KernelOr CreateAdd(ContextPtr, const AddDesc& desc, const KernelOptions&, const Inputs&) {
  return NotBuiltYet(absl::StrCat("add ", desc.ToString()));
}

}  // namespace cnnbench::cuda
