// Constructors of the backends, by name.
#ifndef CNNBENCH_KERNELS_BACKENDS_H_
#define CNNBENCH_KERNELS_BACKENDS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/device.h"
#include "kernels/kernel.h"
#include "kernels/onednn/onednn_backend.h"  // CreateOneDnnBackend, OneDnnOptions

namespace cnnbench {

// The backend `name` on `device`: "reference" or "onednn" on the CPU,
// "cuda" on a GPU (cuda:N). Another pairing is "unsupported: ..."; an
// unknown name an error listing the known ones.
absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(absl::string_view name,
                                                       const Device& device);

// Plain loops with double accumulation (fp32 and fp64): the truth in tests.
std::unique_ptr<Backend> CreateReferenceBackend();
// oneDNN primitives on the CPU (fp32; bf16 where the CPU supports it):
// kernels/onednn/onednn_backend.h.

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_BACKENDS_H_
