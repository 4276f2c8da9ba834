// Softmax cross-entropy as the backend's own CUDA kernels: one block per row
// (max, sum of exponentials, the row's loss and gradient in fp32), then one
// block for the mean, summed in a fixed order. Saved: (softmax - onehot) / N
// as fp32 (N, classes), then the row losses; backward casts the former into
// dx and reads neither logits nor labels.
//
// Labels are checked on the device, without waiting inside a call: a label
// outside [0, classes) makes that step's loss and its row's gradient NaN and
// is recorded in device memory; every forward copies the record into pinned
// host memory behind its kernels. Each later call of this kernel reads that
// copy (no synchronisation) and, once the faulty step has run, fails with
// InvalidArgument naming the example and the label. The error is sticky: the
// input pipeline produced a bad label, and the run should stop.
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/cuda/op_kernels.h"
#include "kernels/cuda/op_spec.h"
#include "kernels/cuda/ops.h"

namespace cnnbench::cuda {
namespace {

constexpr size_t kAlign = 256;
size_t AlignUp(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

class SoftmaxXentKernel : public CudaKernel {
 public:
  SoftmaxXentKernel(ContextPtr context, const SoftmaxXentDesc& desc)
      : CudaKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(what_, inputs, 2));
    TensorSpec logits = TensorSpec::Plain(options.dtype, Shape{desc_.n, desc_.classes});
    TensorSpec labels = TensorSpec::Plain(DType::kI32, Shape{desc_.n});
    if (!inputs.empty()) {
      const TensorSpec& given = inputs[0];
      const bool spatial = given.shape.rank() == 4 && given.shape[2] * given.shape[3] > 1;
      if (!given.is_plain() || (IsNhwc(given) && spatial))
        return absl::UnimplementedError(absl::StrCat("unsupported: ", what_, ": logits stored as ",
                                                     given.DebugString(),
                                                     " (flattening needs (N,C,H,W) order)"));
      if (given.dtype != options.dtype || given.shape.rank() < 1 || given.shape[0] != desc_.n ||
          given.shape.num_elements() != desc_.n * desc_.classes)
        return absl::InvalidArgumentError(
            absl::StrCat(what_, ": logits spec ", given.DebugString(), " does not fit"));
      logits = given;
      if (inputs[1].dtype != DType::kI32 || inputs[1].shape.num_elements() != desc_.n ||
          !inputs[1].is_plain())
        return absl::InvalidArgumentError(absl::StrCat(
            what_, ": labels spec ", inputs[1].DebugString(), " does not fit (int32 (N))"));
      labels = inputs[1];
    }
    ASSIGN_OR_RETURN(elem_, ToElem(options.dtype));
    grad_bytes_ = static_cast<size_t>(desc_.n * desc_.classes) * sizeof(float);
    signature_.inputs = {logits, labels};
    signature_.output = TensorSpec::Plain(DType::kF32, Shape{});
    signature_.saved_bytes = AlignUp(grad_bytes_) + static_cast<size_t>(desc_.n) * sizeof(float);
    signature_.backward_reads_inputs = false;
    signature_.backward_reads_output = false;
    // The bad-label record on the device and its host copy.
    ASSIGN_OR_RETURN(bad_label_, Buffer::Allocate(context_->device, sizeof(uint64_t)));
    RETURN_IF_ERROR(Memset(bad_label_.data(), context_->device, 0xff, sizeof(uint64_t)));
    ASSIGN_OR_RETURN(bad_label_host_, Buffer::AllocatePinnedHost(sizeof(uint64_t)));
    *static_cast<uint64_t*>(bad_label_host_.data()) = kNoBadLabel;
    implementation_ = "cuda:softmax_xent";
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    RETURN_IF_ERROR(CheckLabelsSoFar());
    ASSIGN_OR_RETURN(const void* logits, Input(args, 0));
    ASSIGN_OR_RETURN(const void* labels, Input(args, 1));
    RETURN_IF_ERROR(Require(args.y, "y"));
    RETURN_IF_ERROR(Require(args.saved, "saved"));
    float* grad = static_cast<float*>(args.saved);
    float* row_loss =
        reinterpret_cast<float*>(static_cast<char*>(args.saved) + AlignUp(grad_bytes_));
    cudaStream_t stream = context_->raw_stream();
    RETURN_IF_ERROR(Launched(
        LaunchSoftmaxXentForward(logits, elem_, static_cast<const int32_t*>(labels), desc_.n,
                                 desc_.classes, grad, row_loss, static_cast<float*>(args.y),
                                 static_cast<uint64_t*>(bad_label_.data()), stream),
        "softmax cross-entropy forward"));
    return Launched(cudaMemcpyAsync(bad_label_host_.data(), bad_label_.data(), sizeof(uint64_t),
                                    cudaMemcpyDeviceToHost, stream),
                    "softmax cross-entropy label check copy");
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    RETURN_IF_ERROR(CheckLabelsSoFar());
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    RETURN_IF_ERROR(Require(args.saved, "saved"));
    cudaStream_t stream = context_->raw_stream();
    if (args.loss_scale != nullptr)  // dynamic loss scaling: the scaled gradient
      return Launched(LaunchScaledCast(static_cast<const float*>(args.saved), args.loss_scale,
                                       args.dx[0], elem_, desc_.n * desc_.classes, stream),
                      "softmax cross-entropy backward");
    if (elem_ == Elem::kF32)
      return Launched(
          cudaMemcpyAsync(args.dx[0], args.saved, grad_bytes_, cudaMemcpyDeviceToDevice, stream),
          "softmax cross-entropy backward");
    return Launched(
        LaunchCast(args.saved, Elem::kF32, args.dx[0], elem_, desc_.n * desc_.classes, stream),
        "softmax cross-entropy backward");
  }

  absl::Status DeviceErrors() const override { return CheckLabelsSoFar(); }

 private:
  // The bad-label record as the last completed forward left it.
  absl::Status CheckLabelsSoFar() const {
    const uint64_t record = *static_cast<const volatile uint64_t*>(bad_label_host_.data());
    if (record == kNoBadLabel) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(what_, ": label ", BadLabelValue(record),
                                                   " of example ", BadLabelExample(record),
                                                   " is outside [0, ", desc_.classes, ")"));
  }

  const SoftmaxXentDesc desc_;
  Elem elem_ = Elem::kF32;
  size_t grad_bytes_ = 0;
  Buffer bad_label_;       // device: PackBadLabel of the first bad example, or kNoBadLabel
  Buffer bad_label_host_;  // pinned host copy, written behind each forward
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const SoftmaxXentDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<SoftmaxXentKernel>(std::move(context), desc, options, inputs);
}

}  // namespace cnnbench::cuda
