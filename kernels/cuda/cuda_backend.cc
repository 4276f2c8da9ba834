// The cuda backend: descriptor dispatch to the op files, the fused SGD
// update, and device memory operations (fills, copies, gradient sums,
// layout/type reorders, host uploads and downloads through a staging
// buffer), all enqueued on one stream.
#include "kernels/cuda/cuda_backend.h"

#include <mutex>
#include <variant>

#include "absl/strings/str_cat.h"
#include "core/cuda_status.h"
#include "kernels/cuda/ops.h"

namespace cnnbench {
namespace {

using cuda::Context;

class SgdOptimizer final : public Optimizer {
 public:
  SgdOptimizer(std::shared_ptr<Context> context, const SgdDesc& desc)
      : context_(std::move(context)), desc_(desc) {}

  absl::Status Update(const UpdateArgs& args) override {
    RETURN_IF_ERROR_AS_IS(CheckUpdateArgs(desc_, args));
    CUDA_RETURN_IF_ERROR(cuda::LaunchSgdUpdate(
        args.params, args.grads, args.momentum, desc_.count, desc_.learning_rate, desc_.momentum,
        desc_.weight_decay, args.loss_scale, args.overflow, args.step, args.good_steps,
        args.growth_interval, context_->raw_stream()));
    return absl::OkStatus();
  }

 private:
  std::shared_ptr<Context> context_;
  const SgdDesc desc_;
};

bool RowMajor(const TensorSpec& s) { return s.is_plain() && s.layout != Layout::kNHWC; }

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(std::shared_ptr<Context> context) : context_(std::move(context)) {}

  absl::string_view name() const override { return "cuda"; }
  Device device() const override { return context_->device; }
  const Stream& stream() const override { return context_->stream; }
  size_t alignment() const override { return 256; }

