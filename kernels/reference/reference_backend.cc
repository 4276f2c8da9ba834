// The reference Backend: validates a descriptor and hands it to its op's
// kernel constructor; the SGD optimizer; plain-layout Reorder (copies and
// fp32 <-> fp64 conversion).
#include "kernels/reference/reference_backend.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/reference/common.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace {

// Element type conversion of `count` values.
template <typename From, typename To>
void Convert(const void* src, void* dst, int64_t count) {
  const From* in = static_cast<const From*>(src);
  To* out = static_cast<To*>(dst);
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<To>(in[i]);
}

class ReferenceBackend final : public Backend {
 public:
  absl::string_view name() const override { return "reference"; }
  Device device() const override { return Device::Cpu(); }
  const Stream& stream() const override { return stream_; }

  absl::Status Reorder(const TensorSpec& from, const void* src, const TensorSpec& to,
                       void* dst) override {
    const std::string what = absl::StrCat("reorder ", from.DebugString(), " -> ", to.DebugString());
    // Every plain layout but NHWC is dense row-major in logical order.
    auto row_major = [](const TensorSpec& s) { return s.is_plain() && s.layout != Layout::kNHWC; };
    if (!row_major(from) || !row_major(to))
      return absl::UnimplementedError(
          absl::StrCat("unsupported: reference backend ", what, " (plain row-major only)"));
    if (from.shape != to.shape)
      return absl::InvalidArgumentError(absl::StrCat(what, ": shapes differ"));
    if (src == nullptr || dst == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(what, ": null buffer"));
    const int64_t count = from.shape.num_elements();
    if (from.dtype == to.dtype) {
      std::memcpy(dst, src, static_cast<size_t>(count) * SizeOf(from.dtype));
      return absl::OkStatus();
    }
    if (from.dtype == DType::kF32 && to.dtype == DType::kF64) {
      Convert<float, double>(src, dst, count);
      return absl::OkStatus();
    }
    if (from.dtype == DType::kF64 && to.dtype == DType::kF32) {
      Convert<double, float>(src, dst, count);
      return absl::OkStatus();
    }
    return absl::UnimplementedError(
        absl::StrCat("unsupported: reference backend ", what, " (fp32 <-> fp64 only)"));
  }

 protected:
  absl::StatusOr<std::unique_ptr<Optimizer>> CreateSgd(const SgdDesc& desc) override {
    return reference::CreateSgd(desc);
  }

  absl::Status CheckSupported(const OpDesc& desc, const KernelOptions& options) const override {
    // fp64 storage runs under fp32 math (see KernelOptions).
    if (options.dtype != DType::kF32 && options.dtype != DType::kF64)
      return reference::UnsupportedDType(OpDescToString(desc), options.dtype);
    if (options.precision == Precision::kTf32)
      return absl::UnimplementedError(
          absl::StrCat("unsupported: tf32 on the reference backend, which computes in double (",
                       OpDescToString(desc), ")"));
    // A fused activation's backward masks dy by y: the masking kinds only
    // (ActivationMasks); the others fuse in forward-only kernels, and in
    // batch norm, whose backward recomputes the pre-activation from x.
    if (!ActivationMasks(FusedActivation(desc)) && !options.forward_only &&
        !std::holds_alternative<BatchNormDesc>(desc))
      return absl::UnimplementedError(absl::StrCat(
          "unsupported: a fused ",
          absl::string_view(ActivationSuffix(FusedActivation(desc))).substr(1),
          " in training (its gradient needs x, which a fused op does not keep; the plan keeps "
          "the activation as a layer) (",
          OpDescToString(desc), ")"));
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<Kernel>> CreateKernel(
      const OpDesc& desc, const KernelOptions& options,
      const std::vector<TensorSpec>& inputs) override {
    return CreateOpKernel(context_, desc, options, inputs);
  }

 private:
  const Stream stream_ = Stream::Cpu();
  const reference::ContextPtr context_ = std::make_shared<reference::Context>();
};

}  // namespace

std::unique_ptr<Backend> CreateReferenceBackend() { return std::make_unique<ReferenceBackend>(); }

}  // namespace cnnbench
