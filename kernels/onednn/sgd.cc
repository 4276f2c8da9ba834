// The fused SGD-with-momentum update: one pass over the flat fp32
// parameters, per element in double as the reference (so both backends
// agree to the bit); the loop has no dependences and vectorises.
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/onednn/ops.h"

namespace cnnbench {
namespace onednn {
namespace {

class SgdOptimizer : public Optimizer {
 public:
  explicit SgdOptimizer(const SgdDesc& desc) : desc_(desc) {}

  absl::Status Update(const UpdateArgs& args) override {
    ASSIGN_OR_RETURN(const CpuUpdatePlan plan, PrepareCpuUpdate(desc_, args));
    if (plan.skip) return absl::OkStatus();
    if (desc_.momentum == 0.0) {
      Plain(args.params, args.grads, plan.inverse_scale);
    } else {
      WithMomentum(args.params, args.grads, args.momentum, plan.inverse_scale);
    }
    return absl::OkStatus();
  }

 private:
  // g' = g/scale + wd*w;  w -= lr*g'.
  void Plain(float* __restrict w, const float* __restrict g, double inv_scale) const {
    const double lr = desc_.learning_rate, wd = desc_.weight_decay;
    const int64_t count = desc_.count;
#pragma omp simd
    for (int64_t i = 0; i < count; ++i) {
      const double wi = w[i];
      w[i] = static_cast<float>(wi - lr * (static_cast<double>(g[i]) * inv_scale + wd * wi));
    }
  }

  // g' = g/scale + wd*w;  v = m*v + g';  w -= lr*v.
  void WithMomentum(float* __restrict w, const float* __restrict g, float* __restrict v,
                    double inv_scale) const {
    const double lr = desc_.learning_rate, m = desc_.momentum, wd = desc_.weight_decay;
    const int64_t count = desc_.count;
#pragma omp simd
    for (int64_t i = 0; i < count; ++i) {
      const double wi = w[i];
      const double step =
          m * static_cast<double>(v[i]) + (static_cast<double>(g[i]) * inv_scale + wd * wi);
      v[i] = static_cast<float>(step);
      w[i] = static_cast<float>(wi - lr * step);
    }
  }

  const SgdDesc desc_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Optimizer>> CreateSgd(const SgdDesc& desc) {
  return std::unique_ptr<Optimizer>(new SgdOptimizer(desc));
}

}  // namespace onednn
}  // namespace cnnbench
