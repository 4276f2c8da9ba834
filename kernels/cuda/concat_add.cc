// Channel concatenation and the residual add. Concat is one strided 2-D copy
// per input (its channels are a contiguous run per example in NCHW, per
// pixel in NHWC); its backward copies the slices back. Add sums with the
// backend's AddN kernel; its backward copies dy to each requested dx.
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/cuda/op_spec.h"
#include "kernels/cuda/ops.h"

namespace cnnbench::cuda {
namespace {

class ConcatKernel : public CudaKernel {
 public:
  ConcatKernel(ContextPtr context, const ConcatDesc& desc)
      : CudaKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(what_, inputs, desc_.channels.size()));
    for (size_t i = 0; i < desc_.channels.size(); ++i) {
      const Shape shape{desc_.n, desc_.channels[i], desc_.h, desc_.w};
      ASSIGN_OR_RETURN(TensorSpec spec, ResolveInput(what_, *context_, options, inputs, i, shape));
      if (i > 0 && IsNhwc(spec) != IsNhwc(signature_.inputs[0]))
        return absl::UnimplementedError(
            absl::StrCat("unsupported: ", what_, ": inputs in different layouts (",
                         spec.DebugString(), ", ", signature_.inputs[0].DebugString(), ")"));
      signature_.inputs.push_back(spec);
    }
    nhwc_ = IsNhwc(signature_.inputs[0]);
    element_bytes_ = SizeOf(options.dtype);
    signature_.output = OutputLike(signature_.inputs[0], desc_.output());
    signature_.backward_reads_inputs = false;
    signature_.backward_reads_output = false;
    implementation_ = "cuda:concat";
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    RETURN_IF_ERROR(Require(args.y, "y"));
    int64_t offset = 0;  // first output channel of input i
    for (size_t i = 0; i < desc_.channels.size(); ++i) {
      ASSIGN_OR_RETURN(const void* x, Input(args, i));
      const Slice s = SliceOf(i, offset);
      RETURN_IF_ERROR(Launched(
          cudaMemcpy2DAsync(static_cast<char*>(args.y) + s.offset, s.wide_pitch, x, s.width,
                            s.width, s.rows, cudaMemcpyDeviceToDevice, context_->raw_stream()),
          "concat forward"));
      offset += desc_.channels[i];
    }
    return absl::OkStatus();
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    int64_t offset = 0;
    for (size_t i = 0; i < desc_.channels.size(); ++i) {
      const Slice s = SliceOf(i, offset);
      offset += desc_.channels[i];
      if (i >= args.dx.size() || args.dx[i] == nullptr) continue;
      RETURN_IF_ERROR(Launched(
          cudaMemcpy2DAsync(args.dx[i], s.width, static_cast<const char*>(args.dy) + s.offset,
                            s.wide_pitch, s.width, s.rows, cudaMemcpyDeviceToDevice,
                            context_->raw_stream()),
          "concat backward"));
    }
    return absl::OkStatus();
  }

 private:
  // Input i's place in the output, in bytes: `rows` runs of `width` bytes,
  // `wide_pitch` apart in the output, starting at `offset`.
  struct Slice {
    size_t offset, width, wide_pitch, rows;
  };
  Slice SliceOf(size_t i, int64_t first_channel) const {
    const int64_t total = desc_.output().c, hw = desc_.h * desc_.w;
    const size_t es = element_bytes_;
    if (nhwc_)  // one run per pixel
      return {static_cast<size_t>(first_channel) * es, static_cast<size_t>(desc_.channels[i]) * es,
              static_cast<size_t>(total) * es, static_cast<size_t>(desc_.n * hw)};
    return {static_cast<size_t>(first_channel * hw) * es,
            static_cast<size_t>(desc_.channels[i] * hw) * es, static_cast<size_t>(total * hw) * es,
            static_cast<size_t>(desc_.n)};
  }

  const ConcatDesc desc_;
  bool nhwc_ = false;
  size_t element_bytes_ = 4;
};

