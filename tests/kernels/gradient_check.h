// Test helpers for kernels of any backend: host buffers for a kernel's
// signature, element access and fills for plain fp32/fp64/int32 tensors,
// tensor comparison, and a central finite-difference check of the backward
// passes (objective L = sum(y * r) for a fixed random r).
#ifndef CNNBENCH_TESTS_KERNELS_GRADIENT_CHECK_H_
#define CNNBENCH_TESTS_KERNELS_GRADIENT_CHECK_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/device.h"
#include "kernels/desc.h"
#include "kernels/kernel.h"

namespace cnnbench {
namespace kernel_test {

// Host memory for every binding a signature names (sized by spec.bytes),
// plus dy, dx[i] and dparams[j] shaped like y, x[i] and params[j].
struct KernelBuffers {
  KernelSignature signature;
  std::vector<Buffer> x, dx, params, dparams, state;
  Buffer y, dy, saved, scratch;

  // Bindings over these buffers (every dx requested; saved/scratch null
  // when the signature asks for 0 bytes).
  KernelArgs Args(bool training = true) const;
};

absl::StatusOr<KernelBuffers> AllocateBuffers(const KernelSignature& signature);

// A kernel and its buffers.
struct KernelUnderTest {
  std::unique_ptr<Kernel> kernel;
  KernelBuffers buffers;
};

absl::StatusOr<KernelUnderTest> CreateKernelUnderTest(Backend& backend, const OpDesc& desc,
                                                      DType dtype,
                                                      const std::vector<TensorSpec>& inputs = {});
absl::StatusOr<KernelUnderTest> CreateKernelUnderTest(Backend& backend, const OpDesc& desc,
                                                      const KernelOptions& options,
                                                      const std::vector<TensorSpec>& inputs = {});

// Element `i` (row-major) of a plain fp32, fp64 or int32 tensor.
double GetElement(const TensorSpec& spec, const void* data, int64_t i);
void SetElement(const TensorSpec& spec, void* data, int64_t i, double value);
std::vector<double> ToDoubles(const TensorSpec& spec, const void* data);
// Fails when `values` does not have one value per element.
absl::Status FromDoubles(const TensorSpec& spec, void* data, const std::vector<double>& values);

// Uniform reals in [low, high) / integers in [low, high], reproducible from
// `seed` (std::mt19937_64, whose output the standard fixes).
void FillUniform(const TensorSpec& spec, void* data, uint64_t seed, double low, double high);
void FillIntegers(const TensorSpec& spec, void* data, uint64_t seed, int64_t low, int64_t high);

// The usual starting point of a test: every floating input and param
// uniform in [-1, 1), state uniform in [0.5, 1.5) (a valid running
// variance), each tensor from its own seed derived from `seed`. Integer
// inputs (labels) are left to the caller.
void FillDefaults(KernelBuffers& buffers, uint64_t seed);

// OK when |actual - expected| <= atol + rtol * |expected| everywhere; else
// an error naming `what`, the count of mismatches and the worst ones.
absl::Status CompareTensors(absl::string_view what, const std::vector<double>& actual,
                            const std::vector<double>& expected, double rtol, double atol);

struct GradientCheckOptions {
  double step = 1e-5;        // central-difference step h
  // Pass when |analytic - numeric| <= tolerance * max(|numeric|, 1% of the
  // tensor's largest |numeric|) + 1e-9: relative, with a floor so that
  // near-zero entries are judged on the tensor's scale.
  double tolerance = 1e-6;
  uint64_t seed = 12345;     // r = uniform [-1, 1) from this seed
  bool training = true;      // KernelArgs::training of every call
  // dy = 1: for ops whose backward ignores dy (softmax_xent's d loss = 1);
  // the output must then be a scalar.
  bool unit_output_gradient = false;
  // Inputs whose gradient is not checked (integer inputs never are).
  std::vector<int> skip_inputs;
  // At most this many elements per tensor (evenly spread); 0: all.
  int64_t max_elements_per_tensor = 0;
  // When set, every finite-difference forward runs on a fresh kernel from
  // here: for ops whose forward depends on the call count (dropout's mask).
  std::function<absl::StatusOr<std::unique_ptr<Kernel>>()> fresh_kernel;
};

// Checks `kernel`'s BackwardData (every floating input) and BackwardWeights
// (every param) against central finite differences of L = sum(y * r) at the
// point that `buffers`' x, params and state hold (restored on return).
// It also holds the kernel to its signature: dx, dparams, scratch and saved
// are filled with NaN before the calls that write them (so accumulation or
// reading unwritten memory shows), and x / y are NaN while the backward
// passes run when the signature says they are not read.
absl::Status CheckGradients(Kernel& kernel, KernelBuffers& buffers,
                            const GradientCheckOptions& options = {});

}  // namespace kernel_test
}  // namespace cnnbench

#endif  // CNNBENCH_TESTS_KERNELS_GRADIENT_CHECK_H_
