// Reference inverted dropout: y = x * mask / (1 - rate) in training, y = x
// in inference; the mask is core/random.h's, keyed by (seed, node, step) and
// drawn per global element index.
#include <cstdint>

#include "core/random.h"
#include "core/status.h"
#include "kernels/reference/common.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace reference {
namespace {

template <typename T>
class DropoutKernel final : public ReferenceKernel {
 public:
  DropoutKernel(const DropoutDesc& d, const KernelOptions& options, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)),
        d_(d),
        seed_(options.seed),
        node_(options.node),
        first_index_(static_cast<uint64_t>(options.batch_offset) *
                     static_cast<uint64_t>(d.dims.elements() / d.dims.n)) {}

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
    const uint64_t key = DropoutKey(seed_, node_, a.step != nullptr ? *a.step : calls_);
    for (int64_t i = 0; i < count; ++i) {
      const bool keep = DropoutKeeps(key, first_index_ + static_cast<uint64_t>(i), d_.rate);
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
  const uint64_t seed_, node_;
  const uint64_t first_index_;  // global index of this batch's first element
  uint64_t calls_ = 0;          // training forwards so far: the step when none is given
};

}  // namespace

KernelOr CreateOp(ContextPtr, const DropoutDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  const DType dtype = options.dtype;
  ASSIGN_OR_RETURN_AS_IS(KernelSignature sig,
                         SameShapeSignature(desc.ToString(), dtype, desc.dims.shape(), inputs));
  sig.saved_bytes = static_cast<size_t>(desc.dims.elements());  // one byte per mask element
  sig.backward_reads_inputs = false;
  sig.backward_reads_output = false;
  if (dtype == DType::kF64)
    return std::unique_ptr<Kernel>(new DropoutKernel<double>(desc, options, std::move(sig)));
  if (dtype == DType::kF32)
    return std::unique_ptr<Kernel>(new DropoutKernel<float>(desc, options, std::move(sig)));
  return UnsupportedDType(desc.ToString(), dtype);
}

}  // namespace reference
}  // namespace cnnbench