  absl::Status Reorder(const TensorSpec& from, const void* src, const TensorSpec& to,
                       void* dst) override {
    auto what = [&] {
      return absl::StrCat("reorder ", from.DebugString(), " -> ", to.DebugString());
    };
    if (src == nullptr || dst == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(what(), ": null buffer"));
    if (from.shape.num_elements() != to.shape.num_elements())
      return absl::InvalidArgumentError(absl::StrCat(what(), ": element counts differ"));
    if (!from.is_plain() || !to.is_plain())
      return absl::UnimplementedError(
          absl::StrCat("unsupported: ", what(), " (the cuda backend's layouts are plain)"));
    ASSIGN_OR_RETURN(cuda::Elem a, cuda::ToElem(from.dtype));
    ASSIGN_OR_RETURN(cuda::Elem b, cuda::ToElem(to.dtype));
    const int64_t count = from.shape.num_elements();
    cudaStream_t stream = context_->raw_stream();
    const bool same_order = from.layout == to.layout || (RowMajor(from) && RowMajor(to));
    if (same_order) {
      if (from.dtype == to.dtype) {
        if (src != dst)
          CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src,
                                               static_cast<size_t>(count) * SizeOf(to.dtype),
                                               cudaMemcpyDeviceToDevice, stream));
        return absl::OkStatus();
      }
      CUDA_RETURN_IF_ERROR(cuda::LaunchCast(src, a, dst, b, count, stream));
      return absl::OkStatus();
    }
    const Shape& s = from.shape.rank() == 4 ? from.shape : to.shape;
    if (s.rank() != 4) return absl::UnimplementedError(absl::StrCat("unsupported: ", what()));
    if (from.layout == Layout::kNHWC && RowMajor(to)) {
      CUDA_RETURN_IF_ERROR(cuda::LaunchNhwcToNchw(src, a, dst, b, s[0], s[1], s[2], s[3], stream));
      return absl::OkStatus();
    }
    if (RowMajor(from) && to.layout == Layout::kNHWC) {
      CUDA_RETURN_IF_ERROR(cuda::LaunchNchwToNhwc(src, a, dst, b, s[0], s[1], s[2], s[3], stream));
      return absl::OkStatus();
    }
    return absl::UnimplementedError(absl::StrCat("unsupported: ", what()));
  }

 protected:
  absl::StatusOr<std::unique_ptr<Optimizer>> CreateSgd(const SgdDesc& desc) override {
    return std::unique_ptr<Optimizer>(new SgdOptimizer(context_, desc));
  }

  absl::Status SumInto(const TensorSpec& spec, const std::vector<const void*>& srcs,
                       void* dst) override {
    ASSIGN_OR_RETURN(cuda::Elem elem, cuda::ToElem(spec.dtype));
    const int64_t elements = static_cast<int64_t>(spec.bytes / SizeOf(spec.dtype));
    // More sources than one launch takes: sum the first batch into dst, then
    // keep adding batches to it (dst counts as one of the next batch's).
    size_t next = 0;
    while (next < srcs.size()) {
      cuda::AddNSources batch{};
      int count = 0;
      if (next > 0) batch.ptr[count++] = dst;
      while (count < cuda::kMaxAddN && next < srcs.size()) batch.ptr[count++] = srcs[next++];
      CUDA_RETURN_IF_ERROR(
          cuda::LaunchAddN(batch, count, dst, elem, elements, context_->raw_stream()));
    }
    return absl::OkStatus();
  }

  absl::Status UploadChecked(const TensorSpec& host, const void* src, const TensorSpec& to,
                             void* dst) override {
    cudaStream_t stream = context_->raw_stream();
    if (host.dtype == to.dtype && host.layout == to.layout && host.bytes == to.bytes) {
      CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, host.bytes, cudaMemcpyHostToDevice, stream));
      CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
      return absl::OkStatus();
    }
    std::lock_guard<std::mutex> lock(staging_mutex_);
    ASSIGN_OR_RETURN(void* staging, Staging(host.bytes));
    CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(staging, src, host.bytes, cudaMemcpyHostToDevice, stream));
    RETURN_IF_ERROR(Reorder(host, staging, to, dst));
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    return absl::OkStatus();
  }

  absl::Status DownloadChecked(const TensorSpec& from, const void* src, const TensorSpec& host,
                               void* dst) override {
    cudaStream_t stream = context_->raw_stream();
    if (host.dtype == from.dtype && host.layout == from.layout && host.bytes == from.bytes) {
      CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, host.bytes, cudaMemcpyDeviceToHost, stream));
      CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
      return absl::OkStatus();
    }
    std::lock_guard<std::mutex> lock(staging_mutex_);
    ASSIGN_OR_RETURN(void* staging, Staging(host.bytes));
    RETURN_IF_ERROR(Reorder(from, src, host, staging));
    CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, staging, host.bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    return absl::OkStatus();
  }

  absl::Status CheckSupported(const OpDesc& desc, const KernelOptions& options) const override {
    if (options.dtype != DType::kF32 && options.dtype != DType::kF16 &&
        options.dtype != DType::kBF16)
      return absl::UnimplementedError(absl::StrCat("unsupported: ", DTypeName(options.dtype),
                                                   " on the cuda backend (", OpDescToString(desc),
                                                   ")"));
    // Fused activations: ReLU and ReLU6 here (bn and add in training and
    // inference, the conv epilogue forward only); any other kind stays a
    // layer of its own (the cuda activation op).
    const ActivationKind fused = FusedActivation(desc);
    if (fused != ActivationKind::kNone && fused != ActivationKind::kRelu &&
        fused != ActivationKind::kRelu6)
      return absl::UnimplementedError(absl::StrCat(
          "unsupported: a fused activation other than ReLU and ReLU6 on the cuda backend (",
          OpDescToString(desc), ")"));
    if (const auto* conv = std::get_if<ConvDesc>(&desc); conv != nullptr && conv->residual)
      return absl::UnimplementedError(absl::StrCat(
          "unsupported: a convolution's residual input on the cuda backend (its epilogue is not "
          "written; the plan keeps the add as a layer) (",
          OpDescToString(desc), ")"));
    if (const auto* conv = std::get_if<ConvDesc>(&desc);
        conv != nullptr && conv->activation != ActivationKind::kNone && !options.forward_only)
      return absl::UnimplementedError(absl::StrCat(
          "unsupported: a convolution's activation epilogue in training on the cuda backend (its "
          "backward is not written; the plan keeps the activation as a layer) (",
          OpDescToString(desc), ")"));
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<Kernel>> CreateKernel(
      const OpDesc& desc, const KernelOptions& options,
      const std::vector<TensorSpec>& inputs) override {
    RETURN_IF_ERROR(SetDevice());
    return CreateOpKernel(context_, desc, options, inputs);
  }

 private:
  absl::Status SetDevice() const {
    CUDA_RETURN_IF_ERROR(cudaSetDevice(context_->device.ordinal));
    return absl::OkStatus();
  }

  // A device buffer of at least `bytes` for host transfers that change
  // layout or type (grown, never shrunk; callers hold staging_mutex_).
  absl::StatusOr<void*> Staging(size_t bytes) {
    if (staging_.size() < bytes) {
      RETURN_IF_ERROR(context_->stream.Synchronize());  // the old one may be in use
      staging_ = Buffer();
      ASSIGN_OR_RETURN(staging_, Buffer::Allocate(context_->device, bytes));
    }
    return staging_.data();
  }

  std::shared_ptr<Context> context_;
  std::mutex staging_mutex_;
  Buffer staging_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(const Device& device,
                                                           const CudaBackendOptions& options) {
  ASSIGN_OR_RETURN(std::shared_ptr<Context> context, Context::Create(device, options));
  return std::unique_ptr<Backend>(new CudaBackend(std::move(context)));
}

}  // namespace cnnbench
