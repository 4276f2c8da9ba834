#include "kernels/kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <variant>

#include "absl/strings/str_cat.h"
#include "core/status.h"

namespace cnnbench {

TensorSpec TensorSpec::Plain(DType dtype, Shape shape) {
  TensorSpec spec;
  spec.dtype = dtype;
  spec.layout = shape.rank() == 4 ? Layout::kNCHW : shape.rank() == 2 ? Layout::kNC : Layout::kX;
  spec.bytes = static_cast<size_t>(shape.num_elements()) * SizeOf(dtype);
  spec.shape = std::move(shape);
  return spec;
}

std::string TensorSpec::DebugString() const {
  return absl::StrCat(DTypeName(dtype), shape.ToString(), " ", LayoutName(layout), " ", bytes, "B");
}

TensorSpec Backend::MasterSpec(const TensorSpec& working) const {
  return TensorSpec::Plain(DType::kF32, working.shape);
}

bool Backend::SameLayout(const TensorSpec& a, const TensorSpec& b) const {
  if (a.dtype != b.dtype || a.shape != b.shape || a.layout != b.layout || a.bytes != b.bytes)
    return false;
  if (a.is_plain()) return true;
  return a.native == b.native;
}

KernelOptions KernelOptions::ForDType(DType dtype) {
  KernelOptions options;
  options.dtype = dtype;
  options.precision = dtype == DType::kF16    ? Precision::kFp16
                      : dtype == DType::kBF16 ? Precision::kBf16
                                              : Precision::kFp32;
  return options;
}

KernelOptions KernelOptions::ForPrecision(Precision precision) {
  KernelOptions options;
  options.precision = precision;
  options.dtype = ActivationType(precision);
  return options;
}

absl::StatusOr<std::unique_ptr<Kernel>> Backend::Create(const OpDesc& desc,
                                                        const KernelOptions& options,
                                                        const std::vector<TensorSpec>& inputs) {
  // Passed on as they are: "unsupported: ..." is what a user reads first.
  RETURN_IF_ERROR_AS_IS(Supports(desc, options));
  return CreateKernel(desc, options, inputs);
}

absl::Status Backend::Supports(const OpDesc& desc, const KernelOptions& options) const {
  const std::string what = OpDescToString(desc);
  if (absl::Status status = std::visit([](const auto& d) { return d.Validate(); }, desc);
      !status.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("bad descriptor '", what, "': ", status.message()));
  // A storage type some precision uses must be that precision's. (fp64 is
  // the reference's exact mode under fp32 math; other types are for the
  // backend to refuse.)
  const bool precision_type =
      options.dtype == DType::kF32 || options.dtype == DType::kF16 || options.dtype == DType::kBF16;
  if (precision_type && options.dtype != ActivationType(options.precision))
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": precision ", PrecisionName(options.precision),
                     " does not store activations as ", DTypeName(options.dtype)));
  if (options.batch_offset < 0)
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": negative batch offset ", options.batch_offset));
  if (const auto* conv = std::get_if<ConvDesc>(&desc);
      conv != nullptr && conv->residual && !options.forward_only)
    return absl::UnimplementedError(
        absl::StrCat("unsupported: a convolution's residual input (_add) runs forward only, in "
                     "inference plans; no backend has its backward (",
                     what, ")"));
  return CheckSupported(desc, options);
}

absl::StatusOr<std::unique_ptr<Optimizer>> Backend::CreateOptimizer(const SgdDesc& desc) {
  if (absl::Status status = desc.Validate(); !status.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("bad descriptor '", desc.ToString(), "': ", status.message()));
  return CreateSgd(desc);
}

absl::Status Backend::Fill(void* dst, int byte, size_t bytes) {
  return MemsetAsync(dst, byte, bytes, stream());
}

absl::Status Backend::Copy(void* dst, const void* src, size_t bytes) {
  return CopyAsync(dst, src, bytes, stream());
}

namespace {

template <typename T>
void AddInto(const std::vector<const void*>& srcs, size_t count, void* out) {
  T* dst = static_cast<T*>(out);
  const T* first = static_cast<const T*>(srcs[0]);
  if (dst != first) std::memcpy(dst, first, count * sizeof(T));
  for (size_t k = 1; k < srcs.size(); ++k) {
    const T* src = static_cast<const T*>(srcs[k]);
    for (size_t i = 0; i < count; ++i) dst[i] += src[i];
  }
}

// bf16 sums in fp32, rounded once per element at the end.
void AddIntoBf16(const std::vector<const void*>& srcs, size_t count, void* out) {
  uint16_t* dst = static_cast<uint16_t*>(out);
  for (size_t i = 0; i < count; ++i) {
    float sum = 0;
    for (const void* s : srcs) sum += BFloat16ToFloat(BFloat16{static_cast<const uint16_t*>(s)[i]});
    dst[i] = FloatToBFloat16(sum).bits;
  }
}

}  // namespace

absl::Status Backend::AddN(const TensorSpec& spec, const std::vector<const void*>& srcs,
                           void* dst) {
  if (srcs.empty() || dst == nullptr)
    return absl::InvalidArgumentError(
        absl::StrCat("add_n of ", spec.DebugString(), ": no inputs or no output"));
  for (size_t i = 0; i < srcs.size(); ++i)
    if (srcs[i] == nullptr)
      return absl::InvalidArgumentError(
          absl::StrCat("add_n of ", spec.DebugString(), ": null input ", i));
  return SumInto(spec, srcs, dst);
}

