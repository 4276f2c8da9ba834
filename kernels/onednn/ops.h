// The oneDNN backend's kernel constructors, one per operation. Each checks
// the producers' specs (Backend::Create has checked the descriptor),
// creates every primitive and
// memory object, and fills in the signature; Forward/Backward only point
// memories at buffers and execute.
#ifndef CNNBENCH_KERNELS_ONEDNN_OPS_H_
#define CNNBENCH_KERNELS_ONEDNN_OPS_H_

#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/status.h"
#include "kernels/desc.h"
#include "kernels/kernel.h"
#include "kernels/onednn/common.h"

namespace cnnbench {
namespace onednn {

using KernelOr = absl::StatusOr<std::unique_ptr<Kernel>>;
using Inputs = std::vector<TensorSpec>;
using ContextPtr = std::shared_ptr<Context>;

// One constructor per operation, of the shape every backend shares.
#include "kernels/op_constructors.inc"  // NOLINT: declarations in this namespace

// The body of every constructor above: the kernel made from (context, desc)
// (and the options, where its constructor takes them), then its Init(desc,
// options, inputs), with oneDNN's exceptions turned into statuses.
template <typename K, typename Desc>
KernelOr MakeKernel(ContextPtr context, const Desc& desc, const KernelOptions& options,
                    const Inputs& inputs) {
  std::unique_ptr<K> kernel = ConstructKernel<K>(std::move(context), desc, options);
  RETURN_IF_ERROR(Guarded(desc.ToString(), [&] { return kernel->Init(desc, options, inputs); }));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

absl::StatusOr<std::unique_ptr<Optimizer>> CreateSgd(const SgdDesc& desc);

// Average pooling over the whole plane with no padding (global_pool.cc):
// the backend's own loops over the input's layout as given.
bool IsGlobalAveragePool(const PoolDesc& desc);
KernelOr CreateGlobalAveragePool(ContextPtr context, const PoolDesc& desc,
                                 const KernelOptions& options, const Inputs& inputs);

// Batch norm with a fused activation whose gradient needs its input
// (ActivationMasks is false; bn_activation.cc): the backend's own loops.
KernelOr CreateBatchNormActivation(ContextPtr context, const BatchNormDesc& desc,
                                   const KernelOptions& options, const Inputs& inputs);

}  // namespace onednn
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ONEDNN_OPS_H_
