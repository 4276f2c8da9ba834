#include "kernels/cuda/conv_problem.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace cnnbench::cuda {

const char* ConvPassName(ConvPass pass) {
  switch (pass) {
    case ConvPass::kForward: return "fprop";
    case ConvPass::kBackwardData: return "dgrad";
    case ConvPass::kBackwardFilter: return "wgrad";
  }
  return "?";
}

std::array<int64_t, 4> DenseStrides(const std::array<int64_t, 4>& d, Layout layout) {
  if (layout == Layout::kNHWC) return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
  return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
}

absl::StatusOr<ConvProblem> MakeConvProblem(const ConvDesc& desc, Precision precision,
                                            Layout layout) {
  const std::string what = desc.ToString();
  if (absl::Status status = desc.Validate(); !status.ok())
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", status.message()));
  if (layout != Layout::kNCHW && layout != Layout::kNHWC)
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": layout ", LayoutName(layout), " (cuDNN takes nchw or nhwc)"));
  const WindowDim& h = desc.h;
  const WindowDim& w = desc.w;
  // cuDNN's output size must be the descriptor's: floor((in + pads - span) / stride) + 1.
  for (const WindowDim* d : {&h, &w}) {
    const int64_t span = (d->kernel - 1) * d->dilation + 1;
    const int64_t out = (d->in + d->pad_before + d->pad_after - span) / d->stride + 1;
    if (out != d->out)
      return absl::InvalidArgumentError(absl::StrCat(what, ": output size ", d->out,
                                                     " differs from cuDNN's ", out));
  }
  ConvProblem p;
  p.desc = desc;
  p.precision = precision;
  p.layout = layout;
  p.io_type = ActivationType(precision);
  p.allow_tf32 = precision == Precision::kTf32;
  p.x.dims = {desc.n, desc.c, h.in, w.in};
  p.w.dims = {desc.k, desc.c / desc.groups, h.kernel, w.kernel};
  p.y.dims = {desc.n, desc.k, h.out, w.out};
  for (ConvTensor* t : {&p.x, &p.w, &p.y}) t->strides = DenseStrides(t->dims, layout);
  p.pre_padding = {h.pad_before, w.pad_before};
  p.post_padding = {h.pad_after, w.pad_after};
  p.stride = {h.stride, w.stride};
  p.dilation = {h.dilation, w.dilation};
  p.key = absl::StrCat(what, "/", PrecisionName(precision), "/", LayoutName(layout));
  return p;
}

size_t ConvScratchBytes(const std::array<int64_t, 3>& workspace_bytes, size_t alignment) {
  int64_t largest = 0;
  for (int64_t bytes : workspace_bytes) largest = std::max(largest, bytes);
  const size_t a = std::max<size_t>(alignment, 1);
  return (static_cast<size_t>(largest) + a - 1) / a * a;
}

}  // namespace cnnbench::cuda
