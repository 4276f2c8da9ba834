// Channel multiply (oneDNN's binary_mul broadcasts an (N,C,1,1) x1 over a
// channel-blocked x0 only with its reference kernel, ref:any): the
// backend's own loops over x0's stored layout as given (plain NCHW, NHWC,
// or channels blocked by 8 or 16), y in the same layout, x1 plain (N,C,1,1)
// or (N,C). Parallel over (example, channel block); fp32 arithmetic on fp32
// and bf16. A channels-last x0 walks each channel at a stride of C (one
// task per channel): correct, not cache-friendly; the zoo's producers (the
// depthwise convolutions) give channel-blocked layouts here. Backward:
// dx0 = dy * x1 in x0's layout; dx1 = the sum over (H,W) of dy * x0,
// plain; one pass over dy and x0 when both are wanted.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "kernels/onednn/layout_walk.h"
#include "kernels/onednn/ops.h"

namespace cnnbench {
namespace onednn {
namespace {

using dnnl::memory;

using Walk = LayoutWalk;

// scale[j] = x1's value for channel cb * block + j of example n (padding
// channels: 0).
template <typename T>
void LoadScales(const Walk& k, const T* s, int64_t n, int64_t cb, float* scale) {
  for (int64_t j = 0; j < k.block; ++j) {
    const int64_t c = cb * k.block + j;
    scale[j] = c < k.c ? LoadValue(s + n * k.c + c) : 0.0f;
  }
}

// out = in * scale[n * C + c] over every stored element of x0's layout
// (padding channels: 0).
template <typename T>
void Multiply(const Walk& k, const void* in, const void* scales, void* out) {
  const T* x = static_cast<const T*>(in);
  const T* s = static_cast<const T*>(scales);
  T* y = static_cast<T*>(out);
  const int64_t tasks = k.n * k.blocks();
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t n = t / k.blocks(), cb = t % k.blocks();
    float scale[64];
    LoadScales(k, s, n, cb, scale);
    const int64_t base = n * k.stride[0] + cb * k.stride[1];
    for (int64_t h = 0; h < k.h; ++h)
      for (int64_t w = 0; w < k.w; ++w) {
        const int64_t at = base + h * k.stride[2] + w * k.stride[3];
#pragma omp simd
        for (int64_t j = 0; j < k.block; ++j)
          StoreValue(y + at + j, LoadValue(x + at + j) * scale[j]);
      }
  }
}

// ds[n * C + c] = the sum over (h, w) of dy * x0 (fp32 accumulation).
template <typename T>
void ScaleGradient(const Walk& k, const void* dy_in, const void* x_in, void* ds_out) {
  const T* dy = static_cast<const T*>(dy_in);
  const T* x = static_cast<const T*>(x_in);
  T* ds = static_cast<T*>(ds_out);
  const int64_t tasks = k.n * k.blocks();
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t n = t / k.blocks(), cb = t % k.blocks();
    float sum[64] = {};
    const int64_t base = n * k.stride[0] + cb * k.stride[1];
    for (int64_t h = 0; h < k.h; ++h)
      for (int64_t w = 0; w < k.w; ++w) {
        const int64_t at = base + h * k.stride[2] + w * k.stride[3];
#pragma omp simd
        for (int64_t j = 0; j < k.block; ++j)
          sum[j] += LoadValue(dy + at + j) * LoadValue(x + at + j);
      }
    for (int64_t j = 0; j < k.block; ++j) {
      const int64_t c = cb * k.block + j;
      if (c < k.c) StoreValue(ds + n * k.c + c, sum[j]);
    }
  }
}

// Both gradients in one pass over dy: dx0 = dy * x1 and ds = the sum over
// (h, w) of dy * x0 (dy read once, not once per gradient).
template <typename T>
void BothGradients(const Walk& k, const void* dy_in, const void* x_in, const void* scales,
                   void* dx_out, void* ds_out) {
  const T* dy = static_cast<const T*>(dy_in);
  const T* x = static_cast<const T*>(x_in);
  const T* s = static_cast<const T*>(scales);
  T* dx = static_cast<T*>(dx_out);
  T* ds = static_cast<T*>(ds_out);
  const int64_t tasks = k.n * k.blocks();
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t n = t / k.blocks(), cb = t % k.blocks();
    float scale[64];
    float sum[64] = {};
    LoadScales(k, s, n, cb, scale);
    const int64_t base = n * k.stride[0] + cb * k.stride[1];
    for (int64_t h = 0; h < k.h; ++h)
      for (int64_t w = 0; w < k.w; ++w) {
        const int64_t at = base + h * k.stride[2] + w * k.stride[3];
#pragma omp simd
        for (int64_t j = 0; j < k.block; ++j) {
          const float g = LoadValue(dy + at + j);
          sum[j] += g * LoadValue(x + at + j);
          StoreValue(dx + at + j, g * scale[j]);
        }
      }
    for (int64_t j = 0; j < k.block; ++j) {
      const int64_t c = cb * k.block + j;
      if (c < k.c) StoreValue(ds + n * k.c + c, sum[j]);
    }
  }
}

