// The cuda backend's kernel constructors, one per operation (one file per
// family). Each checks the descriptor and the producers' specs, chooses
// algorithms and sizes workspaces once, and fills in the signature;
// Forward/Backward only enqueue on the context's stream.
#ifndef CNNBENCH_KERNELS_CUDA_OPS_H_
#define CNNBENCH_KERNELS_CUDA_OPS_H_

#include <memory>

#include "kernels/cuda/common.h"
#include "kernels/desc.h"

namespace cnnbench::cuda {

using ContextPtr = std::shared_ptr<Context>;

KernelOr CreateConv(ContextPtr context, const ConvDesc& desc, const KernelOptions& options,
                    const Inputs& inputs);                                   // conv.cc
KernelOr CreateFc(ContextPtr context, const FcDesc& desc, const KernelOptions& options,
                  const Inputs& inputs);                                     // gemm.cc
KernelOr CreateGemm(ContextPtr context, const GemmDesc& desc, const KernelOptions& options,
                    const Inputs& inputs);                                   // gemm.cc
KernelOr CreatePool(ContextPtr context, const PoolDesc& desc, const KernelOptions& options,
                    const Inputs& inputs);                                   // pool.cc
KernelOr CreateBatchNorm(ContextPtr context, const BatchNormDesc& desc,
                         const KernelOptions& options, const Inputs& inputs);  // batch_norm.cc
KernelOr CreateRelu(ContextPtr context, const ReluDesc& desc, const KernelOptions& options,
                    const Inputs& inputs);                                   // relu.cc
KernelOr CreateLrn(ContextPtr context, const LrnDesc& desc, const KernelOptions& options,
                   const Inputs& inputs);                                    // lrn.cc
KernelOr CreateDropout(ContextPtr context, const DropoutDesc& desc, const KernelOptions& options,
                       const Inputs& inputs);                                // dropout.cc
KernelOr CreateConcat(ContextPtr context, const ConcatDesc& desc, const KernelOptions& options,
                      const Inputs& inputs);                                 // concat_add.cc
KernelOr CreateAdd(ContextPtr context, const AddDesc& desc, const KernelOptions& options,
                   const Inputs& inputs);                                    // concat_add.cc
KernelOr CreateSoftmaxXent(ContextPtr context, const SoftmaxXentDesc& desc,
                           const KernelOptions& options, const Inputs& inputs);  // softmax_xent.cc

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_OPS_H_
