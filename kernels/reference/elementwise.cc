// Reference relu and add (residual sum).
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

template <typename T>
class AddKernel final : public ReferenceKernel {
 public:
  AddKernel(const AddDesc& d, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)), count_(d.dims.elements()) {}

 private:
  absl::Status RunForward(const KernelArgs& a) override {
    const T* x0 = static_cast<const T*>(a.x[0]);
    const T* x1 = static_cast<const T*>(a.x[1]);
    T* y = static_cast<T*>(a.y);
    for (int64_t i = 0; i < count_; ++i)
      y[i] = static_cast<T>(static_cast<double>(x0[i]) + static_cast<double>(x1[i]));
    return absl::OkStatus();
  }

  absl::Status RunBackwardData(const KernelArgs& a) override {
    const T* dy = static_cast<const T*>(a.dy);
    for (void* dx : a.dx) {
      if (dx == nullptr) continue;
      T* out = static_cast<T*>(dx);
      for (int64_t i = 0; i < count_; ++i) out[i] = dy[i];
    }
    return absl::OkStatus();
  }

  const int64_t count_;
};

}  // namespace

KernelOr CreateRelu(const ReluDesc& desc, DType dtype, const std::vector<TensorSpec>& inputs) {
  KernelSignature sig;
  auto resolved =
      ResolveInputs(desc.ToString(), inputs, {TensorSpec::Plain(dtype, desc.dims.shape())});
  if (!resolved.ok()) return resolved.status();
  sig.inputs = *std::move(resolved);
  sig.output = TensorSpec::Plain(dtype, desc.dims.shape());
  sig.backward_reads_inputs = true;  // dx = dy * (x > 0)
  sig.backward_reads_output = false;
  return MakeTyped<ReluKernel>(dtype, desc, std::move(sig));
}

KernelOr CreateAdd(const AddDesc& desc, DType dtype, const std::vector<TensorSpec>& inputs) {
  KernelSignature sig;
  const TensorSpec plain = TensorSpec::Plain(dtype, desc.dims.shape());
  auto resolved = ResolveInputs(desc.ToString(), inputs, {plain, plain});
  if (!resolved.ok()) return resolved.status();
  sig.inputs = *std::move(resolved);
  sig.output = plain;
  sig.backward_reads_inputs = false;  // dx0 = dx1 = dy
  sig.backward_reads_output = false;
  return MakeTyped<AddKernel>(dtype, desc, std::move(sig));
}

}  // namespace reference
}  // namespace cnnbench