class AddKernel : public CudaKernel {
 public:
  AddKernel(ContextPtr context, const AddDesc& desc)
      : CudaKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(what_, inputs, 2));
    const Shape shape = desc_.dims.shape();
    ASSIGN_OR_RETURN(TensorSpec a, ResolveInput(what_, *context_, options, inputs, 0, shape));
    ASSIGN_OR_RETURN(TensorSpec b, ResolveInput(what_, *context_, options, inputs, 1, shape));
    if (IsNhwc(a) != IsNhwc(b))
      return absl::UnimplementedError(absl::StrCat("unsupported: ", what_,
                                                   ": inputs in different layouts (",
                                                   a.DebugString(), ", ", b.DebugString(), ")"));
    ASSIGN_OR_RETURN(elem_, ToElem(options.dtype));
    bytes_ = static_cast<size_t>(desc_.dims.elements()) * SizeOf(options.dtype);
    signature_.inputs = {a, b};
    signature_.output = a;
    signature_.backward_reads_inputs = false;
    signature_.backward_reads_output = fused_activation();  // the mask is read from y
    if (fused_activation()) {
      // One masked pass writes the gradient both inputs share, summing the
      // output's gradient parts on the way (docs/kernels.md).
      signature_.shared_input_gradient = true;
      signature_.sums_output_gradient = true;
    }
    implementation_ = absl::StrCat("cuda:add", ActivationSuffix(desc_.activation));
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* a, Input(args, 0));
    ASSIGN_OR_RETURN(const void* b, Input(args, 1));
    RETURN_IF_ERROR(Require(args.y, "y"));
    AddNSources sources{};
    sources.ptr[0] = a;
    sources.ptr[1] = b;
    const int64_t n = desc_.dims.elements();
    cudaStream_t stream = context_->raw_stream();
    return Launched(fused_activation() ? LaunchAddNActivation(desc_.activation, sources, 2, args.y,
                                                              elem_, n, stream)
                                       : LaunchAddN(sources, 2, args.y, elem_, n, stream),
                    "add forward");
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (fused_activation()) return MaskedBackward(args);
    for (size_t i = 0; i < 2 && i < args.dx.size(); ++i) {
      if (args.dx[i] == nullptr || args.dx[i] == args.dy) continue;
      RETURN_IF_ERROR(Require(args.dy, "dy"));
      RETURN_IF_ERROR(Launched(cudaMemcpyAsync(args.dx[i], args.dy, bytes_,
                                               cudaMemcpyDeviceToDevice, context_->raw_stream()),
                               "add backward"));
    }
    return absl::OkStatus();
  }

 private:
  // dx = (dy, or the sum of dy_parts) where y > 0: written once into the
  // first dx, copied into a second, distinct one. Parts beyond one launch's
  // kMaxAddN are summed into dx first, unmasked; the last launch masks.
  absl::Status MaskedBackward(const KernelArgs& args) {
    RETURN_IF_ERROR(Require(args.y, "y"));
    std::vector<const void*> single;
    const std::vector<const void*>* parts = &args.dy_parts;
    if (args.dy_parts.empty()) {
      RETURN_IF_ERROR(Require(args.dy, "dy"));
      single = {args.dy};
      parts = &single;
    }
    void* first = nullptr;
    for (size_t i = 0; i < 2 && i < args.dx.size(); ++i) {
      void* dx = args.dx[i];
      if (dx == nullptr || dx == first) continue;
      if (first != nullptr) {
        RETURN_IF_ERROR(Launched(
            cudaMemcpyAsync(dx, first, bytes_, cudaMemcpyDeviceToDevice, context_->raw_stream()),
            "add backward copy"));
        continue;
      }
      first = dx;
      RETURN_IF_ERROR(MaskedSum(*parts, args.y, dx));
    }
    return absl::OkStatus();
  }

  absl::Status MaskedSum(const std::vector<const void*>& parts, const void* mask, void* dx) {
    const int64_t n = desc_.dims.elements();
    cudaStream_t stream = context_->raw_stream();
    size_t next = 0;
    bool partial = false;  // dx holds an unmasked partial sum
    while (next < parts.size()) {
      AddNSources batch{};
      int count = 0;
      if (partial) batch.ptr[count++] = dx;
      while (count < kMaxAddN && next < parts.size()) {
        if (parts[next] == nullptr)
          return absl::InvalidArgumentError(absl::StrCat(what_, ": null dy part ", next));
        batch.ptr[count++] = parts[next++];
      }
      const bool last = next == parts.size();
      RETURN_IF_ERROR(Launched(last ? LaunchMaskedAddN(desc_.activation, batch, count, mask, dx,
                                                       elem_, n, stream)
                                    : LaunchAddN(batch, count, dx, elem_, n, stream),
                               "add backward"));
      partial = true;
    }
    return absl::OkStatus();
  }

  // A fused ReLU or ReLU6 (CheckSupported refuses every other kind here).
  bool fused_activation() const { return desc_.activation != ActivationKind::kNone; }
  const AddDesc desc_;
  Elem elem_ = Elem::kF32;
  size_t bytes_ = 0;
};