absl::Status Backend::SumInto(const TensorSpec& spec, const std::vector<const void*>& srcs,
                              void* dst) {
  if (!device().is_cpu())
    return absl::UnimplementedError(
        absl::StrCat("unsupported: add_n on ", device().ToString(), " by backend ", name()));
  // Elementwise over the stored bytes: a blocked layout's padding sums zeros.
  const size_t count = spec.bytes / SizeOf(spec.dtype);
  switch (spec.dtype) {
    case DType::kF32:
      AddInto<float>(srcs, count, dst);
      return absl::OkStatus();
    case DType::kF64:
      AddInto<double>(srcs, count, dst);
      return absl::OkStatus();
    case DType::kBF16:
      AddIntoBf16(srcs, count, dst);
      return absl::OkStatus();
    default:
      return absl::UnimplementedError(absl::StrCat("unsupported: add_n of ", spec.DebugString()));
  }
}

absl::Status Backend::Upload(const TensorSpec& host, const void* src, const TensorSpec& to,
                             void* dst) {
  if (!host.is_plain())
    return absl::InvalidArgumentError(
        absl::StrCat("upload from ", host.DebugString(), ": host data must be plain"));
  return UploadChecked(host, src, to, dst);
}

absl::Status Backend::UploadChecked(const TensorSpec& host, const void* src, const TensorSpec& to,
                                    void* dst) {
  if (!device().is_cpu())
    return absl::UnimplementedError(
        absl::StrCat("unsupported: upload to ", device().ToString(), " by backend ", name()));
  return Reorder(host, src, to, dst);
}

absl::Status Backend::Download(const TensorSpec& from, const void* src, const TensorSpec& host,
                               void* dst) {
  if (!host.is_plain())
    return absl::InvalidArgumentError(
        absl::StrCat("download to ", host.DebugString(), ": host data must be plain"));
  return DownloadChecked(from, src, host, dst);
}

absl::Status Backend::DownloadChecked(const TensorSpec& from, const void* src,
                                      const TensorSpec& host, void* dst) {
  if (!device().is_cpu())
    return absl::UnimplementedError(
        absl::StrCat("unsupported: download from ", device().ToString(), " by backend ", name()));
  return Reorder(from, src, host, dst);
}

absl::Status ForwardOnlyError(absl::string_view what) {
  return absl::FailedPreconditionError(
      absl::StrCat(what,
                   ": this kernel was made forward only (KernelOptions::forward_only, an "
                   "inference plan) and has no backward passes"));
}

absl::Status Kernel::Backward(const KernelArgs& args) {
  if (std::any_of(args.dx.begin(), args.dx.end(), [](void* dx) { return dx != nullptr; }))
    RETURN_IF_ERROR(BackwardData(args));
  if (!signature_.params.empty()) RETURN_IF_ERROR(BackwardWeights(args));
  return absl::OkStatus();
}

absl::Status CheckUpdateArgs(const SgdDesc& desc, const UpdateArgs& args, bool writes_bf16_copies) {
  if (args.params == nullptr || args.grads == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(desc.ToString(), ": null params or grads"));
  if (desc.momentum != 0.0 && args.momentum == nullptr)
    return absl::InvalidArgumentError(
        absl::StrCat(desc.ToString(), ": momentum > 0 needs the momentum buffer"));
  if (args.num_bf16_copies < 0 || (args.num_bf16_copies > 0 && args.bf16_copies == nullptr))
    return absl::InvalidArgumentError(
        absl::StrCat(desc.ToString(), ": ", args.num_bf16_copies, " bf16 copies, list missing"));
  if (args.num_bf16_copies > 0 && !writes_bf16_copies)
    return absl::UnimplementedError(
        absl::StrCat(desc.ToString(), ": this optimizer does not write bf16 working copies"));
  int64_t end = 0;
  for (int c = 0; c < args.num_bf16_copies; ++c) {
    const Bf16Copy& copy = args.bf16_copies[c];
    if (copy.data == nullptr || copy.count <= 0 || copy.offset < end ||
        copy.count > desc.count - copy.offset)
      return absl::InvalidArgumentError(absl::StrCat(
          desc.ToString(), ": bf16 copy ", c, " (offset ", copy.offset, ", count ", copy.count,
          ") is empty, out of [0, ", desc.count, "), or overlaps or precedes the one before"));
    end = copy.offset + copy.count;
  }
  return absl::OkStatus();
}

absl::StatusOr<CpuUpdatePlan> PrepareCpuUpdate(const SgdDesc& desc, const UpdateArgs& args,
                                               bool writes_bf16_copies) {
  RETURN_IF_ERROR_AS_IS(CheckUpdateArgs(desc, args, writes_bf16_copies));
  CpuUpdatePlan plan;
  if (args.step != nullptr) ++*args.step;
  if (args.loss_scale != nullptr) {
    const float scale = *args.loss_scale;
    if (!(scale > 0) || !std::isfinite(scale))
      return absl::InvalidArgumentError(
          absl::StrCat(desc.ToString(), ": loss scale ", scale, " is not a positive number"));
    plan.inverse_scale = 1.0 / scale;
  }
  if (args.overflow != nullptr) {
    bool finite = true;
    for (int64_t i = 0; i < desc.count; ++i) finite &= std::isfinite(args.grads[i]);
    *args.overflow = finite ? 0 : 1;
    plan.skip = !finite;
  }
  // The scale for the next step (this update has read it already).
  if (args.good_steps != nullptr && args.loss_scale != nullptr && args.overflow != nullptr)
    AdjustLossScale(plan.skip, args.growth_interval, args.loss_scale, args.good_steps);
  return plan;
}

}  // namespace cnnbench
