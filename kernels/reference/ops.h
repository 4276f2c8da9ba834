// The reference backend's kernel constructors, one per op family (each in
// its own .cc). `inputs` are the producers' specs (empty: plain layouts).
#ifndef CNNBENCH_KERNELS_REFERENCE_OPS_H_
#define CNNBENCH_KERNELS_REFERENCE_OPS_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "kernels/desc.h"
#include "kernels/kernel.h"

namespace cnnbench {
namespace reference {

using KernelOr = absl::StatusOr<std::unique_ptr<Kernel>>;

// The reference backend keeps no state: its context is empty, there so
// that its constructors have the shape every backend's have (kernel.h,
// CreateOpKernel).
struct Context {};
using ContextPtr = std::shared_ptr<Context>;
using Inputs = std::vector<TensorSpec>;

#include "kernels/op_constructors.inc"  // NOLINT: declarations in this namespace

absl::StatusOr<std::unique_ptr<Optimizer>> CreateSgd(const SgdDesc& desc);

}  // namespace reference
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_REFERENCE_OPS_H_
