// The cuda backend's kernel constructors, one per operation (one file per
// family). Each checks the descriptor and the producers' specs, chooses
// algorithms and sizes workspaces once, and fills in the signature;
// Forward/Backward only enqueue on the context's stream.
#ifndef CNNBENCH_KERNELS_CUDA_OPS_H_
#define CNNBENCH_KERNELS_CUDA_OPS_H_

#include <memory>
#include <type_traits>
#include <utility>

#include "core/status.h"
#include "kernels/cuda/common.h"
#include "kernels/desc.h"

namespace cnnbench::cuda {

using ContextPtr = std::shared_ptr<Context>;

// One constructor per operation, of the shape every backend shares
// (kernel.h, CreateOpKernel).
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

// The body of every constructor above: the kernel made from (context, desc)
// (and the options, where its constructor takes them), then its
// Init(options, inputs).
template <typename K, typename Desc>
KernelOr MakeKernel(ContextPtr context, const Desc& desc, const KernelOptions& options,
                    const Inputs& inputs) {
  std::unique_ptr<K> kernel;
  if constexpr (std::is_constructible_v<K, ContextPtr, const Desc&, const KernelOptions&>) {
    kernel = std::make_unique<K>(std::move(context), desc, options);
  } else {
    kernel = std::make_unique<K>(std::move(context), desc);
  }
  RETURN_IF_ERROR(kernel->Init(options, inputs));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_OPS_H_
