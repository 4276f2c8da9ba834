// Reference SGD with momentum (tf.train.MomentumOptimizer with L2 weight
// decay folded into the gradient), in double per element.
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace reference {
namespace {

class SgdOptimizer final : public Optimizer {
 public:
  explicit SgdOptimizer(const SgdDesc& d) : d_(d) {}

  absl::Status Update(const UpdateArgs& args) override {
    ASSIGN_OR_RETURN(const CpuUpdatePlan plan, PrepareCpuUpdate(d_, args));
    if (plan.skip) return absl::OkStatus();
    float* params = args.params;
    float* momentum = args.momentum;
    for (int64_t i = 0; i < d_.count; ++i) {
      const double w = params[i];
      const double g =
          static_cast<double>(args.grads[i]) * plan.inverse_scale + d_.weight_decay * w;
      double step = g;
      if (d_.momentum != 0.0) {
        step = d_.momentum * static_cast<double>(momentum[i]) + g;
        momentum[i] = static_cast<float>(step);
      }
      params[i] = static_cast<float>(w - d_.learning_rate * step);
    }
    return absl::OkStatus();
  }

 private:
  const SgdDesc d_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Optimizer>> CreateSgd(const SgdDesc& desc) {
  return std::unique_ptr<Optimizer>(new SgdOptimizer(desc));
}

}  // namespace reference
}  // namespace cnnbench
