// The cuda backend's kernel constructors, one per operation (one file per
// family). Each checks the descriptor and the producers' specs, chooses
// algorithms and sizes workspaces once, and fills in the signature;
// Forward/Backward only enqueue on the context's stream.
#ifndef CNNBENCH_KERNELS_CUDA_OPS_H_
#define CNNBENCH_KERNELS_CUDA_OPS_H_

#include <memory>
#include <utility>

#include "core/status.h"
#include "kernels/cuda/common.h"
#include "kernels/desc.h"

namespace cnnbench::cuda {

using ContextPtr = std::shared_ptr<Context>;

// One constructor per operation, of the shape every backend shares.
#include "kernels/op_constructors.inc"  // NOLINT: declarations in this namespace

// The body of every constructor above: the kernel made from (context, desc)
// (and the options, where its constructor takes them), then its
// Init(options, inputs).
template <typename K, typename Desc>
KernelOr MakeKernel(ContextPtr context, const Desc& desc, const KernelOptions& options,
                    const Inputs& inputs) {
  std::unique_ptr<K> kernel = ConstructKernel<K>(std::move(context), desc, options);
  RETURN_IF_ERROR(kernel->Init(options, inputs));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_OPS_H_
