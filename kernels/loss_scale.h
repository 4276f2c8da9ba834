// Dynamic loss scaling (fp16 training), as GradScaler and tf.keras'
// LossScaleOptimizer do it: the loss gradient is multiplied by a scale so
// small fp16 gradients do not flush to zero; an update whose gradients are
// not finite is skipped and halves the scale; kGrowthInterval clean updates
// in a row double it. Host and device code (the cuda backend runs it in a
// one-thread kernel after the update, so a captured step adjusts it too).
#ifndef CNNBENCH_KERNELS_LOSS_SCALE_H_
#define CNNBENCH_KERNELS_LOSS_SCALE_H_

#include <cstdint>

#include "core/random.h"  // CNNBENCH_HOST_DEVICE

namespace cnnbench {

inline constexpr float kInitialLossScale = 65536.0f;  // 2^16, GradScaler's
inline constexpr float kMinLossScale = 1.0f;
inline constexpr float kMaxLossScale = 16777216.0f;  // 2^24
inline constexpr int32_t kGrowthInterval = 2000;

// After one update: `overflow` (its gradients were not finite) halves
// *scale (not below kMinLossScale) and zeroes *good_steps; else
// *good_steps counts it, and `growth_interval` in a row double *scale (up
// to kMaxLossScale) and zero *good_steps.
CNNBENCH_HOST_DEVICE inline void AdjustLossScale(bool overflow, int32_t growth_interval,
                                                 float* scale, int32_t* good_steps) {
  if (overflow) {
    *scale = *scale * 0.5f < kMinLossScale ? kMinLossScale : *scale * 0.5f;
    *good_steps = 0;
    return;
  }
  if (++*good_steps >= growth_interval) {
    *scale = *scale * 2.0f > kMaxLossScale ? kMaxLossScale : *scale * 2.0f;
    *good_steps = 0;
  }
}

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_LOSS_SCALE_H_
