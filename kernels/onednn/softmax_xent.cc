// Mean softmax cross-entropy over integer labels: loops in double, as the
// reference (oneDNN's softmax would still need a loop for the loss). saved
// holds (softmax - onehot) / N in plain fp32, which is dx.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/onednn/ops.h"

namespace cnnbench {
namespace onednn {
namespace {

using dnnl::memory;

class SoftmaxXentKernel : public OneDnnKernel {
 public:
  SoftmaxXentKernel(std::shared_ptr<Context> context, const SoftmaxXentDesc& desc)
      : OneDnnKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const SoftmaxXentDesc&, const KernelOptions& options, const Inputs& inputs) {
    const DType dtype = options.dtype;
    const SoftmaxXentDesc& d = desc_;
    RETURN_IF_ERROR(CheckInputCount(inputs, 2, what_));
    const TensorSpec* given = inputs.empty() ? nullptr : &inputs[0];
    Shape logits_shape{d.n, d.classes};
    if (given != nullptr) {
      const Shape& s = given->shape;
      const bool matches =
          s.rank() == 4 ? s[0] == d.n && s[1] * s[2] * s[3] == d.classes : s == logits_shape;
      if (given->dtype != dtype || !matches)
        return absl::InvalidArgumentError(absl::StrCat(
            what_, ": input 0 spec ", given->DebugString(), " should be ", DTypeName(dtype), "[",
            d.n, ",", d.classes, "] or [", d.n, ",C,H,W] with C*H*W = ", d.classes));
      logits_shape = s;
      const TensorSpec& labels = inputs[1];
      if (labels.dtype != DType::kI32 || labels.shape != Shape{d.n} || !labels.is_plain())
        return absl::InvalidArgumentError(absl::StrCat(
            what_, ": input 1 spec ", labels.DebugString(), " should be plain int32[", d.n, "]"));
    }
    const TensorSpec logits = given != nullptr ? *given : TensorSpec::Plain(dtype, logits_shape);
    const memory::dims dims = ToDims(logits_shape);
    ASSIGN_OR_RETURN(memory::desc logits_md, DescFromSpec(logits, dims, "input 0", what_));
    const memory::desc plain_f32 = PlainDesc(dims, memory::data_type::f32);
    // Logits in any other layout or type are first copied as plain fp32 into
    // saved (which the loop then overwrites with the gradient), and dx is
    // written as plain fp32 into scratch and then laid out like the logits.
    if (logits_md != plain_f32) {
      to_plain_ = MakeReorder(*context_, logits_md, plain_f32);
      from_plain_ = MakeReorder(*context_, plain_f32, logits_md);
      grad_offset_ = AlignUp(plain_f32.get_size());
      signature_.scratch_bytes =
          grad_offset_ + std::max(to_plain_.scratchpad_bytes(), from_plain_.scratchpad_bytes());
    }
    signature_.inputs = {logits, TensorSpec::Plain(DType::kI32, Shape{d.n})};
    signature_.output = TensorSpec::Plain(DType::kF32, Shape{});
    signature_.saved_bytes = plain_f32.get_size();
    signature_.backward_reads_inputs = false;  // saved holds the gradient
    signature_.backward_reads_output = false;
    implementation_ = "loops";
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    const SoftmaxXentDesc& d = desc_;
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    ASSIGN_OR_RETURN(const void* labels_ptr, Input(args, 1));
    RETURN_IF_ERROR(Require(args.y, "y"));
    RETURN_IF_ERROR(RequireSaved(args));
    RETURN_IF_ERROR(RequireScratch(args));
    const int32_t* labels = static_cast<const int32_t*>(labels_ptr);
    for (int64_t n = 0; n < d.n; ++n)  // check first: an error leaves y untouched
      if (labels[n] < 0 || labels[n] >= d.classes)
        return absl::InvalidArgumentError(absl::StrCat(what_, ": label ", labels[n], " of example ",
                                                       n, " is outside [0, ", d.classes, ")"));
    float* grad = static_cast<float*>(args.saved);
    const float* logits = static_cast<const float*>(x);
    if (to_plain_.valid()) {
      RETURN_IF_ERROR(Guarded(what_, [&]() -> absl::Status {
        to_plain_.Set(DNNL_ARG_FROM, x);
        to_plain_.Set(DNNL_ARG_TO, grad);
        to_plain_.SetScratchpad(static_cast<char*>(args.scratch) + grad_offset_);
        to_plain_.Execute(context_->stream);
        return absl::OkStatus();
      }));
      logits = grad;  // each row is read fully before it is overwritten
    }
    double total = 0.0;
    for (int64_t n = 0; n < d.n; ++n) {
      const float* row = logits + n * d.classes;
      float* grad_row = grad + n * d.classes;
      double max = row[0];
      for (int64_t j = 1; j < d.classes; ++j) max = std::max(max, static_cast<double>(row[j]));
      double sum = 0.0;
      for (int64_t j = 0; j < d.classes; ++j) sum += std::exp(static_cast<double>(row[j]) - max);
      const double log_sum = max + std::log(sum);
      total += log_sum - static_cast<double>(row[labels[n]]);
      for (int64_t j = 0; j < d.classes; ++j)
        grad_row[j] = static_cast<float>(
            (std::exp(static_cast<double>(row[j]) - log_sum) - (j == labels[n] ? 1.0 : 0.0)) /
            static_cast<double>(d.n));
    }
    *static_cast<float*>(args.y) = static_cast<float>(total / static_cast<double>(d.n));
    return absl::OkStatus();
  }

  // dx = (softmax - onehot) / N; dy is ignored (the loss ends the graph).
  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    if (args.loss_scale != nullptr)
      return absl::UnimplementedError(
          absl::StrCat("unsupported: ", what_,
                       ": a scaled loss gradient (dynamic loss scaling is for fp16, "
                       "which the oneDNN backend does not run)"));
    RETURN_IF_ERROR(RequireSaved(args));
    RETURN_IF_ERROR(RequireScratch(args));
    if (!from_plain_.valid()) {
      std::memcpy(args.dx[0], args.saved, signature_.saved_bytes);
      return absl::OkStatus();
    }
    return Guarded(what_, [&]() -> absl::Status {
      from_plain_.Set(DNNL_ARG_FROM, args.saved);
      from_plain_.Set(DNNL_ARG_TO, args.dx[0]);
      from_plain_.SetScratchpad(static_cast<char*>(args.scratch) + grad_offset_);
      from_plain_.Execute(context_->stream);
      return absl::OkStatus();
    });
  }

 private:
  const SoftmaxXentDesc desc_;
  BoundPrimitive to_plain_;    // logits -> plain fp32 (saved), when they are not
  BoundPrimitive from_plain_;  // gradient -> dx's layout and type
  size_t grad_offset_ = 0;     // scratch offset of the reorders' scratchpad
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const SoftmaxXentDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<SoftmaxXentKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
