// Global average pooling (a window over the whole plane, no padding: the
// spatial mean before squeeze-and-excitation and the logits) as the
// backend's own loops over the input's layout as given (plain, NHWC, or
// channels blocked by 8 or 16). oneDNN 2.6 pools a bf16 tensor blocked by 8
// channels (a grouped convolution's output at 8 channels per group,
// RegNet's) only with its reference kernel, ref:any, which took 78% of
// RegNetY-400MF's bf16 step here (docs/results/2026-12-05-zoo-part2.md).
// Output (N,C,1,1), plain. fp32 sums on fp32 and bf16. Backward: dx =
// dy[n, c] / (H W) everywhere in x's layout (a blocked layout's padding
// channels 0).
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "core/status.h"
#include "kernels/onednn/layout_walk.h"
#include "kernels/onednn/ops.h"

namespace cnnbench {
namespace onednn {
namespace {

using dnnl::memory;

template <typename T>
void Mean(const LayoutWalk& k, const void* in, void* out) {
  const T* x = static_cast<const T*>(in);
  T* y = static_cast<T*>(out);
  const int64_t tasks = k.n * k.blocks();
  const float scale = 1.0f / static_cast<float>(k.h * k.w);
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t n = t / k.blocks(), cb = t % k.blocks();
    float sum[64] = {};
    for (int64_t h = 0; h < k.h; ++h)
      for (int64_t w = 0; w < k.w; ++w) {
        const int64_t at = k.at(n, cb, h, w);
#pragma omp simd
        for (int64_t j = 0; j < k.block; ++j) sum[j] += LoadValue(x + at + j);
      }
    for (int64_t j = 0; j < k.block; ++j) {
      const int64_t c = cb * k.block + j;
      if (c < k.c) StoreValue(y + n * k.c + c, sum[j] * scale);
    }
  }
}

template <typename T>
void Spread(const LayoutWalk& k, const void* dy_in, void* dx_out) {
  const T* dy = static_cast<const T*>(dy_in);
  T* dx = static_cast<T*>(dx_out);
  const int64_t tasks = k.n * k.blocks();
  const float scale = 1.0f / static_cast<float>(k.h * k.w);
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t n = t / k.blocks(), cb = t % k.blocks();
    float g[64];
    for (int64_t j = 0; j < k.block; ++j) {
      const int64_t c = cb * k.block + j;
      g[j] = c < k.c ? LoadValue(dy + n * k.c + c) * scale : 0.0f;
    }
    for (int64_t h = 0; h < k.h; ++h)
      for (int64_t w = 0; w < k.w; ++w) {
        const int64_t at = k.at(n, cb, h, w);
#pragma omp simd
        for (int64_t j = 0; j < k.block; ++j) StoreValue(dx + at + j, g[j]);
      }
  }
}

class GlobalAvgPoolKernel : public OneDnnKernel {
 public:
  GlobalAvgPoolKernel(std::shared_ptr<Context> context, const PoolDesc& desc)
      : OneDnnKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const PoolDesc& d, const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(inputs, 1, what_));
    const DType dtype = options.dtype;
    ASSIGN_OR_RETURN(const TensorSpec input, WalkedInput(inputs, dtype, d.input(), what_, &walk_));
    signature_.inputs = {input};
    signature_.output = TensorSpec::Plain(dtype, d.output().shape());
    signature_.backward_reads_inputs = false;  // dx is dy spread
    signature_.backward_reads_output = false;
    dtype_ = dtype;
    implementation_ = "cnnbench:global_avg_pool";
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    if (dtype_ == DType::kBF16) {
      Mean<uint16_t>(walk_, x, args.y);
    } else {
      Mean<float>(walk_, x, args.y);
    }
    return absl::OkStatus();
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    if (dtype_ == DType::kBF16) {
      Spread<uint16_t>(walk_, args.dy, args.dx[0]);
    } else {
      Spread<float>(walk_, args.dy, args.dx[0]);
    }
    return absl::OkStatus();
  }

 private:
  const PoolDesc desc_;
  LayoutWalk walk_;
  DType dtype_ = DType::kF32;
};

}  // namespace

bool IsGlobalAveragePool(const PoolDesc& d) {
  auto whole = [](const WindowDim& w) {
    return w.kernel == w.in && w.out == 1 && w.pad_before == 0 && w.pad_after == 0 &&
           w.dilation == 1;
  };
  return d.algorithm != PoolAlgorithm::kMax && whole(d.h) && whole(d.w);
}

KernelOr CreateGlobalAveragePool(ContextPtr context, const PoolDesc& desc,
                                 const KernelOptions& options, const Inputs& inputs) {
  return MakeKernel<GlobalAvgPoolKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
