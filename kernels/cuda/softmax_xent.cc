// Not built yet: the backend reports these ops as unsupported.
#include "absl/strings/str_cat.h"
#include "kernels/cuda/ops.h"

namespace cnnbench::cuda {

KernelOr CreateSoftmaxXent(ContextPtr, const SoftmaxXentDesc& desc, const KernelOptions&, const Inputs&) {
  return NotBuiltYet(absl::StrCat("softmax cross-entropy ", desc.ToString()));
}

}  // namespace cnnbench::cuda
