// The GPU's arithmetic ceilings, which its training steps and kernels are
// read against (the suite's peak/<precision>/cuda/... cases):
//   fp32: a register-only loop of independent fused multiply-adds on every
//     thread of a full wave of blocks (peak_kernels.h), 2 FLOPs per FMA;
//   tf32, fp16, bf16, fp8 (e4m3): the tensor cores' dense rate, an n^3
//     cuBLASLt matmul (A transposed, fp32 accumulation and output), the
//     fastest of the heuristic's candidates timed once each, 2 n^3 FLOPs.
// No CUDA types here: the suite includes it in every build; without CUDA
// CreateGpuPeak says so.
#ifndef CNNBENCH_KERNELS_CUDA_GPU_PEAK_H_
#define CNNBENCH_KERNELS_CUDA_GPU_PEAK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/device.h"

namespace cnnbench {

class GpuPeak {
 public:
  virtual ~GpuPeak() = default;
  // Enqueues one iteration on the stream it was made for.
  virtual absl::Status Run() = 0;
  // FLOPs of one iteration.
  virtual double flops() const = 0;
  // What runs: "cublasLt:algo<id>,tile<t>,stages<s>, fastest of K" or
  // "fma x8 chains, T threads".
  virtual std::string label() const = 0;
  // Waits for the stream and checks the last iteration's results (GEMM:
  // sampled entries against their dot products, exactly; FMA: every
  // thread's sum against the loop's value).
  virtual absl::Status Check() = 0;
};

// The peak of `precision` (fp32, tf32, fp16, bf16, fp8) on `device`, its
// work enqueued on `stream` (of that device); `n` is the GEMM's size
// (unused for fp32). Unimplemented ("unsupported: ...") without CUDA, for
// fp8 below compute capability 8.9, or when cuBLASLt has no algorithm.
absl::StatusOr<std::unique_ptr<GpuPeak>> CreateGpuPeak(const Device& device,
                                                       absl::string_view precision, int64_t n,
                                                       const Stream& stream);

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_CUDA_GPU_PEAK_H_
