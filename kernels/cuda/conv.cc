// Not built yet: the backend reports these ops as unsupported.
#include "absl/strings/str_cat.h"
#include "kernels/cuda/ops.h"

namespace cnnbench::cuda {

KernelOr CreateConv(ContextPtr, const ConvDesc& desc, const KernelOptions&, const Inputs&) {
  return NotBuiltYet(absl::StrCat("convolution ", desc.ToString()));
}

}  // namespace cnnbench::cuda