// The channel pad: y zeroed, then x's channels copied into the middle as
// one strided 2-D copy (a run per example in NCHW, per pixel in NHWC); the
// backward copies the run back.
class ChannelPadKernel : public CudaKernel {
 public:
  ChannelPadKernel(ContextPtr context, const ChannelPadDesc& desc)
      : CudaKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(what_, inputs, 1));
    ASSIGN_OR_RETURN(TensorSpec spec,
                     ResolveInput(what_, *context_, options, inputs, 0, desc_.dims.shape()));
    signature_.inputs.push_back(spec);
    signature_.output = OutputLike(spec, desc_.output());
    signature_.backward_reads_inputs = false;
    signature_.backward_reads_output = false;
    const size_t es = SizeOf(options.dtype), hw = static_cast<size_t>(desc_.dims.h * desc_.dims.w);
    if (IsNhwc(spec)) {  // per pixel: C elements into K
      width_ = static_cast<size_t>(desc_.dims.c) * es;
      pitch_ = static_cast<size_t>(desc_.output().c) * es;
      offset_ = static_cast<size_t>(desc_.before) * es;
      rows_ = static_cast<size_t>(desc_.dims.n) * hw;
    } else {  // per example: C x H x W into K x H x W
      width_ = static_cast<size_t>(desc_.dims.c) * hw * es;
      pitch_ = static_cast<size_t>(desc_.output().c) * hw * es;
      offset_ = static_cast<size_t>(desc_.before) * hw * es;
      rows_ = static_cast<size_t>(desc_.dims.n);
    }
    implementation_ = "cuda:chpad";
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    RETURN_IF_ERROR(Require(args.y, "y"));
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Launched(cudaMemsetAsync(args.y, 0, pitch_ * rows_, context_->raw_stream()),
                             "channel pad forward (zeros)"));
    return Launched(
        cudaMemcpy2DAsync(static_cast<char*>(args.y) + offset_, pitch_, x, width_, width_, rows_,
                          cudaMemcpyDeviceToDevice, context_->raw_stream()),
        "channel pad forward");
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    return Launched(
        cudaMemcpy2DAsync(args.dx[0], width_, static_cast<const char*>(args.dy) + offset_, pitch_,
                          width_, rows_, cudaMemcpyDeviceToDevice, context_->raw_stream()),
        "channel pad backward");
  }

 private:
  const ChannelPadDesc desc_;
  size_t width_ = 0, pitch_ = 0, offset_ = 0, rows_ = 0;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const ChannelPadDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<ChannelPadKernel>(std::move(context), desc, options, inputs);
}

KernelOr CreateOp(ContextPtr context, const ConcatDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<ConcatKernel>(std::move(context), desc, options, inputs);
}

KernelOr CreateOp(ContextPtr context, const AddDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<AddKernel>(std::move(context), desc, options, inputs);
}

}  // namespace cnnbench::cuda
