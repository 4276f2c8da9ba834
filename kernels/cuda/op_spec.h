// Input-spec resolution shared by the cuda backend's activation ops: a
// producer's plain spec is read as it is; without one, the precision's
// activation layout (ActivationLayout) is used. CUDA builds only.
#ifndef CNNBENCH_KERNELS_CUDA_OP_SPEC_H_
#define CNNBENCH_KERNELS_CUDA_OP_SPEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kernels/cuda/common.h"
#include "kernels/cuda/op_math.h"
#include "kernels/desc.h"

namespace cnnbench::cuda {

// The spec input `index` is read as: inputs[index] when given (plain, the
// kernel's dtype, as many elements as `shape`), else a dense spec of `shape`
// in the activation layout. Errors name `what`.
inline absl::StatusOr<TensorSpec> ResolveInput(const std::string& what, const Context& context,
                                               const KernelOptions& options, const Inputs& inputs,
                                               size_t index, const Shape& shape) {
  if (index >= inputs.size())
    return DenseSpec(options.dtype, shape, ActivationLayout(context, options));
  const TensorSpec& given = inputs[index];
  if (!given.is_plain())
    return absl::UnimplementedError(absl::StrCat("unsupported: ", what, ": input ", index, " ",
                                                 given.DebugString(),
                                                 " (the cuda backend's layouts are plain)"));
  if (given.dtype != options.dtype || given.shape.num_elements() != shape.num_elements())
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": input ", index, " spec ", given.DebugString(), " does not fit"));
  return given;
}

// The input count `expected`, or an error naming `what` (empty: none given).
inline absl::Status CheckInputCount(const std::string& what, const Inputs& inputs,
                                    size_t expected) {
  if (inputs.empty() || inputs.size() == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": takes ", expected, " inputs, got ", inputs.size()));
}

inline bool IsNhwc(const TensorSpec& spec) { return spec.layout == Layout::kNHWC; }

// `dims` stored as `spec` says (NHWC or row-major NCHW).
inline ActivationGeometry GeometryOf(const Dims4& dims, const TensorSpec& spec) {
  ActivationGeometry g;
  g.n = dims.n;
  g.c = dims.c;
  g.h = dims.h;
  g.w = dims.w;
  g.nhwc = IsNhwc(spec);
  return g;
}

// The layout an output of `dims` takes after an input stored as `input`.
inline TensorSpec OutputLike(const TensorSpec& input, const Dims4& dims) {
  return DenseSpec(input.dtype, dims.shape(), IsNhwc(input) ? Layout::kNHWC : Layout::kNCHW);
}

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_OP_SPEC_H_
