// Reference batch normalization over (N,H,W) per channel: training forward
// with batch statistics and running-statistics update (unbiased variance, as
// TensorFlow), inference forward with the running statistics, and both
// backward passes for either mode.
#include <cmath>

#include "kernels/reference/common.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace reference {
namespace {

template <typename T>
class BatchNormKernel final : public ReferenceKernel {
 public:
  BatchNormKernel(const BatchNormDesc& d, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)), d_(d) {}

 private:
  const BatchNormDesc d_;  // first: the sizes below are derived from it
  const int64_t hw_ = d_.dims.h * d_.dims.w;
  const int64_t m_ = d_.dims.n * hw_;  // elements per channel

  // Element `i` of channel `c` over (N,H,W).
  int64_t At(int64_t c, int64_t i) const { return ((i / hw_) * d_.dims.c + c) * hw_ + i % hw_; }
  // The gradient reaching the normalisation of channel c: dy, masked by
  // f'(y) when a masking activation (ReLU, ReLU6) is fused after it; times
  // f'(u) for another kind, u the normalised x recomputed from the saved
  // statistics (y is not kept).
  double Dy(const KernelArgs& a, int64_t c, int64_t at) const {
    const double dy = static_cast<double>(static_cast<const T*>(a.dy)[at]);
    if (d_.activation == ActivationKind::kNone) return dy;
    if (!ActivationMasks(d_.activation)) {
      const double* saved = static_cast<const double*>(a.saved);
      const double x = static_cast<double>(static_cast<const T*>(a.x[0])[at]);
      const double beta = static_cast<double>(static_cast<const T*>(a.params.back())[c]);
      const double u = Gamma(a, c) * (x - saved[c]) * saved[d_.dims.c + c] + beta;
      return ActivationBackward(d_.activation, u, dy);
    }
    return ActivationBackwardOfOutput(d_.activation,
                                      static_cast<double>(static_cast<const T*>(a.y)[at]), dy);
  }
  // gamma, or 1 with `_noscale`; params are {gamma, beta} or {beta}.
  double Gamma(const KernelArgs& a, int64_t c) const {
    return d_.scale ? static_cast<double>(static_cast<const T*>(a.params[0])[c]) : 1.0;
  }

  absl::Status RunForward(const KernelArgs& a) override {
    const T* x = static_cast<const T*>(a.x[0]);              // (N,C,H,W)
    const T* beta = static_cast<const T*>(a.params.back());  // (C)
    T* running_mean = static_cast<T*>(a.state[0]);           // (C)
    T* running_var = static_cast<T*>(a.state[1]);            // (C)
    T* y = static_cast<T*>(a.y);                             // (N,C,H,W)
    double* saved = static_cast<double*>(a.saved);           // mean (C), then 1/sqrt(var+eps) (C)
    for (int64_t c = 0; c < d_.dims.c; ++c) {
      double mean, inv_std;
      if (a.training) {
        double sum = 0.0;
        for (int64_t i = 0; i < m_; ++i) sum += static_cast<double>(x[At(c, i)]);
        mean = sum / m_;
        double sq = 0.0;  // two passes: no cancellation in the variance
        for (int64_t i = 0; i < m_; ++i) {
          const double dev = static_cast<double>(x[At(c, i)]) - mean;
          sq += dev * dev;
        }
        const double var = sq / m_;
        inv_std = 1.0 / std::sqrt(var + d_.epsilon);
        const double unbiased = m_ > 1 ? var * m_ / (m_ - 1) : var;
        running_mean[c] = static_cast<T>(d_.momentum * static_cast<double>(running_mean[c]) +
                                         (1.0 - d_.momentum) * mean);
        running_var[c] = static_cast<T>(d_.momentum * static_cast<double>(running_var[c]) +
                                        (1.0 - d_.momentum) * unbiased);
      } else {
        mean = static_cast<double>(running_mean[c]);
        inv_std = 1.0 / std::sqrt(static_cast<double>(running_var[c]) + d_.epsilon);
      }
      if (saved != nullptr) {
        saved[c] = mean;
        saved[d_.dims.c + c] = inv_std;
      }
      const double gamma = Gamma(a, c), shift = static_cast<double>(beta[c]);
      for (int64_t i = 0; i < m_; ++i) {
        const int64_t at = At(c, i);
        const double out = gamma * (static_cast<double>(x[at]) - mean) * inv_std + shift;
        y[at] = static_cast<T>(ActivationForward(d_.activation, out));
      }
    }
    return absl::OkStatus();
  }

