// Drop-path's arithmetic (DropPathDesc), in one place for every backend:
// host-and-device inline functions, so the cuda kernels run the very
// arithmetic the reference and oneDNN loops run, and host tests check it.
// The mask is core/random.h's, one draw per example (its global index in
// the batch, so data-parallel replicas draw what one replica would).
#ifndef CNNBENCH_KERNELS_DROP_PATH_H_
#define CNNBENCH_KERNELS_DROP_PATH_H_

#include <cstdint>

#include "core/random.h"  // CNNBENCH_HOST_DEVICE, DropoutKeeps

namespace cnnbench {

// The keep probability at training step `step`: 1 - r * (1 - keep) with
// r = min(1, step / ramp_steps), or `keep` itself when ramp_steps is 0
// (nasnet_utils' drop_connect 'v3' ramp, the per-cell scaling being
// already in `keep`).
CNNBENCH_HOST_DEVICE inline double DropPathKeepAt(double keep, int64_t ramp_steps, uint64_t step) {
  if (ramp_steps <= 0) return keep;
  double ratio = static_cast<double>(step) / static_cast<double>(ramp_steps);
  if (ratio > 1.0) ratio = 1.0;
  return 1.0 - ratio * (1.0 - keep);
}

// The factor example `example` (global index) is multiplied by: 1 / p when
// it survives the draw keyed by `key` (kept with probability p), else 0.
CNNBENCH_HOST_DEVICE inline double DropPathScale(uint64_t key, uint64_t example, double p) {
  return DropoutKeeps(key, example, 1.0 - p) ? 1.0 / p : 0.0;
}

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_DROP_PATH_H_
