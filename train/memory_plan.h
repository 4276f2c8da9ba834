// One memory plan for a training step: every transient buffer has a lifetime
// [first, last] in the step's schedule; buffers whose lifetimes overlap never
// share bytes, the others may. Planned once at compile time.
#ifndef CNNBENCH_TRAIN_MEMORY_PLAN_H_
#define CNNBENCH_TRAIN_MEMORY_PLAN_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace cnnbench {

struct BufferRequest {
  std::string name;  // for error messages: "conv3/y", "fc1/dx0"
  size_t bytes = 0;
  int first = 0;  // first schedule step that writes or reads it
  int last = 0;   // last schedule step that reads it
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // per request, in the arena
  size_t arena_bytes = 0;
  size_t sum_bytes = 0;  // what the requests would take without reuse
  size_t alignment = 0;  // of every offset and size
};

// The CPU backends' alignment; a backend states its own (Backend::alignment()).
constexpr size_t kDefaultPlanAlignment = 64;

// Greedy best fit, largest buffers first: each goes to the lowest offset
// that does not overlap a placed buffer whose lifetime overlaps its own.
// Offsets and sizes are rounded up to `alignment` (a power of two).
MemoryPlan PlanMemory(const std::vector<BufferRequest>& requests,
                      size_t alignment = kDefaultPlanAlignment);

// Checks the plan's invariant: no two requests with overlapping lifetimes
// share a byte, and everything fits in the arena. The error names both.
absl::Status VerifyPlan(const std::vector<BufferRequest>& requests, const MemoryPlan& plan);

}  // namespace cnnbench

#endif  // CNNBENCH_TRAIN_MEMORY_PLAN_H_