  // Per channel: sum(dy) and sum(dy * xhat), the two reductions both
  // backward passes need.
  void Reduce(const KernelArgs& a, int64_t c, double* sum_dy, double* sum_dy_xhat) const {
    const T* x = static_cast<const T*>(a.x[0]);
    const double* saved = static_cast<const double*>(a.saved);
    const double mean = saved[c], inv_std = saved[d_.dims.c + c];
    *sum_dy = *sum_dy_xhat = 0.0;
    for (int64_t i = 0; i < m_; ++i) {
      const int64_t at = At(c, i);
      const double g = Dy(a, c, at);
      *sum_dy += g;
      *sum_dy_xhat += g * (static_cast<double>(x[at]) - mean) * inv_std;
    }
  }

  absl::Status RunBackwardData(const KernelArgs& a) override {
    if (a.dx[0] == nullptr) return absl::OkStatus();
    const T* x = static_cast<const T*>(a.x[0]);
    T* dx = static_cast<T*>(a.dx[0]);
    const double* saved = static_cast<const double*>(a.saved);
    for (int64_t c = 0; c < d_.dims.c; ++c) {
      const double mean = saved[c], inv_std = saved[d_.dims.c + c];
      const double scale = Gamma(a, c) * inv_std;
      if (!a.training) {  // frozen statistics: an affine map
        for (int64_t i = 0; i < m_; ++i) {
          const int64_t at = At(c, i);
          dx[at] = static_cast<T>(scale * Dy(a, c, at));
        }
        continue;
      }
      double sum_dy, sum_dy_xhat;
      Reduce(a, c, &sum_dy, &sum_dy_xhat);
      const double mean_dy = sum_dy / m_, mean_dy_xhat = sum_dy_xhat / m_;
      for (int64_t i = 0; i < m_; ++i) {
        const int64_t at = At(c, i);
        const double xhat = (static_cast<double>(x[at]) - mean) * inv_std;
        dx[at] = static_cast<T>(scale * (Dy(a, c, at) - mean_dy - xhat * mean_dy_xhat));
      }
    }
    return absl::OkStatus();
  }

  absl::Status RunBackwardWeights(const KernelArgs& a) override {
    T* dgamma = d_.scale ? static_cast<T*>(a.dparams[0]) : nullptr;
    T* dbeta = static_cast<T*>(a.dparams.back());
    for (int64_t c = 0; c < d_.dims.c; ++c) {
      double sum_dy, sum_dy_xhat;
      Reduce(a, c, &sum_dy, &sum_dy_xhat);
      if (dgamma != nullptr) dgamma[c] = static_cast<T>(sum_dy_xhat);
      dbeta[c] = static_cast<T>(sum_dy);
    }
    return absl::OkStatus();
  }
};

}  // namespace

KernelOr CreateOp(ContextPtr, const BatchNormDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  const DType dtype = options.dtype;
  const std::string name = desc.ToString();
  KernelSignature sig;
  auto resolved = ResolveInputs(name, inputs, {TensorSpec::Plain(dtype, desc.dims.shape())});
  if (!resolved.ok()) return resolved.status();
  sig.inputs = *std::move(resolved);
  sig.output = TensorSpec::Plain(dtype, desc.dims.shape());
  const Shape channels{desc.dims.c};
  if (desc.scale) sig.params.push_back(TensorSpec::Plain(dtype, channels));  // gamma
  sig.params.push_back(TensorSpec::Plain(dtype, channels));                  // beta
  sig.state = {TensorSpec::Plain(dtype, channels), TensorSpec::Plain(dtype, channels)};
  sig.saved_bytes = 2 * static_cast<size_t>(desc.dims.c) * sizeof(double);
  sig.backward_reads_inputs = true;  // xhat is recomputed from x
  // A masking activation's mask is read from y; another kind's f'(u) is
  // recomputed from x.
  sig.backward_reads_output =
      desc.activation != ActivationKind::kNone && ActivationMasks(desc.activation);
  return MakeTyped<BatchNormKernel>(dtype, desc, std::move(sig));
}

}  // namespace reference
}  // namespace cnnbench
