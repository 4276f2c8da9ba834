// Reference drop-path: in training y = x * s(n) per example, s(n) = 1 / p
// or 0 (kernels/drop_path.h: p from the step, the draw keyed by (seed,
// node, step) over the example's global index); the backward scales dy by
// the saved s. The identity in inference.
#include <cstdint>

#include "core/random.h"
#include "core/status.h"
#include "kernels/drop_path.h"
#include "kernels/reference/common.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace reference {
namespace {

template <typename T>
class DropPathKernel final : public ReferenceKernel {
 public:
  DropPathKernel(const DropPathDesc& d, const KernelOptions& options, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)),
        d_(d),
        seed_(options.seed),
        node_(options.node),
        first_example_(static_cast<uint64_t>(options.batch_offset)) {}

 private:
  absl::Status RunForward(const KernelArgs& a) override {
    const T* x = static_cast<const T*>(a.x[0]);
    T* y = static_cast<T*>(a.y);
    const int64_t per_example = d_.dims.elements() / d_.dims.n;
    if (!a.training) {
      for (int64_t i = 0; i < d_.dims.elements(); ++i) y[i] = x[i];
      return absl::OkStatus();
    }
    double* scale = static_cast<double*>(a.saved);  // per example: 1 / p or 0
    const uint64_t step = a.step != nullptr ? *a.step : calls_;
    const double p = DropPathKeepAt(d_.keep, d_.ramp_steps, step);
    const uint64_t key = DropoutKey(seed_, node_, step);
    for (int64_t n = 0; n < d_.dims.n; ++n) {
      scale[n] = DropPathScale(key, first_example_ + static_cast<uint64_t>(n), p);
      for (int64_t i = n * per_example; i < (n + 1) * per_example; ++i)
        y[i] = static_cast<T>(static_cast<double>(x[i]) * scale[n]);
    }
    ++calls_;
    return absl::OkStatus();
  }

  absl::Status RunBackwardData(const KernelArgs& a) override {
    if (a.dx[0] == nullptr) return absl::OkStatus();
    const T* dy = static_cast<const T*>(a.dy);
    T* dx = static_cast<T*>(a.dx[0]);
    const int64_t per_example = d_.dims.elements() / d_.dims.n;
    if (!a.training) {  // the forward was the identity
      for (int64_t i = 0; i < d_.dims.elements(); ++i) dx[i] = dy[i];
      return absl::OkStatus();
    }
    const double* scale = static_cast<const double*>(a.saved);
    for (int64_t n = 0; n < d_.dims.n; ++n)
      for (int64_t i = n * per_example; i < (n + 1) * per_example; ++i)
        dx[i] = static_cast<T>(static_cast<double>(dy[i]) * scale[n]);
    return absl::OkStatus();
  }

  const DropPathDesc d_;
  const uint64_t seed_, node_;
  const uint64_t first_example_;  // global index of this batch's first example
  uint64_t calls_ = 0;            // training forwards so far: the step when none is given
};

}  // namespace

KernelOr CreateOp(ContextPtr, const DropPathDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  const DType dtype = options.dtype;
  ASSIGN_OR_RETURN_AS_IS(KernelSignature sig,
                         SameShapeSignature(desc.ToString(), dtype, desc.dims.shape(), inputs));
  sig.saved_bytes = static_cast<size_t>(desc.dims.n) * sizeof(double);  // the scales
  sig.backward_reads_inputs = false;
  sig.backward_reads_output = false;
  if (dtype == DType::kF64)
    return std::unique_ptr<Kernel>(new DropPathKernel<double>(desc, options, std::move(sig)));
  if (dtype == DType::kF32)
    return std::unique_ptr<Kernel>(new DropPathKernel<float>(desc, options, std::move(sig)));
  return UnsupportedDType(desc.ToString(), dtype);
}

}  // namespace reference
}  // namespace cnnbench
