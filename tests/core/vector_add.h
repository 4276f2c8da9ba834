// A tiny CUDA kernel used to prove that .cu code compiles, links and runs.
#ifndef CNNBENCH_TESTS_CORE_VECTOR_ADD_H_
#define CNNBENCH_TESTS_CORE_VECTOR_ADD_H_

#include "absl/status/status.h"

namespace cnnbench::testing {

// c[i] = a[i] + b[i] for device pointers, on the default stream; waits.
absl::Status VectorAdd(const float* a, const float* b, float* c, int n);

}  // namespace cnnbench::testing

#endif  // CNNBENCH_TESTS_CORE_VECTOR_ADD_H_
