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
using cuda::KernelOr;

struct CreateVisitor {
  const std::shared_ptr<Context>& context;
  const KernelOptions& options;
  const std::vector<TensorSpec>& inputs;
  KernelOr operator()(const ConvDesc& d) const {
    return cuda::CreateConv(context, d, options, inputs);
  }
  KernelOr operator()(const PoolDesc& d) const {
    return cuda::CreatePool(context, d, options, inputs);
  }
  KernelOr operator()(const FcDesc& d) const { return cuda::CreateFc(context, d, options, inputs); }
  KernelOr operator()(const BatchNormDesc& d) const {
    return cuda::CreateBatchNorm(context, d, options, inputs);
  }
  KernelOr operator()(const ReluDesc& d) const {
    return cuda::CreateRelu(context, d, options, inputs);
  }
  KernelOr operator()(const LrnDesc& d) const {
    return cuda::CreateLrn(context, d, options, inputs);
  }
  KernelOr operator()(const DropoutDesc& d) const {
    return cuda::CreateDropout(context, d, options, inputs);
  }
  KernelOr operator()(const ConcatDesc& d) const {
    return cuda::CreateConcat(context, d, options, inputs);
  }
  KernelOr operator()(const AddDesc& d) const {
    return cuda::CreateAdd(context, d, options, inputs);
  }
  KernelOr operator()(const SoftmaxXentDesc& d) const {
    return cuda::CreateSoftmaxXent(context, d, options, inputs);
  }
  KernelOr operator()(const GemmDesc& d) const {
    return cuda::CreateGemm(context, d, options, inputs);
  }
};

class SgdOptimizer final : public Optimizer {
 public:
  SgdOptimizer(std::shared_ptr<Context> context, const SgdDesc& desc)
      : context_(std::move(context)), desc_(desc) {}

  absl::Status Update(const UpdateArgs& args) override {
    if (args.params == nullptr || args.grads == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(desc_.ToString(), ": null params or grads"));
    if (desc_.momentum != 0.0 && args.momentum == nullptr)
      return absl::InvalidArgumentError(
          absl::StrCat(desc_.ToString(), ": momentum > 0 needs the momentum buffer"));
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

  absl::StatusOr<std::unique_ptr<Optimizer>> CreateOptimizer(const SgdDesc& desc) override {
    if (absl::Status status = desc.Validate(); !status.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("bad descriptor '", desc.ToString(), "': ", status.message()));
    return std::unique_ptr<Optimizer>(new SgdOptimizer(context_, desc));
  }

  absl::Status AddN(const TensorSpec& spec, const std::vector<const void*>& srcs,
                    void* dst) override {
    if (srcs.empty() || dst == nullptr)
      return absl::InvalidArgumentError(
          absl::StrCat("add_n of ", spec.DebugString(), ": no inputs or no output"));
    ASSIGN_OR_RETURN(cuda::Elem elem, cuda::ToElem(spec.dtype));
    const int64_t elements = static_cast<int64_t>(spec.bytes / SizeOf(spec.dtype));
    // More sources than one launch takes: sum the first batch into dst, then
    // keep adding batches to it (dst counts as one of the next batch's).
    size_t next = 0;
    while (next < srcs.size()) {
      cuda::AddNSources batch{};
      int count = 0;
      if (next > 0) batch.ptr[count++] = dst;
      while (count < cuda::kMaxAddN && next < srcs.size()) {
        if (srcs[next] == nullptr)
          return absl::InvalidArgumentError(
              absl::StrCat("add_n of ", spec.DebugString(), ": null input ", next));
        batch.ptr[count++] = srcs[next++];
      }
      CUDA_RETURN_IF_ERROR(
          cuda::LaunchAddN(batch, count, dst, elem, elements, context_->raw_stream()));
    }
    return absl::OkStatus();
  }

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

  absl::Status Upload(const TensorSpec& host, const void* src, const TensorSpec& to,
                      void* dst) override {
    if (!host.is_plain())
      return absl::InvalidArgumentError(
          absl::StrCat("upload from ", host.DebugString(), ": host data must be plain"));
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

  absl::Status Download(const TensorSpec& from, const void* src, const TensorSpec& host,
                        void* dst) override {
    if (!host.is_plain())
      return absl::InvalidArgumentError(
          absl::StrCat("download to ", host.DebugString(), ": host data must be plain"));
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

 protected:
  absl::Status CheckSupported(const OpDesc& desc, const KernelOptions& options) const override {
    if (options.dtype != DType::kF32 && options.dtype != DType::kF16 &&
        options.dtype != DType::kBF16)
      return absl::UnimplementedError(absl::StrCat("unsupported: ", DTypeName(options.dtype),
                                                   " on the cuda backend (", OpDescToString(desc),
                                                   ")"));
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<Kernel>> CreateKernel(
      const OpDesc& desc, const KernelOptions& options,
      const std::vector<TensorSpec>& inputs) override {
    RETURN_IF_ERROR(SetDevice());
    return std::visit(CreateVisitor{context_, options, inputs}, desc);
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
