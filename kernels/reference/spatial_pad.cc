// Reference spatial pad/crop: y(n, c, i, j) = x(n, c, i - top, j - left)
// where that lies in x, else 0; the backward hands x its window of dy (0
// where x's element was cropped away).
#include <cstdint>

#include "kernels/reference/common.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace reference {
namespace {

template <typename T>
class SpatialPadKernel final : public ReferenceKernel {
 public:
  SpatialPadKernel(const SpatialPadDesc& d, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)), d_(d) {}

 private:
  absl::Status RunForward(const KernelArgs& a) override {
    const T* x = static_cast<const T*>(a.x[0]);
    T* y = static_cast<T*>(a.y);
    const Dims4 in = d_.dims, out = d_.output();
    for (int64_t n = 0; n < out.n; ++n)
      for (int64_t c = 0; c < out.c; ++c)
        for (int64_t i = 0; i < out.h; ++i)
          for (int64_t j = 0; j < out.w; ++j) {
            const int64_t si = i - d_.top, sj = j - d_.left;
            const bool inside = si >= 0 && si < in.h && sj >= 0 && sj < in.w;
            y[Offset4(out.c, out.h, out.w, n, c, i, j)] =
                inside ? x[Offset4(in.c, in.h, in.w, n, c, si, sj)] : T(0);
          }
    return absl::OkStatus();
  }

  absl::Status RunBackwardData(const KernelArgs& a) override {
    T* dx = static_cast<T*>(a.dx[0]);
    if (dx == nullptr) return absl::OkStatus();
    const T* dy = static_cast<const T*>(a.dy);
    const Dims4 in = d_.dims, out = d_.output();
    for (int64_t n = 0; n < in.n; ++n)
      for (int64_t c = 0; c < in.c; ++c)
        for (int64_t i = 0; i < in.h; ++i)
          for (int64_t j = 0; j < in.w; ++j) {
            const int64_t oi = i + d_.top, oj = j + d_.left;
            const bool inside = oi >= 0 && oi < out.h && oj >= 0 && oj < out.w;
            dx[Offset4(in.c, in.h, in.w, n, c, i, j)] =
                inside ? dy[Offset4(out.c, out.h, out.w, n, c, oi, oj)] : T(0);
          }
    return absl::OkStatus();
  }

  const SpatialPadDesc d_;
};

}  // namespace

KernelOr CreateOp(ContextPtr, const SpatialPadDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  const DType dtype = options.dtype;
  KernelSignature sig;
  auto resolved =
      ResolveInputs(desc.ToString(), inputs, {TensorSpec::Plain(dtype, desc.dims.shape())});
  if (!resolved.ok()) return resolved.status();
  sig.inputs = *std::move(resolved);
  sig.output = TensorSpec::Plain(dtype, desc.output().shape());
  sig.backward_reads_inputs = false;
  sig.backward_reads_output = false;
  return MakeTyped<SpatialPadKernel>(dtype, desc, std::move(sig));
}

}  // namespace reference
}  // namespace cnnbench
