// Reference inverted dropout: y = x * mask / (1 - rate) in training, y = x
// in inference; the mask depends only on the training-call count.
#include <cstdint>

#include "kernels/reference/common.h"
#include "kernels/reference/dropout_mask.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace reference {
namespace {

template <typename T>
class DropoutKernel final : public ReferenceKernel {
 public:
  DropoutKernel(const DropoutDesc& d, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)), d_(d) {}

 private:
  absl::Status RunForward(const KernelArgs& a) override {
    const T* x = static_cast<const T*>(a.x[0]);
    T* y = static_cast<T*>(a.y);
    const int64_t count = d_.dims.elements();
    if (!a.training) {
      for (int64_t i = 0; i < count; ++i) y[i] = x[i];
      return absl::OkStatus();
    }
    uint8_t* mask = static_cast<uint8_t*>(a.saved);  // 1 = kept, per element
    const double keep_scale = 1.0 / (1.0 - d_.rate);
    for (int64_t i = 0; i < count; ++i) {
      const bool keep = DropoutKeeps(calls_, static_cast<uint64_t>(i), d_.rate);
      mask[i] = keep ? 1 : 0;
      y[i] = keep ? static_cast<T>(static_cast<double>(x[i]) * keep_scale) : T(0);
    }
    ++calls_;
    return absl::OkStatus();
  }

  absl::Status RunBackwardData(const KernelArgs& a) override {
    if (a.dx[0] == nullptr) return absl::OkStatus();
    const T* dy = static_cast<const T*>(a.dy);
    T* dx = static_cast<T*>(a.dx[0]);
    const int64_t count = d_.dims.elements();
    if (!a.training) {  // the forward was the identity
      for (int64_t i = 0; i < count; ++i) dx[i] = dy[i];
      return absl::OkStatus();
    }
    const uint8_t* mask = static_cast<const uint8_t*>(a.saved);
    const double keep_scale = 1.0 / (1.0 - d_.rate);
    for (int64_t i = 0; i < count; ++i)
      dx[i] = mask[i] ? static_cast<T>(static_cast<double>(dy[i]) * keep_scale) : T(0);
    return absl::OkStatus();
  }

  const DropoutDesc d_;
  uint64_t calls_ = 0;  // training forwards so far: the mask's key
};

}  // namespace

KernelOr CreateDropout(const DropoutDesc& desc, DType dtype,
                       const std::vector<TensorSpec>& inputs) {
  KernelSignature sig;
  auto resolved =
      ResolveInputs(desc.ToString(), inputs, {TensorSpec::Plain(dtype, desc.dims.shape())});
  if (!resolved.ok()) return resolved.status();
  sig.inputs = *std::move(resolved);
  sig.output = TensorSpec::Plain(dtype, desc.dims.shape());
  sig.saved_bytes = static_cast<size_t>(desc.dims.elements());  // one byte per mask element
  sig.backward_reads_inputs = false;
  sig.backward_reads_output = false;
  return MakeTyped<DropoutKernel>(dtype, desc, std::move(sig));
}

}  // namespace reference
}  // namespace cnnbench
