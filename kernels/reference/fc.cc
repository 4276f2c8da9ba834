// Reference fully connected layer: y(N,OC) = x(N,IC) W(OC,IC)^T + b(OC);
// a 4-D input is read as (N, C*H*W).
#include "kernels/reference/common.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace reference {
namespace {

template <typename T>
class FcKernel final : public ReferenceKernel {
 public:
  FcKernel(const FcDesc& d, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)), d_(d) {}

 private:
  absl::Status RunForward(const KernelArgs& a) override {
    const T* x = static_cast<const T*>(a.x[0]);                           // (N,IC)
    const T* w = static_cast<const T*>(a.params[0]);                      // (OC,IC)
    const T* b = d_.bias ? static_cast<const T*>(a.params[1]) : nullptr;  // (OC)
    T* y = static_cast<T*>(a.y);                                          // (N,OC)
    for (int64_t n = 0; n < d_.n; ++n)
      for (int64_t o = 0; o < d_.oc; ++o) {
        double acc = b ? static_cast<double>(b[o]) : 0.0;
        for (int64_t i = 0; i < d_.ic; ++i)
          acc += static_cast<double>(x[n * d_.ic + i]) * static_cast<double>(w[o * d_.ic + i]);
        y[n * d_.oc + o] = static_cast<T>(acc);
      }
    return absl::OkStatus();
  }

  absl::Status RunBackwardData(const KernelArgs& a) override {
    if (a.dx[0] == nullptr) return absl::OkStatus();
    const T* w = static_cast<const T*>(a.params[0]);  // (OC,IC)
    const T* dy = static_cast<const T*>(a.dy);        // (N,OC)
    T* dx = static_cast<T*>(a.dx[0]);                 // (N,IC)
    for (int64_t n = 0; n < d_.n; ++n)
      for (int64_t i = 0; i < d_.ic; ++i) {
        double acc = 0.0;
        for (int64_t o = 0; o < d_.oc; ++o)
          acc += static_cast<double>(dy[n * d_.oc + o]) * static_cast<double>(w[o * d_.ic + i]);
        dx[n * d_.ic + i] = static_cast<T>(acc);
      }
    return absl::OkStatus();
  }

  absl::Status RunBackwardWeights(const KernelArgs& a) override {
    const T* x = static_cast<const T*>(a.x[0]);  // (N,IC)
    const T* dy = static_cast<const T*>(a.dy);   // (N,OC)
    T* dw = static_cast<T*>(a.dparams[0]);       // (OC,IC)
    for (int64_t o = 0; o < d_.oc; ++o)
      for (int64_t i = 0; i < d_.ic; ++i) {
        double acc = 0.0;
        for (int64_t n = 0; n < d_.n; ++n)
          acc += static_cast<double>(dy[n * d_.oc + o]) * static_cast<double>(x[n * d_.ic + i]);
        dw[o * d_.ic + i] = static_cast<T>(acc);
      }
    if (d_.bias) {
      T* db = static_cast<T*>(a.dparams[1]);  // (OC)
      for (int64_t o = 0; o < d_.oc; ++o) {
        double acc = 0.0;
        for (int64_t n = 0; n < d_.n; ++n) acc += static_cast<double>(dy[n * d_.oc + o]);
        db[o] = static_cast<T>(acc);
      }
    }
    return absl::OkStatus();
  }

  const FcDesc d_;
};

}  // namespace

KernelOr CreateOp(ContextPtr, const FcDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  const DType dtype = options.dtype;
  const std::string name = desc.ToString();
  KernelSignature sig;
  auto resolved = ResolveInputs(name, inputs, {TensorSpec::Plain(dtype, Shape{desc.n, desc.ic})},
                                /*flatten=*/true);
  if (!resolved.ok()) return resolved.status();
  sig.inputs = *std::move(resolved);
  sig.output = TensorSpec::Plain(dtype, Shape{desc.n, desc.oc});
  sig.params.push_back(TensorSpec::Plain(dtype, Shape{desc.oc, desc.ic}));
  if (desc.bias) sig.params.push_back(TensorSpec::Plain(dtype, Shape{desc.oc}));
  sig.backward_reads_inputs = true;  // dw needs x
  sig.backward_reads_output = false;
  return MakeTyped<FcKernel>(dtype, desc, std::move(sig));
}

}  // namespace reference
}  // namespace cnnbench
