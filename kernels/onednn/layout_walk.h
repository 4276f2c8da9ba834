// The walk of the backend's own loops over an activation in the layout
// oneDNN gave it (plain NCHW, NHWC, or channels blocked by 8 or 16): where
// element (n, c, h, w) is stored. The channel multiply and layer norm use
// it so that they take their producers' layouts as given.
#ifndef CNNBENCH_KERNELS_ONEDNN_LAYOUT_WALK_H_
#define CNNBENCH_KERNELS_ONEDNN_LAYOUT_WALK_H_

#include <cstdint>

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

// Loads and stores of the element types the loops run on, through fp32.
inline float LoadValue(const float* p) { return *p; }
inline float LoadValue(const uint16_t* p) { return Bf16ToFloat(*p); }
inline void StoreValue(float* p, float v) { *p = v; }
inline void StoreValue(uint16_t* p, float v) { *p = FloatToBf16(v); }

}  // namespace onednn
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ONEDNN_LAYOUT_WALK_H_
