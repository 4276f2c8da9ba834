// The oneDNN backend's kernel constructors, one per operation. Each checks
// the descriptor and the producers' specs, creates every primitive and
// memory object, and fills in the signature; Forward/Backward only point
// memories at buffers and execute.
#ifndef CNNBENCH_KERNELS_ONEDNN_OPS_H_
#define CNNBENCH_KERNELS_ONEDNN_OPS_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/desc.h"
#include "kernels/kernel.h"
#include "kernels/onednn/common.h"

namespace cnnbench {
namespace onednn {

using KernelOr = absl::StatusOr<std::unique_ptr<Kernel>>;
using Inputs = std::vector<TensorSpec>;

KernelOr CreateConv(std::shared_ptr<Context> context, const ConvDesc& desc, DType dtype,
                    const Inputs& inputs);
KernelOr CreatePool(std::shared_ptr<Context> context, const PoolDesc& desc, DType dtype,
                    const Inputs& inputs);
KernelOr CreateFc(std::shared_ptr<Context> context, const FcDesc& desc, DType dtype,
                  const Inputs& inputs);
KernelOr CreateBatchNorm(std::shared_ptr<Context> context, const BatchNormDesc& desc, DType dtype,
                         const Inputs& inputs);
KernelOr CreateRelu(std::shared_ptr<Context> context, const ReluDesc& desc, DType dtype,
                    const Inputs& inputs);
KernelOr CreateLrn(std::shared_ptr<Context> context, const LrnDesc& desc, DType dtype,
                   const Inputs& inputs);
KernelOr CreateDropout(std::shared_ptr<Context> context, const DropoutDesc& desc,
                       const KernelOptions& options,
                       const Inputs& inputs);
KernelOr CreateConcat(std::shared_ptr<Context> context, const ConcatDesc& desc, DType dtype,
                      const Inputs& inputs);
KernelOr CreateAdd(std::shared_ptr<Context> context, const AddDesc& desc, DType dtype,
                   const Inputs& inputs);
KernelOr CreateGemm(std::shared_ptr<Context> context, const GemmDesc& desc, DType dtype,
                    const Inputs& inputs);
KernelOr CreateSoftmaxXent(std::shared_ptr<Context> context, const SoftmaxXentDesc& desc,
                           DType dtype, const Inputs& inputs);

absl::StatusOr<std::unique_ptr<Optimizer>> CreateSgd(const SgdDesc& desc);

}  // namespace onednn
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ONEDNN_OPS_H_
