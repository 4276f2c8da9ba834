// The elementwise loops the oneDNN backend writes itself: gradient sums,
// and the fp32 <-> bf16 casts of parameters. MaskedSum: the gradient
// of a ReLU or ReLU6 fused after an op, taken as the sum of several
// gradients where the output feeds several layers: dx = (dy_0 + ... + dy_k)
// where dy passes at y (ReLU: y > 0; ReLU6: 0 < y < 6 — activation.h's
// ActivationPasses), else 0. oneDNN's eltwise backward takes one dy, so summing first would
// cost the executor a separate pass over every part. Layout-agnostic: every
// tensor has y's storage (padding included).
#ifndef CNNBENCH_KERNELS_ONEDNN_MASKED_SUM_H_
#define CNNBENCH_KERNELS_ONEDNN_MASKED_SUM_H_

#include <cstdint>

#include "core/dtype.h"
#include "kernels/activation.h"

namespace cnnbench {
namespace onednn {

// `count` elements of `dtype` (kF32 or kBF16) in each of y, parts[0..num_parts)
// and dx; dx may be one of the parts; `kind` kRelu or kRelu6 (the mask).
// Runs on the OpenMP team oneDNN uses.
void MaskedSum(DType dtype, ActivationKind kind, const void* y, const void* const* parts,
               int num_parts, void* dx, int64_t count);

// y[0, count) = ReLU6(y) in place (ActivationForward: 0 below or at 0 and
// for NaN, 6 at or above 6), fp32 or bf16 (exact: no rounding), on the
// OpenMP team: a batch norm's fused ReLU6, after oneDNN's normalisation.
void ClipRelu6InPlace(DType dtype, void* y, int64_t count);

// dx[0, count) = parts[0] + ... + parts[num_parts - 1] (dx may be parts[0]),
// on the OpenMP team: the backend's AddN (an output read by several layers)
// where num_parts <= 4, one group (bf16: summed in fp32, rounded once, as
// Backend's own loop does).
void ParallelSum(DType dtype, const void* const* parts, int num_parts, void* dx, int64_t count);

// dst[0, count) = src[0, count) converted between fp32 and bf16 (to bf16:
// rounded to nearest even, NaN made quiet, subnormals kept; to fp32: exact),
// on the OpenMP team: the oneDNN backend's casts between a low-precision
// parameter's working copy and its fp32 master stored in the same layout.
void ConvertF32ToBf16(const float* src, uint16_t* dst, int64_t count);
void ConvertBf16ToF32(const uint16_t* src, float* dst, int64_t count);
// ConvertF32ToBf16 of [begin, end) on the calling thread (the optimizer
// rounds each run of masters it has just updated, still in cache).
void ConvertF32ToBf16Run(const float* src, uint16_t* dst, int64_t begin, int64_t end);
// ConvertBf16ToF32 of [begin, end) on the calling thread (the batch norm's
// fused loops widen each item before its fp32 arithmetic).
void ConvertBf16ToF32Run(const uint16_t* src, float* dst, int64_t begin, int64_t end);

// dst[begin, end) = src[begin, end) * scale on the calling thread, fp32
// arithmetic (bf16: widened exactly, rounded once to nearest even); dst
// may be src. Drop-path's kept examples.
void ScaleRun(DType dtype, const void* src, float scale, void* dst, int64_t begin, int64_t end);

// The unmasked sum over one run, on the calling thread (the caller spreads
// runs over the team): dx[0, count) = parts[0][offset, offset + count) +
// ... + parts[num_parts - 1][...], in that order (fp32 sums; bf16 summed in
// fp32 and rounded once), `offset` and `count` in elements of `dtype`. A
// concatenation's backward sums its output's gradients slice by slice this
// way rather than after the executor has summed them whole.
void SumRun(DType dtype, const void* const* parts, int num_parts, int64_t offset, void* dx,
            int64_t count);

}  // namespace onednn
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ONEDNN_MASKED_SUM_H_
