// Reference softmax cross-entropy: the mean over the batch of
// -log softmax(logits)[label]; backward gives (softmax - onehot) / N.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/reference/common.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace reference {
namespace {

template <typename T>
class SoftmaxXentKernel final : public ReferenceKernel {
 public:
  SoftmaxXentKernel(const SoftmaxXentDesc& d, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)), d_(d) {
    backward_reads_dy_ = false;  // the loss is the graph's end: d loss = 1
  }

 private:
  absl::Status RunForward(const KernelArgs& a) override {
    const T* logits = static_cast<const T*>(a.x[0]);              // (N,classes)
    const int32_t* labels = static_cast<const int32_t*>(a.x[1]);  // (N)
    // (N,classes): softmax - onehot, which is all backward needs.
    double* grad = static_cast<double*>(a.saved);
    for (int64_t n = 0; n < d_.n; ++n)  // check first: an error leaves y untouched
      if (labels[n] < 0 || labels[n] >= d_.classes)
        return Error(absl::StrCat("label ", labels[n], " of example ", n, " is outside [0, ",
                                  d_.classes, ")"));
    double total = 0.0;
    for (int64_t n = 0; n < d_.n; ++n) {
      const T* row = logits + n * d_.classes;
      double max = static_cast<double>(row[0]);
      for (int64_t j = 1; j < d_.classes; ++j) max = std::max(max, static_cast<double>(row[j]));
      double sum = 0.0;
      for (int64_t j = 0; j < d_.classes; ++j) sum += std::exp(static_cast<double>(row[j]) - max);
      const double log_sum = max + std::log(sum);
      total += log_sum - static_cast<double>(row[labels[n]]);
      if (grad != nullptr)
        for (int64_t j = 0; j < d_.classes; ++j)
          grad[n * d_.classes + j] =
              std::exp(static_cast<double>(row[j]) - log_sum) - (j == labels[n] ? 1.0 : 0.0);
    }
    *static_cast<T*>(a.y) = static_cast<T>(total / d_.n);
    return absl::OkStatus();
  }

  absl::Status RunBackwardData(const KernelArgs& a) override {
    if (a.dx[0] == nullptr) return absl::OkStatus();
    const double* grad = static_cast<const double*>(a.saved);
    T* dx = static_cast<T*>(a.dx[0]);
    // With dynamic loss scaling, the scaled gradient.
    const double scale = a.loss_scale != nullptr ? static_cast<double>(*a.loss_scale) : 1.0;
    for (int64_t i = 0; i < d_.n * d_.classes; ++i) dx[i] = static_cast<T>(grad[i] / d_.n * scale);
    return absl::OkStatus();
  }

  const SoftmaxXentDesc d_;
};

}  // namespace

KernelOr CreateOp(ContextPtr, const SoftmaxXentDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  const DType dtype = options.dtype;
  KernelSignature sig;
  auto resolved = ResolveInputs(desc.ToString(), inputs,
                                {TensorSpec::Plain(dtype, Shape{desc.n, desc.classes}),
                                 TensorSpec::Plain(DType::kI32, Shape{desc.n})},
                                /*flatten=*/true);
  if (!resolved.ok()) return resolved.status();
  sig.inputs = *std::move(resolved);
  // fp32 loss for fp32 (what the executor reads); fp64 kernels keep fp64 so
  // finite differences of the loss stay accurate.
  sig.output = TensorSpec::Plain(dtype == DType::kF64 ? DType::kF64 : DType::kF32, Shape{});
  sig.saved_bytes = static_cast<size_t>(desc.n * desc.classes) * sizeof(double);
  sig.backward_reads_inputs = false;  // saved holds softmax - onehot
  sig.backward_reads_output = false;
  return MakeTyped<SoftmaxXentKernel>(dtype, desc, std::move(sig));
}

}  // namespace reference
}  // namespace cnnbench
