// The per-element arithmetic of the cuda spatial pad and drop-path kernels,
// host-and-device inline functions: the .cu kernels only map threads onto
// elements, and host tests run this very arithmetic against the reference
// without a GPU. Plain C++ for host compilers.
#ifndef CNNBENCH_KERNELS_CUDA_PAD_DROP_MATH_H_
#define CNNBENCH_KERNELS_CUDA_PAD_DROP_MATH_H_

#include <cstdint>

#include "kernels/cuda/op_math.h"
#include "kernels/drop_path.h"

namespace cnnbench::cuda {

// to(n, c, i, j) = from(n, c, i - shift_h, j - shift_w) where that lies in
// `from`, else 0: the spatial pad's forward (shift = (top, left), from = x)
// and its backward (shift = (-top, -left), from = dy), in either layout.
struct ShiftGeometry {
  ActivationGeometry from, to;  // same n, c and layout
  int64_t shift_h = 0, shift_w = 0;
};

// The storage offset in `from` that `to`'s element at `offset` copies, or
// -1 where it is 0.
CNNBENCH_HOST_DEVICE inline int64_t ShiftSource(const ShiftGeometry& g, int64_t offset) {
  int64_t n, c, i, j;
  g.to.Coordinates(offset, &n, &c, &i, &j);
  const int64_t si = i - g.shift_h, sj = j - g.shift_w;
  if (si < 0 || si >= g.from.h || sj < 0 || sj >= g.from.w) return -1;
  return g.from.Offset(n, c, si, sj);
}

// The example (within the batch) of the element stored at `offset`.
CNNBENCH_HOST_DEVICE inline int64_t ExampleAt(const ActivationGeometry& g, int64_t offset) {
  return offset / (g.c * g.h * g.w);  // n is outermost in NCHW and NHWC
}

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_PAD_DROP_MATH_H_
