// Reference across-channel LRN, TensorFlow's definition:
//   y_c = x_c * s_c^-beta,  s_c = bias + alpha * sum_{|j-c|<=r} x_j^2.
#include <algorithm>
#include <cmath>

#include "core/status.h"
#include "kernels/reference/common.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace reference {
namespace {

template <typename T>
class LrnKernel final : public ReferenceKernel {
 public:
  LrnKernel(const LrnDesc& d, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)), d_(d) {}

 private:
  // Channel neighbours of c: [Low(c), High(c)].
  int64_t Low(int64_t c) const { return std::max<int64_t>(c - d_.depth_radius, 0); }
  int64_t High(int64_t c) const { return std::min<int64_t>(c + d_.depth_radius, d_.dims.c - 1); }

  absl::Status RunForward(const KernelArgs& a) override {
    const T* x = static_cast<const T*>(a.x[0]);     // (N,C,H,W)
    T* y = static_cast<T*>(a.y);                    // (N,C,H,W)
    double* scale = static_cast<double*>(a.saved);  // s, (N,C,H,W), for backward
    const int64_t hw = d_.dims.h * d_.dims.w, chw = d_.dims.c * hw;
    for (int64_t n = 0; n < d_.dims.n; ++n)
      for (int64_t c = 0; c < d_.dims.c; ++c)
        for (int64_t i = 0; i < hw; ++i) {
          double sum = 0.0;
          for (int64_t j = Low(c); j <= High(c); ++j) {
            const double v = static_cast<double>(x[n * chw + j * hw + i]);
            sum += v * v;
          }
          const int64_t at = n * chw + c * hw + i;
          const double s = d_.bias + d_.alpha * sum;
          y[at] = static_cast<T>(static_cast<double>(x[at]) * std::pow(s, -d_.beta));
          if (scale != nullptr) scale[at] = s;
        }
    return absl::OkStatus();
  }

  // dx_c = dy_c s_c^-beta - 2 alpha beta x_c sum_{|j-c|<=r} dy_j x_j s_j^(-beta-1)
  absl::Status RunBackwardData(const KernelArgs& a) override {
    if (a.dx[0] == nullptr) return absl::OkStatus();
    const T* x = static_cast<const T*>(a.x[0]);
    const T* dy = static_cast<const T*>(a.dy);
    const double* scale = static_cast<const double*>(a.saved);
    T* dx = static_cast<T*>(a.dx[0]);
    const int64_t hw = d_.dims.h * d_.dims.w, chw = d_.dims.c * hw;
    for (int64_t n = 0; n < d_.dims.n; ++n)
      for (int64_t c = 0; c < d_.dims.c; ++c)
        for (int64_t i = 0; i < hw; ++i) {
          double cross = 0.0;
          for (int64_t j = Low(c); j <= High(c); ++j) {
            const int64_t at = n * chw + j * hw + i;
            cross += static_cast<double>(dy[at]) * static_cast<double>(x[at]) *
                     std::pow(scale[at], -d_.beta - 1.0);
          }
          const int64_t at = n * chw + c * hw + i;
          dx[at] = static_cast<T>(static_cast<double>(dy[at]) * std::pow(scale[at], -d_.beta) -
                                  2.0 * d_.alpha * d_.beta * static_cast<double>(x[at]) * cross);
        }
    return absl::OkStatus();
  }

  const LrnDesc d_;
};

}  // namespace

KernelOr CreateOp(ContextPtr, const LrnDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  const DType dtype = options.dtype;
  ASSIGN_OR_RETURN_AS_IS(KernelSignature sig,
                         SameShapeSignature(desc.ToString(), dtype, desc.dims.shape(), inputs));
  sig.saved_bytes = static_cast<size_t>(desc.dims.elements()) * sizeof(double);
  sig.backward_reads_inputs = true;
  sig.backward_reads_output = false;
  return MakeTyped<LrnKernel>(dtype, desc, std::move(sig));
}

}  // namespace reference
}  // namespace cnnbench
