// The walk of the backend's own loops over an activation in the layout
// oneDNN gave it (plain NCHW, NHWC, or channels blocked by 8 or 16): where
// element (n, c, h, w) is stored. The channel multiply and layer norm use
// it so that they take their producers' layouts as given.
#ifndef CNNBENCH_KERNELS_ONEDNN_LAYOUT_WALK_H_
#define CNNBENCH_KERNELS_ONEDNN_LAYOUT_WALK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/status.h"

#include "kernels/onednn/common.h"
#include "kernels/onednn/loop_util.h"

namespace cnnbench {
namespace onednn {

// Element (n, c, h, w) is at n * s[0] + (c / block) * s[1] + h * s[2] +
// w * s[3] + c % block, for layouts blocked at most on channels.
struct LayoutWalk {
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t block = 1;
  int64_t stride[4] = {0, 0, 0, 0};
  int64_t blocks() const { return (c + block - 1) / block; }
  int64_t at(int64_t n_, int64_t block_, int64_t h_, int64_t w_) const {
    return n_ * stride[0] + block_ * stride[1] + h_ * stride[2] + w_ * stride[3];
  }
};

// The walk of `md` over `d`, or false for a layout it cannot walk (blocked
// on another dimension than channels, or twice).
inline bool MakeLayoutWalk(const dnnl::memory::desc& md, const Dims4& d, LayoutWalk* walk) {
  const dnnl_memory_desc_t& m = md.data;
  if (m.ndims != 4 || m.format_kind != dnnl_blocked || m.offset0 != 0) return false;
  const dnnl_blocking_desc_t& b = m.format_desc.blocking;
  int64_t block = 1;
  for (int i = 0; i < b.inner_nblks; ++i) {
    if (b.inner_idxs[i] != 1) return false;  // channel blocks only
    block *= b.inner_blks[i];
  }
  if (block > 1 && b.inner_nblks != 1) return false;
  *walk = {d.n, d.c, d.h, d.w, block, {b.strides[0], b.strides[1], b.strides[2], b.strides[3]}};
  return true;
}

// Input 0 of a kernel that walks it (`d` its logical dims): the producer's
// spec in `inputs` where the walk can take it (channels blocked by at most
// 64), else plain, with that walk in *walk. An input of another type or
// shape is an error naming `what`.
inline absl::StatusOr<TensorSpec> WalkedInput(const std::vector<TensorSpec>& inputs, DType dtype,
                                              const Dims4& d, const std::string& what,
                                              LayoutWalk* walk) {
  ASSIGN_OR_RETURN(dnnl::memory::data_type type, ToDnnlType(dtype));
  (void)type;
  const Shape shape = d.shape();
  const dnnl::memory::dims dims = ToDims(shape);
  TensorSpec input = TensorSpec::Plain(dtype, shape);
  if (!inputs.empty()) {
    ASSIGN_OR_RETURN(const TensorSpec* given, GivenInput(inputs, 0, dtype, shape, what));
    if (given != nullptr) {
      ASSIGN_OR_RETURN(dnnl::memory::desc md, DescFromSpec(*given, dims, "input 0", what));
      LayoutWalk probe;
      if (MakeLayoutWalk(md, d, &probe) && probe.block <= 64) input = *given;
    }
  }
  ASSIGN_OR_RETURN(dnnl::memory::desc md, DescFromSpec(input, dims, "input 0", what));
  if (!MakeLayoutWalk(md, d, walk))
    return absl::InternalError(absl::StrCat(what, ": cannot walk ", input.DebugString()));
  return input;
}

// Loads and stores of the element types the loops run on, through fp32.
inline float LoadValue(const float* p) { return *p; }
inline float LoadValue(const uint16_t* p) { return Bf16ToFloat(*p); }
inline void StoreValue(float* p, float v) { *p = v; }
inline void StoreValue(uint16_t* p, float v) { *p = FloatToBf16(v); }

}  // namespace onednn
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ONEDNN_LAYOUT_WALK_H_
