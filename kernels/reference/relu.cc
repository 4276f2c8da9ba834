// The reference activation op: y = f(x); dx = dy * f'(x) (kernels/activation.h).
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
      : ReferenceKernel(d.ToString(), std::move(signature)),
        count_(d.dims.elements()),
        kind_(d.kind) {}

 private:
  absl::Status RunForward(const KernelArgs& a) override {
    const T* x = static_cast<const T*>(a.x[0]);
    T* y = static_cast<T*>(a.y);
    for (int64_t i = 0; i < count_; ++i) y[i] = ActivationForward(kind_, x[i]);
    return absl::OkStatus();
  }

  absl::Status RunBackwardData(const KernelArgs& a) override {
    if (a.dx[0] == nullptr) return absl::OkStatus();
    const T* x = static_cast<const T*>(a.x[0]);
    const T* dy = static_cast<const T*>(a.dy);
    T* dx = static_cast<T*>(a.dx[0]);
    for (int64_t i = 0; i < count_; ++i) dx[i] = ActivationBackward(kind_, x[i], dy[i]);
    return absl::OkStatus();
  }

  const int64_t count_;
  const ActivationKind kind_;
};

}  // namespace

KernelOr CreateOp(ContextPtr, const ReluDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  const DType dtype = options.dtype;
  ASSIGN_OR_RETURN_AS_IS(KernelSignature sig,
                         SameShapeSignature(desc.ToString(), dtype, desc.dims.shape(), inputs));
  sig.backward_reads_inputs = true;  // dx = dy * f'(x)
  sig.backward_reads_output = false;
  return MakeTyped<ReluKernel>(dtype, desc, std::move(sig));
}

}  // namespace reference
}  // namespace cnnbench
