// The loops of a batch norm with a fused activation whose gradient needs its
// input (sigmoid, SiLU, hard-sigmoid, hard-swish, GELU: ActivationMasks is
// false), which oneDNN 2.6.3's batch norm does not fuse (it fuses ReLU
// alone). The forward writes z = f((x - mean[c]) * scale[c] + beta[c]) in one pass
// after one pass of statistics; the backward recomputes the pre-activation
// from x (the normalised y is never stored) in its first pass, which
// also keeps g = dz f'(u) in dx for the second. fp32
// arithmetic on fp32 and bf16 storage; the statistics' sums in double.
// Compiled for AVX-512, AVX2 and the baseline (target_clones); on the
// OpenMP team oneDNN uses.
#ifndef CNNBENCH_KERNELS_ONEDNN_BN_ACTIVATION_LOOPS_H_
#define CNNBENCH_KERNELS_ONEDNN_BN_ACTIVATION_LOOPS_H_

#include <cstdint>

#include "core/dtype.h"
#include "kernels/activation.h"

namespace cnnbench {
namespace onednn {

// A tensor whose channels are interleaved within runs of contiguous memory:
// run r holds `positions` positions of `lanes` channels each, channel
// FirstChannel(r) + j of position p at Start(r) + p * lanes + j. Plain NCHW:
// a run per (n, c), one lane; NHWC: a run per image, C lanes; channels
// blocked by b: a run per (n, block), b lanes (padding channels included:
// `channels` counts them).
struct ChannelRuns {
  int64_t count = 0;           // runs in all
  int64_t runs_per_image = 1;  // runs of one image
  int64_t positions = 0;       // positions per run (H * W)
  int64_t lanes = 1;           // channels per position
  int64_t run_stride = 0;      // elements between runs of one image
  int64_t image_stride = 0;    // elements between images
  int64_t channels = 0;        // channels in all, a blocked layout's padding included
  int64_t Start(int64_t r) const {
    return (r / runs_per_image) * image_stride + (r % runs_per_image) * run_stride;
  }
  int64_t FirstChannel(int64_t r) const { return (r % runs_per_image) * lanes; }
};

// The per-thread sums the reductions need: `threads` x 2 x runs.channels
// doubles, plus `threads` x 2 x runs.lanes floats (as doubles' room).
int64_t ReductionWorkDoubles(const ChannelRuns& runs, int threads);

// bf16's staging: fp32 copies of each item's elements, StagingFloats
// floats for `threads` threads (every call below takes it, and `threads`,
// the team it was made for).
int64_t StagingFloats(int threads);

// Per channel c: sum over every element of (x - origin[c]) and of its
// square, into sum[c] and sum_sq[c] (doubles). `work`: ReductionWorkDoubles.
void ChannelMoments(DType dtype, const ChannelRuns& runs, const void* x, const float* origin,
                    double* sum, double* sum_sq, double* work, float* staging, int threads);

// z = f(u) * keep[c], u = (x - center[c]) * scale[c] + shift[c] (keep: 1,
// or 0 for a blocked layout's padding channels, which stay 0). The
// normalisation centred first: x * scale + shift would cancel where the
// mean is large against the spread.
void NormActivate(DType dtype, ActivationKind kind, const ChannelRuns& runs, const void* x,
                  const float* center, const float* scale, const float* shift, const float* keep,
                  void* z, float* staging, int threads);

// With g = dz * f'(u), u as above with center = mean (dz: the sum dz + dz2
// where dz2 is not null, an output gradient in two parts): per channel,
// sum_g[c] = sum of g and sum_gx[c] = sum of g * (x - mean[c]) (doubles);
// g itself stored in g_out where it is not null (dx, for
// NormGradientInPlace: the activation's derivative is computed once).
// `work` as above.
void NormActivateGradientSums(DType dtype, ActivationKind kind, const ChannelRuns& runs,
                              const void* x, const void* dz, const void* dz2, const float* scale,
                              const float* shift, const float* mean, void* g_out, double* sum_g,
                              double* sum_gx, double* work, float* staging, int threads);

// dx = a[c] * g + b[c] * (x - center[c]) + d[c] over g in dx (the batch
// norm's input gradient as one affine map of g and x per channel).
void NormGradientInPlace(DType dtype, const ChannelRuns& runs, const void* x, const float* center,
                         const float* a, const float* b, const float* d, void* dx, float* staging,
                         int threads);

// exp(x) in fp32 with the arithmetic the loops use (a polynomial after
// range reduction, vectorisable; relative error under 1.5e-6 for |x| <= 20
// and 5e-6 over [-87, 88], clamped outside it), and the activations and
// derivatives built on it: for tests.
float LoopExp(float x);
float LoopActivation(ActivationKind kind, float u);
float LoopActivationDerivative(ActivationKind kind, float u);

}  // namespace onednn
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ONEDNN_BN_ACTIVATION_LOOPS_H_
