// Launchers of the cuda backend's own layer kernels where no library call
// fits the contract (docs/kernels.md): pooling, LRN, dropout, softmax
// cross-entropy, and batch norm's frozen-statistics helpers. Host-callable;
// each enqueues on `stream` and returns the launch's error (never
// synchronises). Activations are read and written in `type`, math in fp32.
#ifndef CNNBENCH_KERNELS_CUDA_OP_KERNELS_H_
#define CNNBENCH_KERNELS_CUDA_OP_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/device_kernels.h"
#include "kernels/cuda/op_math.h"

namespace cnnbench::cuda {

// y from x; for max pooling `argmax` (one int32 per output, in y's order)
// receives each window's winner (null: not kept, as in inference).
cudaError_t LaunchPoolForward(const PoolGeometry& g, const void* x, void* y, int32_t* argmax,
                              Elem type, cudaStream_t stream);
// dx (every element written) from dy and, for max pooling, the argmax.
cudaError_t LaunchPoolBackward(const PoolGeometry& g, const void* dy, const int32_t* argmax,
                               void* dx, Elem type, cudaStream_t stream);

// y from x; `scale` (fp32, x's order, may be null) receives s for backward.
cudaError_t LaunchLrnForward(const LrnGeometry& g, const void* x, void* y, float* scale, Elem type,
                             cudaStream_t stream);
cudaError_t LaunchLrnBackward(const LrnGeometry& g, const void* x, const void* dy,
                              const float* scale, void* dx, Elem type, cudaStream_t stream);

// Training dropout: the key is DropoutKey(seed, node, *step), or
// `fallback_step` when `step` is null; `mask` gets one byte per element.
cudaError_t LaunchDropoutForward(const DropoutGeometry& g, uint64_t seed, uint64_t node,
                                 const uint64_t* step, uint64_t fallback_step, const void* x,
                                 void* y, uint8_t* mask, Elem type, cudaStream_t stream);
cudaError_t LaunchDropoutBackward(const DropoutGeometry& g, const void* dy, const uint8_t* mask,
                                  void* dx, Elem type, cudaStream_t stream);

// The keep mask alone, one byte per stored element (tests compare it with
// the host's DropoutKeeps).
cudaError_t LaunchDropoutMask(const DropoutGeometry& g, uint64_t key, uint8_t* mask,
                              cudaStream_t stream);

// Mean softmax cross-entropy over `n` rows of `classes` logits: `grad`
// (n, classes) fp32 gets (softmax - onehot) / n, `row_loss` (n) each row's
// loss, `loss` the mean (summed in a fixed order: deterministic). A label
// outside [0, classes) makes its row's gradient and loss NaN and lowers
// *bad_label (device memory) to PackBadLabel(example, label) if smaller.
cudaError_t LaunchSoftmaxXentForward(const void* logits, Elem type, const int32_t* labels,
                                     int64_t n, int64_t classes, float* grad, float* row_loss,
                                     float* loss, uint64_t* bad_label, cudaStream_t stream);

// Batch norm with frozen statistics: mean = running_mean and inv_std =
// 1/sqrt(running_var + epsilon) per channel (what backward reads), and
// dx = dy * gamma * inv_std (gamma null: 1).
cudaError_t LaunchBatchNormFrozenStats(const float* running_mean, const float* running_var,
                                       double epsilon, float* mean, float* inv_std,
                                       int64_t channels, cudaStream_t stream);
// Running statistics after a training batch of m values per channel, from
// the batch mean and inverse std (op_math.h's BatchNormRunningUpdate).
cudaError_t LaunchBatchNormRunningStats(const float* mean, const float* inv_std, double epsilon,
                                        int64_t m, double momentum, float* running_mean,
                                        float* running_var, int64_t channels, cudaStream_t stream);
cudaError_t LaunchBatchNormFrozenBackward(const ActivationGeometry& g, const void* dy,
                                          const float* gamma, const float* inv_std, void* dx,
                                          Elem type, cudaStream_t stream);

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_OP_KERNELS_H_
