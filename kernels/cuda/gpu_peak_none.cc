#include "kernels/cuda/gpu_peak.h"

namespace cnnbench {

absl::StatusOr<std::unique_ptr<GpuPeak>> CreateGpuPeak(const Device&, absl::string_view, int64_t,
                                                       const Stream&) {
  return absl::UnimplementedError("unsupported: this build has no CUDA (the GPU peak cases)");
}

}  // namespace cnnbench
