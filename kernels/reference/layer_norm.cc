// Reference layer normalisation over the channels of each (n, h, w), in
// double (kernels/layer_norm.h's arithmetic): forward keeps each position's
// mean and 1/sqrt(var + eps); dx from the two sums over the channels;
// dgamma and dbeta summed over every position.
#include "kernels/layer_norm.h"

#include <cstdint>

#include "core/status.h"
#include "kernels/reference/common.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace reference {
namespace {

template <typename T>
class LayerNormKernel final : public ReferenceKernel {
 public:
  LayerNormKernel(const LayerNormDesc& d, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)), d_(d) {}

 private:
  const LayerNormDesc d_;
  const int64_t channels_ = d_.dims.c;
  const int64_t plane_ = d_.dims.h * d_.dims.w;

  // Where channel c of position p (n * H * W + hw) is, (N,C,H,W) dense.
  int64_t At(int64_t p, int64_t c) const {
    return ((p / plane_) * channels_ + c) * plane_ + p % plane_;
  }
  static double Value(const void* data, int64_t at) {
    return static_cast<double>(static_cast<const T*>(data)[at]);
  }

  absl::Status RunForward(const KernelArgs& a) override {
    T* y = static_cast<T*>(a.y);
    double* saved = static_cast<double*>(a.saved);  // mean (positions), then rstd
    for (int64_t p = 0; p < d_.positions(); ++p) {
      double mean, rstd;
      LayerNormStatistics<double>(
          channels_, d_.epsilon, [&](int64_t c) { return Value(a.x[0], At(p, c)); }, &mean,
          &rstd);
      if (saved != nullptr) {
        saved[p] = mean;
        saved[d_.positions() + p] = rstd;
      }
      for (int64_t c = 0; c < channels_; ++c)
        y[At(p, c)] = static_cast<T>(LayerNormOutput(Value(a.x[0], At(p, c)), mean, rstd,
                                                     Value(a.params[0], c), Value(a.params[1], c)));
    }
    return absl::OkStatus();
  }

  absl::Status RunBackwardData(const KernelArgs& a) override {
    if (a.dx.empty() || a.dx[0] == nullptr) return absl::OkStatus();
    const double* saved = static_cast<const double*>(a.saved);
    T* dx = static_cast<T*>(a.dx[0]);
    for (int64_t p = 0; p < d_.positions(); ++p) {
      const double mean = saved[p], rstd = saved[d_.positions() + p];
      double sum_g, sum_g_xhat;
      LayerNormGradientSums<double>(
          channels_, mean, rstd, [&](int64_t c) { return Value(a.x[0], At(p, c)); },
          [&](int64_t c) { return Value(a.dy, At(p, c)); },
          [&](int64_t c) { return Value(a.params[0], c); }, &sum_g, &sum_g_xhat);
      for (int64_t c = 0; c < channels_; ++c)
        dx[At(p, c)] = static_cast<T>(LayerNormInputGradient(
            channels_, Value(a.x[0], At(p, c)), Value(a.dy, At(p, c)), Value(a.params[0], c),
            mean, rstd, sum_g, sum_g_xhat));
    }
    return absl::OkStatus();
  }

  absl::Status RunBackwardWeights(const KernelArgs& a) override {
    const double* saved = static_cast<const double*>(a.saved);
    T* dgamma = static_cast<T*>(a.dparams[0]);
    T* dbeta = static_cast<T*>(a.dparams[1]);
    for (int64_t c = 0; c < channels_; ++c) {
      double sum_xhat = 0, sum = 0;
      for (int64_t p = 0; p < d_.positions(); ++p) {
        const double dy = Value(a.dy, At(p, c));
        sum_xhat += dy * (Value(a.x[0], At(p, c)) - saved[p]) * saved[d_.positions() + p];
        sum += dy;
      }
      dgamma[c] = static_cast<T>(sum_xhat);
      dbeta[c] = static_cast<T>(sum);
    }
    return absl::OkStatus();
  }
};

}  // namespace

KernelOr CreateOp(ContextPtr, const LayerNormDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  const DType dtype = options.dtype;
  KernelSignature sig;
  ASSIGN_OR_RETURN_AS_IS(
      sig.inputs,
      ResolveInputs(desc.ToString(), inputs, {TensorSpec::Plain(dtype, desc.dims.shape())}));
  sig.output = TensorSpec::Plain(dtype, desc.dims.shape());
  const Shape channels{desc.dims.c};
  sig.params = {TensorSpec::Plain(dtype, channels), TensorSpec::Plain(dtype, channels)};
  sig.saved_bytes = 2 * static_cast<size_t>(desc.positions()) * sizeof(double);
  sig.backward_reads_inputs = true;  // xhat is recomputed from x
  sig.backward_reads_output = false;
  return MakeTyped<LayerNormKernel>(dtype, desc, std::move(sig));
}

}  // namespace reference
}  // namespace cnnbench
