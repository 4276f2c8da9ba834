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
      : ReferenceKernel(d.ToString(), std::move(signature)),
        count_(d.dims.elements()),
        relu_(d.relu) {}

 private:
  absl::Status RunForward(const KernelArgs& a) override {
    const T* x0 = static_cast<const T*>(a.x[0]);
    const T* x1 = static_cast<const T*>(a.x[1]);
    T* y = static_cast<T*>(a.y);
    for (int64_t i = 0; i < count_; ++i) {
      const double sum = static_cast<double>(x0[i]) + static_cast<double>(x1[i]);
      y[i] = static_cast<T>(relu_ && !(sum > 0) ? 0.0 : sum);
    }
    return absl::OkStatus();
  }

  // dx = (dy or the sum of dy_parts), masked by y > 0 with a fused ReLU;
  // written once when the executor hands both inputs one buffer.
  absl::Status RunBackwardData(const KernelArgs& a) override {
    const T* y = static_cast<const T*>(a.y);
    T* first = nullptr;
    for (void* dx : a.dx) {
      if (dx == nullptr || dx == first) continue;
      T* out = static_cast<T*>(dx);
      if (first != nullptr) {
        for (int64_t i = 0; i < count_; ++i) out[i] = first[i];
        continue;
      }
      first = out;
      for (int64_t i = 0; i < count_; ++i) {
        double g = 0;
        if (a.dy_parts.empty()) {
          g = static_cast<double>(static_cast<const T*>(a.dy)[i]);
        } else {
          for (const void* part : a.dy_parts) g += static_cast<double>(static_cast<const T*>(part)[i]);
        }
        out[i] = static_cast<T>(relu_ && !(y[i] > T(0)) ? 0.0 : g);
      }
    }
    return absl::OkStatus();
  }

  const int64_t count_;
  const bool relu_;
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
  sig.backward_reads_inputs = false;  // dx0 = dx1 = dy (masked by y > 0 with a ReLU)
  sig.backward_reads_output = desc.relu;
  sig.shared_input_gradient = true;
  sig.sums_output_gradient = true;
  return MakeTyped<AddKernel>(dtype, desc, std::move(sig));
}

}  // namespace reference
}  // namespace cnnbench
