// Reference channel multiply: y = x0 * x1[n, c] over (H, W); dx0 = dy *
// x1[n, c]; dx1[n, c] = the sum over (H, W) of dy * x0, in double.
#include "kernels/channel_mul.h"

#include <cstdint>

#include "core/status.h"
#include "kernels/reference/common.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace reference {
namespace {

template <typename T>
class ChannelMulKernel final : public ReferenceKernel {
 public:
  ChannelMulKernel(const ChannelMulDesc& d, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)),
        count_(d.dims.elements()),
        channels_(d.dims.c),
        plane_(d.dims.h * d.dims.w) {}

 private:
  absl::Status RunForward(const KernelArgs& a) override {
    const T* x = static_cast<const T*>(a.x[0]);
    const T* s = static_cast<const T*>(a.x[1]);
    T* y = static_cast<T*>(a.y);
    for (int64_t i = 0; i < count_; ++i)
      y[i] =
          static_cast<T>(static_cast<double>(x[i]) *
                         static_cast<double>(s[ChannelMulScaleIndex(i, channels_, plane_, false)]));
    return absl::OkStatus();
  }

  absl::Status RunBackwardData(const KernelArgs& a) override {
    const T* x = static_cast<const T*>(a.x[0]);
    const T* s = static_cast<const T*>(a.x[1]);
    const T* dy = static_cast<const T*>(a.dy);
    if (T* dx = static_cast<T*>(a.dx[0]); dx != nullptr)
      for (int64_t i = 0; i < count_; ++i)
        dx[i] = static_cast<T>(
            static_cast<double>(dy[i]) *
            static_cast<double>(s[ChannelMulScaleIndex(i, channels_, plane_, false)]));
    if (a.dx.size() > 1 && a.dx[1] != nullptr) {
      T* ds = static_cast<T*>(a.dx[1]);
      for (int64_t nc = 0; nc < count_ / plane_; ++nc) {
        double sum = 0;
        for (int64_t p = nc * plane_; p < (nc + 1) * plane_; ++p)
          sum += static_cast<double>(dy[p]) * static_cast<double>(x[p]);
        ds[nc] = static_cast<T>(sum);
      }
    }
    return absl::OkStatus();
  }

  const int64_t count_, channels_, plane_;
};

}  // namespace

KernelOr CreateOp(ContextPtr, const ChannelMulDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  const DType dtype = options.dtype;
  const Dims4& d = desc.dims;
  // x1 as its producer gives it: (N,C) from an fc, else (N,C,1,1).
  const Shape scale = inputs.size() == 2 && desc.IsScaleShape(inputs[1].shape)
                          ? inputs[1].shape
                          : Shape{d.n, d.c, 1, 1};
  KernelSignature sig;
  ASSIGN_OR_RETURN_AS_IS(sig.inputs, ResolveInputs(desc.ToString(), inputs,
                                                   {TensorSpec::Plain(dtype, d.shape()),
                                                    TensorSpec::Plain(dtype, scale)}));
  sig.output = TensorSpec::Plain(dtype, d.shape());
  sig.backward_reads_inputs = true;
  sig.backward_reads_output = false;
  return MakeTyped<ChannelMulKernel>(dtype, desc, std::move(sig));
}

}  // namespace reference
}  // namespace cnnbench
