// Reference channel concatenation: y(N, sum C_i, H, W) from x_i(N, C_i, H, W);
// backward hands each input its slice of dy.
#include <cstdint>

#include "kernels/reference/common.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace reference {
namespace {

template <typename T>
class ConcatKernel final : public ReferenceKernel {
 public:
  ConcatKernel(const ConcatDesc& d, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)), d_(d), total_(d.output().c) {}

 private:
  absl::Status RunForward(const KernelArgs& a) override {
    T* y = static_cast<T*>(a.y);
    const int64_t hw = d_.h * d_.w;
    int64_t offset = 0;  // first output channel of input i
    for (size_t i = 0; i < d_.channels.size(); ++i) {
      const T* x = static_cast<const T*>(a.x[i]);
      const int64_t ci = d_.channels[i];
      for (int64_t n = 0; n < d_.n; ++n)
        for (int64_t j = 0; j < ci * hw; ++j) y[(n * total_ + offset) * hw + j] = x[n * ci * hw + j];
      offset += ci;
    }
    return absl::OkStatus();
  }

  absl::Status RunBackwardData(const KernelArgs& a) override {
    const T* dy = static_cast<const T*>(a.dy);
    const int64_t hw = d_.h * d_.w;
    int64_t offset = 0;
    for (size_t i = 0; i < d_.channels.size(); ++i) {
      const int64_t ci = d_.channels[i];
      if (T* dx = static_cast<T*>(a.dx[i]); dx != nullptr)
        for (int64_t n = 0; n < d_.n; ++n)
          for (int64_t j = 0; j < ci * hw; ++j) dx[n * ci * hw + j] = dy[(n * total_ + offset) * hw + j];
      offset += ci;
    }
    return absl::OkStatus();
  }

  const ConcatDesc d_;
  const int64_t total_;  // output channels
};

}  // namespace

KernelOr CreateConcat(const ConcatDesc& desc, DType dtype,
                      const std::vector<TensorSpec>& inputs) {
  KernelSignature sig;
  std::vector<TensorSpec> expected;
  for (int64_t c : desc.channels)
    expected.push_back(TensorSpec::Plain(dtype, Shape{desc.n, c, desc.h, desc.w}));
  auto resolved = ResolveInputs(desc.ToString(), inputs, expected);
  if (!resolved.ok()) return resolved.status();
  sig.inputs = *std::move(resolved);
  sig.output = TensorSpec::Plain(dtype, desc.output().shape());
  sig.backward_reads_inputs = false;
  sig.backward_reads_output = false;
  return MakeTyped<ConcatKernel>(dtype, desc, std::move(sig));
}

}  // namespace reference
}  // namespace cnnbench
