// The reference backend: plain loops in double accumulation over fp32 and
// fp64 plain layouts; the truth the other backends are tested against.
#ifndef CNNBENCH_KERNELS_REFERENCE_REFERENCE_BACKEND_H_
#define CNNBENCH_KERNELS_REFERENCE_REFERENCE_BACKEND_H_

#include <memory>

#include "kernels/kernel.h"

namespace cnnbench {

// Also declared in kernels/backends.h (which depends on this target, so it
// cannot be included from here).
std::unique_ptr<Backend> CreateReferenceBackend();

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_REFERENCE_REFERENCE_BACKEND_H_
