// The channel multiply's arithmetic (ChannelMulDesc), in one place for every
// backend: which scale an element of x0 is multiplied by, in the layouts
// the backends keep activations in, host-and-device inline so the cuda
// kernels run the very index arithmetic the host tests check.
#ifndef CNNBENCH_KERNELS_CHANNEL_MUL_H_
#define CNNBENCH_KERNELS_CHANNEL_MUL_H_

#include <cstdint>

#include "core/random.h"  // CNNBENCH_HOST_DEVICE

namespace cnnbench {

// The scale's index (n * C + c) of element `i` of a dense (N,C,H,W) tensor
// (`channels_last`: stored (N,H,W,C)) with C channels and `plane` = H * W.
CNNBENCH_HOST_DEVICE inline int64_t ChannelMulScaleIndex(int64_t i, int64_t channels, int64_t plane,
                                                         bool channels_last) {
  if (channels_last) {
    const int64_t n = i / (plane * channels);
    return n * channels + i % channels;
  }
  return i / plane;  // (n * C + c) * plane + hw
}

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_CHANNEL_MUL_H_
