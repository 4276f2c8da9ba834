// The vectorised rows of the oneDNN backend's layer norm over channels
// (layer_norm.cc) where the layout is blocked by 8 or 16 channels with no
// padding channels, as the zoo's convolutions give it: row (n, h) is
// `blocks` segments of W positions x `lanes` channels, each contiguous. The
// per-position sums run across the lanes (one vector per position), so the
// loops vectorise; they are compiled for AVX-512, AVX2 and the baseline
// (target_clones) and called on one thread each. fp32 only: the caller
// widens a bf16 row into fp32 staging first. The arithmetic is
// kernels/layer_norm.h's, summed in another order (fp32 rounding apart).
#ifndef CNNBENCH_KERNELS_ONEDNN_LAYER_NORM_LOOPS_H_
#define CNNBENCH_KERNELS_ONEDNN_LAYER_NORM_LOOPS_H_

#include <cstdint>

namespace cnnbench {
namespace onednn {

struct NormRow {
  int64_t blocks = 0;  // channel blocks: C = blocks * lanes
  int64_t width = 0;   // positions W
  int64_t lanes = 16;  // 8 or 16
  // Elements between one segment and the next in each tensor.
  int64_t x_stride = 0, y_stride = 0;
  int64_t channels() const { return blocks * lanes; }
};

// Floats of `acc` a row needs: 2 * width * lanes.
int64_t NormRowAccumulators(const NormRow& row);

// y = (x - mean) rstd gamma + beta over the row, with mean[w] and rstd[w]
// (1/sqrt(biased variance + epsilon), two passes) written for its
// positions. y uses y_stride.
void LayerNormRowForward(const NormRow& row, const float* x, float* y, const float* gamma,
                         const float* beta, float epsilon, float* mean, float* rstd, float* acc);

// The row's backward from x and dy (x_stride for both): dx (y_stride)
// where it is not null, and the row's parameter sums added into
// dgamma[c] (dy xhat) and dbeta[c] (dy).
void LayerNormRowBackward(const NormRow& row, const float* x, const float* dy, float* dx,
                          const float* gamma, const float* mean, const float* rstd, float* dgamma,
                          float* dbeta, float* acc);

}  // namespace onednn
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ONEDNN_LAYER_NORM_LOOPS_H_
