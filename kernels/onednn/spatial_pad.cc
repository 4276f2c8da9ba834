// The spatial pad/crop (oneDNN has no primitive for it): plain NCHW loops
// of row copies, y(i, j) = x(i - top, j - left) inside x, zeros around;
// the backward is the same copy the other way, dx(i, j) = dy(i + top,
// j + left). Byte copies, so any element type.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/status.h"
#include "kernels/onednn/ops.h"

namespace cnnbench {
namespace onednn {
namespace {

// to(n, c, i, j) = from(n, c, i - shift_h, j - shift_w) where that lies in
// `from`, else 0, for plain (N,C,H,W) tensors of `bytes`-byte elements.
void ShiftedCopy(const char* from, const Dims4& from_dims, char* to, const Dims4& to_dims,
                 int64_t shift_h, int64_t shift_w, size_t bytes) {
  const int64_t first = std::clamp<int64_t>(shift_w, 0, to_dims.w);  // first copied column
  const int64_t last = std::clamp<int64_t>(shift_w + from_dims.w, 0, to_dims.w);
  const size_t to_row = static_cast<size_t>(to_dims.w) * bytes;
  const size_t from_row = static_cast<size_t>(from_dims.w) * bytes;
  const int64_t planes = to_dims.n * to_dims.c;
#pragma omp parallel for
  for (int64_t plane = 0; plane < planes; ++plane)
    for (int64_t i = 0; i < to_dims.h; ++i) {
      char* row = to + (plane * to_dims.h + i) * to_row;
      const int64_t source = i - shift_h;
      if (source < 0 || source >= from_dims.h || first >= last) {
        std::memset(row, 0, to_row);
        continue;
      }
      const char* in = from + (plane * from_dims.h + source) * from_row;
      std::memset(row, 0, static_cast<size_t>(first) * bytes);
      std::memcpy(row + first * bytes, in + (first - shift_w) * bytes,
                  static_cast<size_t>(last - first) * bytes);
      std::memset(row + last * bytes, 0, static_cast<size_t>(to_dims.w - last) * bytes);
    }
}

class SpatialPadKernel : public OneDnnKernel {
 public:
  SpatialPadKernel(std::shared_ptr<Context> context, const SpatialPadDesc& desc)
      : OneDnnKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const SpatialPadDesc& d, const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(inputs, 1, what_));
    signature_.inputs = {TensorSpec::Plain(options.dtype, d.dims.shape())};
    signature_.output = TensorSpec::Plain(options.dtype, d.output().shape());
    signature_.backward_reads_inputs = false;
    signature_.backward_reads_output = false;
    bytes_ = SizeOf(options.dtype);
    implementation_ = "cnnbench:spad";
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    RETURN_IF_ERROR(Require(args.y, "y"));
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    ShiftedCopy(static_cast<const char*>(x), desc_.dims, static_cast<char*>(args.y),
                desc_.output(), desc_.top, desc_.left, bytes_);
    return absl::OkStatus();
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    ShiftedCopy(static_cast<const char*>(args.dy), desc_.output(), static_cast<char*>(args.dx[0]),
                desc_.dims, -desc_.top, -desc_.left, bytes_);
    return absl::OkStatus();
  }

 private:
  const SpatialPadDesc desc_;
  size_t bytes_ = 4;  // per element
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const SpatialPadDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<SpatialPadKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
