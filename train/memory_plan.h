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
  // A view: `bytes` at `view_offset` inside request `view_of` (an earlier
  // request, itself maybe a view), not placed on its own. Its lifetime is
  // its root's (the first request up the chain that is not a view): the
  // planner packs roots only. Views of one request never share a byte.
  int view_of = -1;
  size_t view_offset = 0;
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // per request, in the arena
  size_t arena_bytes = 0;
  size_t sum_bytes = 0;  // what the requests would take without reuse
  size_t alignment = 0;  // of every offset and size
};

// The request at the top of `index`'s view chain (`index` itself when it is
// not a view).
int RootOf(const std::vector<BufferRequest>& requests, int index);

// The CPU backends' alignment; a backend states its own (Backend::alignment()).
constexpr size_t kDefaultPlanAlignment = 64;

// Greedy best fit, largest buffers first: each root goes to the lowest
// offset that does not overlap a placed root whose lifetime overlaps its
// own; a view goes where its parent's offset and its own view_offset put it.
// Roots' offsets and sizes are rounded up to `alignment` (a power of two);
// a view is as aligned as its view_offset makes it.
MemoryPlan PlanMemory(const std::vector<BufferRequest>& requests,
                      size_t alignment = kDefaultPlanAlignment);

// Checks the plan's invariant: no two roots with overlapping lifetimes
// share a byte, everything fits in the arena, each view lies inside its
// parent (which comes before it) with its root's lifetime, and no two views
// of one parent share a byte. The error names both.
absl::Status VerifyPlan(const std::vector<BufferRequest>& requests, const MemoryPlan& plan);

}  // namespace cnnbench

#endif  // CNNBENCH_TRAIN_MEMORY_PLAN_H_
