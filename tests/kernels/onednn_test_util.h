// Test helpers for the oneDNN backend: run one descriptor on the oneDNN and
// reference backends with the same plain data (reordered into the oneDNN
// kernel's layouts) and compare forward results, running statistics, dx and
// dparams after reordering the oneDNN ones back to plain fp32.
#ifndef CNNBENCH_TESTS_KERNELS_ONEDNN_TEST_UTIL_H_
#define CNNBENCH_TESTS_KERNELS_ONEDNN_TEST_UTIL_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/desc.h"
#include "kernels/kernel.h"
#include "tests/kernels/gradient_check.h"

namespace cnnbench {
namespace onednn_test {

// The backends, created once per test program (nullptr when creation failed;
// the error is printed). OneDnn() runs direct convolutions.
Backend* OneDnn();
Backend* Reference();

// What to compare and how closely. Inputs and params are small integers by
// default, so that sums of products are exact in fp32 and only ops with
// division, roots or powers need a tolerance.
struct CompareOptions {
  DType dtype = DType::kF32;
  // The producers' specs given to the oneDNN kernel's Create (empty: none).
  std::vector<TensorSpec> onednn_inputs;
  bool integers = true;        // fill x, params and dy with integers in [low, high]
  int64_t low = -3, high = 3;  // else uniform reals in [low, high)
  double forward_rtol = 0, forward_atol = 0;
  double backward_rtol = 0, backward_atol = 0;
  bool training = true;
  int forward_calls = 1;  // forwards before backward (dropout's call count)
  bool backward = true;   // also compare BackwardData and BackwardWeights
  // Both kernels made forward only (KernelOptions::forward_only; no backward).
  bool forward_only = false;
  // >= 0: both forwards write y over x[y_over_input] (its values put in y,
  // and x[i] bound to y: KernelSignature::output_over_input).
  int y_over_input = -1;
  uint64_t seed = 1;
  Backend* onednn = nullptr;  // the oneDNN backend under test; nullptr: OneDnn()
};

absl::Status CompareWithReference(const OpDesc& desc, const CompareOptions& options = {});

// The output spec of a oneDNN 1x1 convolution from 8 to `k` channels at
// (n, hw, hw): the layout oneDNN gives a producer there (channels blocked
// where the CPU's kernels block them), for a consumer's `onednn_inputs`.
TensorSpec ConvOutputSpec(int64_t n, int64_t k, int64_t hw, DType dtype = DType::kF32);

// The values of a tensor stored as `spec` (any layout or type of the oneDNN
// backend), reordered to plain fp32.
absl::StatusOr<std::vector<double>> ReadPlain(const TensorSpec& spec, const void* data);
// Stores plain `values` into a tensor stored as `spec`.
absl::Status WritePlain(const TensorSpec& spec, void* data, const std::vector<double>& values);

// Fills a buffer with NaN bytes, so unwritten outputs show.
void Poison(const Buffer& buffer);

// Integers in [low, high] for a plain spec of `shape`, from `seed`.
std::vector<double> IntegerValues(const Shape& shape, uint64_t seed, int64_t low, int64_t high);
std::vector<double> RealValues(const Shape& shape, uint64_t seed, double low, double high);

}  // namespace onednn_test
}  // namespace cnnbench

#endif  // CNNBENCH_TESTS_KERNELS_ONEDNN_TEST_UTIL_H_
