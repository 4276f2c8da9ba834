// Constructors of the backends, by name.
#ifndef CNNBENCH_KERNELS_BACKENDS_H_
#define CNNBENCH_KERNELS_BACKENDS_H_

#include <memory>

#include "kernels/kernel.h"

namespace cnnbench {

// Plain loops with double accumulation (fp32 and fp64): the truth in tests.
std::unique_ptr<Backend> CreateReferenceBackend();
// oneDNN primitives on the CPU (fp32; bf16 where the CPU supports it).
absl::StatusOr<std::unique_ptr<Backend>> CreateOneDnnBackend();

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_BACKENDS_H_
