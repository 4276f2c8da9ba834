// The reference kernels' shared binding checks and input-spec resolution.
#include "kernels/reference/common.h"

#include "core/status.h"

namespace cnnbench {
namespace reference {
namespace {

// Checks a list of bindings: `count` entries, none null unless `nullable`.
// (No temporaries: this runs inside every call, which must not allocate.)
template <typename P>
absl::Status CheckList(absl::string_view call, absl::string_view name,
                       const std::vector<P>& pointers, size_t count, bool nullable,
                       absl::string_view desc) {
  if (pointers.size() != count)
    return absl::InvalidArgumentError(absl::StrCat(desc, ": ", call, " needs ", count, " ", name,
                                                   " buffer(s), got ", pointers.size()));
  if (!nullable)
    for (size_t i = 0; i < pointers.size(); ++i)
      if (pointers[i] == nullptr)
        return absl::InvalidArgumentError(
            absl::StrCat(desc, ": ", call, ": ", name, "[", i, "] is null"));
  return absl::OkStatus();
}

}  // namespace

ReferenceKernel::ReferenceKernel(std::string desc, KernelSignature signature)
    : desc_(std::move(desc)) {
  signature_ = std::move(signature);
}

absl::Status ReferenceKernel::Error(absl::string_view what) const {
  return absl::InvalidArgumentError(absl::StrCat(desc_, ": ", what));
}

absl::Status ReferenceKernel::Forward(const KernelArgs& args) {
  const KernelSignature& sig = signature();
  RETURN_IF_ERROR(CheckList("Forward", "x", args.x, sig.inputs.size(), false, desc_));
  RETURN_IF_ERROR(CheckList("Forward", "params", args.params, sig.params.size(), false, desc_));
  RETURN_IF_ERROR(CheckList("Forward", "state", args.state, sig.state.size(), false, desc_));
  if (args.y == nullptr) return Error("Forward: y is null");
  // An inference forward may leave `saved` out: nothing will read it.
  if (args.training && sig.saved_bytes > 0 && args.saved == nullptr)
    return Error("Forward: training needs the saved buffer");
  return RunForward(args);
}

absl::Status ReferenceKernel::BackwardData(const KernelArgs& args) {
  const KernelSignature& sig = signature();
  RETURN_IF_ERROR(CheckList("BackwardData", "dx", args.dx, sig.inputs.size(), true, desc_));
  if (sig.backward_reads_inputs)
    RETURN_IF_ERROR(CheckList("BackwardData", "x", args.x, sig.inputs.size(), false, desc_));
  if (sig.backward_reads_output && args.y == nullptr) return Error("BackwardData: y is null");
  RETURN_IF_ERROR(
      CheckList("BackwardData", "params", args.params, sig.params.size(), false, desc_));
  if (backward_reads_dy_ && args.dy == nullptr) {
    if (!sig.sums_output_gradient || args.dy_parts.empty())
      return Error("BackwardData: dy is null");
    for (const void* part : args.dy_parts)
      if (part == nullptr) return Error("BackwardData: a dy part is null");
  }
  if (sig.saved_bytes > 0 && args.saved == nullptr)
    return Error("BackwardData: the saved buffer is null");
  return RunBackwardData(args);
}

absl::Status ReferenceKernel::BackwardWeights(const KernelArgs& args) {
  const KernelSignature& sig = signature();
  if (sig.params.empty()) return absl::OkStatus();
  RETURN_IF_ERROR(
      CheckList("BackwardWeights", "dparams", args.dparams, sig.params.size(), false, desc_));
  if (sig.backward_reads_inputs)
    RETURN_IF_ERROR(CheckList("BackwardWeights", "x", args.x, sig.inputs.size(), false, desc_));
  if (args.dy == nullptr) return Error("BackwardWeights: dy is null");
  if (sig.saved_bytes > 0 && args.saved == nullptr)
    return Error("BackwardWeights: the saved buffer is null");
  return RunBackwardWeights(args);
}

absl::StatusOr<KernelSignature> SameShapeSignature(absl::string_view desc, DType dtype,
                                                   const Shape& shape,
                                                   const std::vector<TensorSpec>& given) {
  KernelSignature sig;
  ASSIGN_OR_RETURN_AS_IS(sig.inputs, ResolveInputs(desc, given, {TensorSpec::Plain(dtype, shape)}));
  sig.output = TensorSpec::Plain(dtype, shape);
  return sig;
}

absl::StatusOr<std::vector<TensorSpec>> ResolveInputs(absl::string_view desc,
                                                      const std::vector<TensorSpec>& given,
                                                      const std::vector<TensorSpec>& expected,
                                                      bool flatten) {
  if (given.empty()) return expected;
  if (given.size() != expected.size())
    return absl::InvalidArgumentError(absl::StrCat(desc, ": takes ", expected.size(),
                                                   " input(s), got ", given.size(), " spec(s)"));
  std::vector<TensorSpec> out;
  for (size_t i = 0; i < given.size(); ++i) {
    const TensorSpec& g = given[i];
    const TensorSpec& e = expected[i];
    if (!g.is_plain() || g.layout == Layout::kNHWC)
      return absl::UnimplementedError(
          absl::StrCat("unsupported: reference backend reads plain row-major layouts only; ", desc,
                       " input ", i, " is ", g.DebugString()));
    if (g.dtype != e.dtype)
      return absl::InvalidArgumentError(absl::StrCat(desc, ": input ", i, " is ", g.DebugString(),
                                                     " but the kernel needs ", DTypeName(e.dtype)));
    bool shape_ok = g.shape == e.shape;
    // fc and softmax_xent read an (N,C,H,W) activation as (N, C*H*W).
    if (!shape_ok && flatten && g.shape.rank() == 4 && e.shape.rank() == 2)
      shape_ok = g.shape[0] == e.shape[0] && g.shape[1] * g.shape[2] * g.shape[3] == e.shape[1];
    if (!shape_ok)
      return absl::InvalidArgumentError(
          absl::StrCat(desc, ": input ", i, " has shape ", g.shape.ToString(),
                       " but the descriptor needs ", e.shape.ToString()));
    out.push_back(g);
  }
  return out;
}

absl::Status UnsupportedDType(absl::string_view desc, DType dtype) {
  return absl::UnimplementedError(absl::StrCat("unsupported: reference backend has no ",
                                               DTypeName(dtype), " kernels (fp32, fp64) for ",
                                               desc));
}

}  // namespace reference
}  // namespace cnnbench
