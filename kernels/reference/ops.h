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

KernelOr CreateOp(ContextPtr context, const ConvDesc& desc, const KernelOptions& options,
                  const Inputs& inputs);  // conv.cc
KernelOr CreateOp(ContextPtr context, const PoolDesc& desc, const KernelOptions& options,
                  const Inputs& inputs);  // pool.cc
KernelOr CreateOp(ContextPtr context, const FcDesc& desc, const KernelOptions& options,
                  const Inputs& inputs);  // fc.cc
KernelOr CreateOp(ContextPtr context, const GemmDesc& desc, const KernelOptions& options,
                  const Inputs& inputs);  // gemm.cc
KernelOr CreateOp(ContextPtr context, const BatchNormDesc& desc, const KernelOptions& options,
                  const Inputs& inputs);  // batch_norm.cc
KernelOr CreateOp(ContextPtr context, const ReluDesc& desc, const KernelOptions& options,
                  const Inputs& inputs);  // relu.cc
KernelOr CreateOp(ContextPtr context, const LrnDesc& desc, const KernelOptions& options,
                  const Inputs& inputs);  // lrn.cc
KernelOr CreateOp(ContextPtr context, const DropoutDesc& desc, const KernelOptions& options,
                  const Inputs& inputs);  // dropout.cc
KernelOr CreateOp(ContextPtr context, const ConcatDesc& desc, const KernelOptions& options,
                  const Inputs& inputs);  // concat_add.cc
KernelOr CreateOp(ContextPtr context, const AddDesc& desc, const KernelOptions& options,
                  const Inputs& inputs);  // concat_add.cc
KernelOr CreateOp(ContextPtr context, const SoftmaxXentDesc& desc, const KernelOptions& options,
                  const Inputs& inputs);  // softmax_xent.cc

absl::StatusOr<std::unique_ptr<Optimizer>> CreateSgd(const SgdDesc& desc);

}  // namespace reference
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_REFERENCE_OPS_H_
