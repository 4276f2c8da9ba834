// The one elementwise loop the oneDNN backend writes itself: the gradient
// of a ReLU fused after a sum, taken as the sum of several gradients where
// the output feeds several layers: dx = (dy_0 + ... + dy_k) where y > 0,
// else 0. oneDNN's eltwise backward takes one dy, so summing first would
// cost the executor a separate pass over every part. Layout-agnostic: every
// tensor has y's storage (padding included).
#ifndef CNNBENCH_KERNELS_ONEDNN_MASKED_SUM_H_
#define CNNBENCH_KERNELS_ONEDNN_MASKED_SUM_H_

#include <cstdint>

#include "core/dtype.h"

namespace cnnbench {
namespace onednn {

// `count` elements of `dtype` (kF32 or kBF16) in each of y, parts[0..num_parts)
// and dx; dx may be one of the parts. Runs on the OpenMP team oneDNN uses.
void MaskedSum(DType dtype, const void* y, const void* const* parts, int num_parts, void* dx,
               int64_t count);

}  // namespace onednn
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ONEDNN_MASKED_SUM_H_