class ChannelMulKernel : public OneDnnKernel {
 public:
  ChannelMulKernel(std::shared_ptr<Context> context, const ChannelMulDesc& desc)
      : OneDnnKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const ChannelMulDesc& d, const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(inputs, 2, what_));
    const DType dtype = options.dtype;
    ASSIGN_OR_RETURN(const TensorSpec input, WalkedInput(inputs, dtype, d.dims, what_, &walk_));
    // x1 plain: (N,C) from an fc as given, else (N,C,1,1) (a blocked one is
    // reordered at the edge).
    TensorSpec scales = TensorSpec::Plain(dtype, Shape{d.dims.n, d.dims.c, 1, 1});
    if (inputs.size() == 2 && inputs[1].is_plain() && inputs[1].dtype == dtype &&
        d.IsScaleShape(inputs[1].shape))
      scales = inputs[1];
    signature_.inputs = {input, scales};
    signature_.output = input;
    signature_.backward_reads_inputs = true;
    signature_.backward_reads_output = false;
    dtype_ = dtype;
    implementation_ = "cnnbench:chmul";
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    ASSIGN_OR_RETURN(const void* s, Input(args, 1));
    RETURN_IF_ERROR(Require(args.y, "y"));
    if (dtype_ == DType::kBF16) {
      Multiply<uint16_t>(walk_, x, s, args.y);
    } else {
      Multiply<float>(walk_, x, s, args.y);
    }
    return absl::OkStatus();
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    ASSIGN_OR_RETURN(const void* s, Input(args, 1));
    const bool bf16 = dtype_ == DType::kBF16;
    void* dx0 = args.dx.empty() ? nullptr : args.dx[0];
    void* dx1 = args.dx.size() > 1 ? args.dx[1] : nullptr;
    if (dx0 != nullptr && dx1 != nullptr) {
      if (bf16) {
        BothGradients<uint16_t>(walk_, args.dy, x, s, dx0, dx1);
      } else {
        BothGradients<float>(walk_, args.dy, x, s, dx0, dx1);
      }
      return absl::OkStatus();
    }
    if (dx0 != nullptr) {
      if (bf16) {
        Multiply<uint16_t>(walk_, args.dy, s, args.dx[0]);
      } else {
        Multiply<float>(walk_, args.dy, s, args.dx[0]);
      }
    }
    if (args.dx.size() > 1 && args.dx[1] != nullptr) {
      if (bf16) {
        ScaleGradient<uint16_t>(walk_, args.dy, x, args.dx[1]);
      } else {
        ScaleGradient<float>(walk_, args.dy, x, args.dx[1]);
      }
    }
    return absl::OkStatus();
  }

 private:
  const ChannelMulDesc desc_;
  Walk walk_;
  DType dtype_ = DType::kF32;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const ChannelMulDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<ChannelMulKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
