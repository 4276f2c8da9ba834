// Reference ReLU: y = max(x, 0); dx = dy where x > 0.
#include "core/status.h"
#include "kernels/reference/common.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace reference {
namespace {

template <typename T>
class ReluKernel final : public ReferenceKernel {
 public:
  ReluKernel(const ReluDesc& d, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)), count_(d.dims.elements()) {}

 private:
  absl::Status RunForward(const KernelArgs& a) override {
    const T* x = static_cast<const T*>(a.x[0]);
    T* y = static_cast<T*>(a.y);
    for (int64_t i = 0; i < count_; ++i) y[i] = x[i] > T(0) ? x[i] : T(0);
    return absl::OkStatus();
  }

  absl::Status RunBackwardData(const KernelArgs& a) override {
    if (a.dx[0] == nullptr) return absl::OkStatus();
    const T* x = static_cast<const T*>(a.x[0]);
    const T* dy = static_cast<const T*>(a.dy);
    T* dx = static_cast<T*>(a.dx[0]);
    for (int64_t i = 0; i < count_; ++i) dx[i] = x[i] > T(0) ? dy[i] : T(0);
    return absl::OkStatus();
  }

  const int64_t count_;
};

}  // namespace

KernelOr CreateOp(ContextPtr, const ReluDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  const DType dtype = options.dtype;
  ASSIGN_OR_RETURN_AS_IS(KernelSignature sig,
                         SameShapeSignature(desc.ToString(), dtype, desc.dims.shape(), inputs));
  sig.backward_reads_inputs = true;  // dx = dy * (x > 0)
  sig.backward_reads_output = false;
  return MakeTyped<ReluKernel>(dtype, desc, std::move(sig));
}

}  // namespace reference
}  // namespace cnnbench
