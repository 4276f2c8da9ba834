// Max pooling written for the oneDNN backend: oneDNN 2.6.3's own max
// pooling ran its training forward and backward 2.2-4.3x slower than this
// loop on the same data (docs/results/2026-12-01-max-pool.md, an AVX2 CPU).
// Channel-blocked layouts only (nChw8c, nChw16c,
// the ones oneDNN's convolutions hand on), fp32, no dilation; the
// PoolKernel keeps oneDNN's primitives for everything else and for
// inference.
//
// The argmax is one byte per output element (with the block's padded
// channels): the window position kh * kernel_w + kw of the first maximum in
// scan order (rows, then columns), as the reference backend picks it, so
// ties route the gradient to the same element.
#ifndef CNNBENCH_KERNELS_ONEDNN_MAX_POOL_H_
#define CNNBENCH_KERNELS_ONEDNN_MAX_POOL_H_

#include <cstdint>

namespace cnnbench {
namespace onednn {

struct BlockedMaxPool {
  int64_t batch = 0;
  int64_t channel_blocks = 0;  // ceil(channels / block)
  int block = 8;               // 8 or 16 channels per block
  int in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int kernel_h = 0, kernel_w = 0;  // kernel_h * kernel_w <= 255
  int stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_left = 0;  // padded elements never win

  // Every output's window holds at least one element of the input, and the
  // window fits the argmax byte: what Forward and Backward rely on.
  bool Valid() const;
  int64_t output_elements() const {
    return batch * channel_blocks * block * static_cast<int64_t>(out_h) * out_w;
  }
};

// y and argmax from x; runs on the OpenMP team oneDNN uses.
void MaxPoolForward(const BlockedMaxPool& p, const float* x, float* y, uint8_t* argmax);
// dx (every element written: zero where no window chose it) from dy and the
// forward's argmax.
void MaxPoolBackward(const BlockedMaxPool& p, const float* dy, const uint8_t* argmax, float* dx);

}  // namespace onednn
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ONEDNN_MAX_POOL_H_
