// The GPU backend: cuDNN, cuBLASLt and small CUDA kernels on one device and
// one stream. Built only with a CUDA toolkit; creating it needs a GPU.
#ifndef CNNBENCH_KERNELS_CUDA_CUDA_BACKEND_H_
#define CNNBENCH_KERNELS_CUDA_CUDA_BACKEND_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/device.h"
#include "kernels/kernel.h"

namespace cnnbench {

struct CudaBackendOptions {
  // Activations of fp16/bf16/tf32 kernels in NHWC (tensor cores' layout);
  // false keeps NCHW. fp32 kernels use NCHW either way.
  bool nhwc = true;
  // Training batch norm on NHWC activations as cuDNN graphs with the ReLU
  // fused in (where an engine builds); false keeps cuDNN's legacy calls
  // everywhere (the baseline the graphs are measured against).
  bool batch_norm_graphs = true;
  // Only library engines that give bitwise-repeatable results (cuDNN's
  // convolution and batch norm graph engines not marked NONDETERMINISTIC),
  // and convolution engines taken as the heuristics' first rather than the
  // fastest timed (a timing can differ between runs); the backend's own
  // kernels are deterministic either way. For tests and runs that compare
  // results bit for bit; may be slower.
  bool deterministic = false;
  // At most this many builds of engines cuDNN compiles at run time (NVRTC,
  // seconds each) per graph, success or failure, tried only where no
  // precompiled engine builds (kernels/cuda/engine_pick.h). -1: the
  // environment's CNNBENCH_CUDA_RTC_ATTEMPTS, else 2. //bench:all's
  // --cuda_rtc_attempts sets it.
  int runtime_compiled_attempts = -1;
};

// An error naming the reason when this build has no CUDA or `device` is
// not present.
absl::StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(const Device& device,
                                                           const CudaBackendOptions& options = {});

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_CUDA_CUDA_BACKEND_H_
