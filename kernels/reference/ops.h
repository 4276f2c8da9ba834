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

KernelOr CreateConv(const ConvDesc& desc, DType dtype, const std::vector<TensorSpec>& inputs);
KernelOr CreatePool(const PoolDesc& desc, DType dtype, const std::vector<TensorSpec>& inputs);
KernelOr CreateFc(const FcDesc& desc, DType dtype, const std::vector<TensorSpec>& inputs);
KernelOr CreateBatchNorm(const BatchNormDesc& desc, DType dtype,
                         const std::vector<TensorSpec>& inputs);
KernelOr CreateRelu(const ReluDesc& desc, DType dtype, const std::vector<TensorSpec>& inputs);
KernelOr CreateAdd(const AddDesc& desc, DType dtype, const std::vector<TensorSpec>& inputs);
KernelOr CreateLrn(const LrnDesc& desc, DType dtype, const std::vector<TensorSpec>& inputs);
KernelOr CreateGemm(const GemmDesc& desc, DType dtype, const std::vector<TensorSpec>& inputs);
KernelOr CreateDropout(const DropoutDesc& desc, const KernelOptions& options,
                       const std::vector<TensorSpec>& inputs);
KernelOr CreateConcat(const ConcatDesc& desc, DType dtype, const std::vector<TensorSpec>& inputs);
KernelOr CreateSoftmaxXent(const SoftmaxXentDesc& desc, DType dtype,
                           const std::vector<TensorSpec>& inputs);
absl::StatusOr<std::unique_ptr<Optimizer>> CreateSgd(const SgdDesc& desc);

}  // namespace reference
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_REFERENCE_OPS_H_
