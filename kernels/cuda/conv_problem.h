// What the cuda backend's convolution asks cuDNN for, derived from a
// ConvDesc, a precision and an activation layout: the dims and strides of x,
// w and y as cuDNN's graph API takes them, pre/post padding, strides,
// dilation, the data and compute types, and the scratch arithmetic. Plain
// C++ (no CUDA, no cudnn-frontend), so every build can test it.
#ifndef CNNBENCH_KERNELS_CUDA_CONV_PROBLEM_H_
#define CNNBENCH_KERNELS_CUDA_CONV_PROBLEM_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "kernels/desc.h"

namespace cnnbench::cuda {

// The three convolution passes, each one cuDNN graph.
enum class ConvPass { kForward, kBackwardData, kBackwardFilter };
inline constexpr ConvPass kConvPasses[] = {ConvPass::kForward, ConvPass::kBackwardData,
                                           ConvPass::kBackwardFilter};
// "fprop", "dgrad", "wgrad": cuDNN's names, used in messages and implementation().
const char* ConvPassName(ConvPass pass);

// A tensor as cuDNN's graph API describes it: dims always in logical order
// ((N,C,H,W) for activations, (K,C/g,R,S) for weights), strides giving
// the storage order (NCHW or NHWC).
struct ConvTensor {
  std::array<int64_t, 4> dims{};
  std::array<int64_t, 4> strides{};
  int64_t elements() const { return dims[0] * dims[1] * dims[2] * dims[3]; }
};

// Dense strides of logical dims (a, b, c, d) stored as `layout` (kNCHW:
// a,b,c,d row-major; kNHWC: a,c,d,b row-major).
std::array<int64_t, 4> DenseStrides(const std::array<int64_t, 4>& dims, Layout layout);

struct ConvProblem {
  ConvDesc desc;
  Precision precision = Precision::kFp32;
  Layout layout = Layout::kNCHW;  // of x, y and w alike
  DType io_type = DType::kF32;    // x, w, y and their gradients
  // Tensor-core math on fp32 data (tf32); false keeps fp32 math exact.
  bool allow_tf32 = false;
  ConvTensor x, w, y;
  std::array<int64_t, 2> pre_padding{}, post_padding{}, stride{}, dilation{};  // (h, w)
  // The plan cache's key: descriptor, precision and layout.
  std::string key;
};

// Checks that cuDNN can be asked for `desc` at `precision` in `layout`
// (kNCHW or kNHWC) and fills in what it is asked. Compute is always fp32.
absl::StatusOr<ConvProblem> MakeConvProblem(const ConvDesc& desc, Precision precision,
                                            Layout layout);

// The scratch one kernel needs: the largest of its passes' workspaces,
// rounded up to `alignment` (the executor hands one buffer to every call).
size_t ConvScratchBytes(const std::array<int64_t, 3>& workspace_bytes, size_t alignment);

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_CONV_PROBLEM_H_
