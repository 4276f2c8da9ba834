// Testing cuda kernels against the reference backend: the same inputs
// (uploaded into the cuda kernel's layouts), every pass run on both, the
// outputs downloaded and compared with stated tolerances. Device outputs are
// poisoned (NaN bytes) first, so elements a kernel never writes show.
// Every function needs a GPU; tests call SkipWithoutGpu() first.
#ifndef CNNBENCH_TESTS_KERNELS_CUDA_CUDA_TEST_UTIL_H_
#define CNNBENCH_TESTS_KERNELS_CUDA_CUDA_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/device.h"
#include "kernels/desc.h"
#include "kernels/kernel.h"

namespace cnnbench::cuda_test {

// The shared cuda backend on cuda:0 (nullptr without a GPU; the reason is
// in NoGpuReason()).
Backend* Cuda();
Backend* Reference();
std::string NoGpuReason();

struct CompareOptions {
  Precision precision = Precision::kFp32;
  // The producers' specs given to the cuda kernel's Create (empty: none).
  std::vector<TensorSpec> cuda_inputs;
  bool integers = true;        // fill x, params and dy with integers in [low, high]
  int64_t low = -3, high = 3;  // else uniform reals in [low, high)
  double forward_rtol = 0, forward_atol = 0;
  double backward_rtol = 0, backward_atol = 0;
  bool training = true;
  bool backward = true;  // also compare BackwardData and BackwardWeights
  uint64_t seed = 1;
  // The cuda backend under test (null: Cuda()), e.g. one made with other
  // CudaBackendOptions.
  Backend* backend = nullptr;
};

// Runs `desc` on the reference (fp64, plain) and on the cuda backend, and
// compares y, state, dx and dparams. OK or an error naming the tensor and
// the worst mismatches.
absl::Status CompareWithReference(const OpDesc& desc, const CompareOptions& options = {});

// Device buffers for one kernel's signature, and arguments pointing at them.
struct DeviceBuffers {
  std::vector<Buffer> x, params, state, dx, dparams;
  Buffer y, saved, scratch, dy;
  KernelArgs Args(bool training = true) const;
};
absl::StatusOr<DeviceBuffers> AllocateFor(const KernelSignature& signature);

// Plain values (logical order) to and from device memory stored as `spec`,
// through `backend` (null: Cuda()).
absl::Status Write(const TensorSpec& spec, void* device, const std::vector<double>& values,
                   Backend* backend = nullptr);
absl::StatusOr<std::vector<double>> Read(const TensorSpec& spec, const void* device,
                                         Backend* backend = nullptr);
// Fills device memory with 0xff bytes (NaN in every float type).
absl::Status Poison(const Buffer& buffer, Backend* backend = nullptr);

}  // namespace cnnbench::cuda_test

#endif  // CNNBENCH_TESTS_KERNELS_CUDA_CUDA_TEST_UTIL_H_
