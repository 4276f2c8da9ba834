#include "train/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace cnnbench {
namespace {

size_t RoundUp(size_t bytes, size_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

bool LifetimesOverlap(const BufferRequest& a, const BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace

MemoryPlan PlanMemory(const std::vector<BufferRequest>& requests, size_t alignment) {
  MemoryPlan plan;
  plan.alignment = alignment;
  auto Align = [alignment](size_t bytes) { return RoundUp(bytes, alignment); };
  plan.offsets.assign(requests.size(), 0);
  std::vector<int> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return requests[a].bytes > requests[b].bytes; });
  std::vector<int> placed;
  for (int i : order) {
    const size_t size = Align(std::max<size_t>(requests[i].bytes, 1));
    plan.sum_bytes += size;
    // Occupied ranges among placed buffers alive at the same time, by offset.
    std::vector<std::pair<size_t, size_t>> busy;
    for (int j : placed)
      if (LifetimesOverlap(requests[i], requests[j]))
        busy.push_back(
            {plan.offsets[j], plan.offsets[j] + Align(std::max<size_t>(requests[j].bytes, 1))});
    std::sort(busy.begin(), busy.end());
    // Best fit: the smallest gap that holds it; else after the last range.
    size_t best = SIZE_MAX, best_gap = SIZE_MAX, cursor = 0;
    for (const auto& [start, end] : busy) {
      if (start > cursor && start - cursor >= size && start - cursor < best_gap) {
        best = cursor;
        best_gap = start - cursor;
      }
      cursor = std::max(cursor, end);
    }
    if (best == SIZE_MAX) best = cursor;
    plan.offsets[i] = best;
    plan.arena_bytes = std::max(plan.arena_bytes, best + size);
    placed.push_back(i);
  }
  return plan;
}

absl::Status VerifyPlan(const std::vector<BufferRequest>& requests, const MemoryPlan& plan) {
  if (plan.offsets.size() != requests.size())
    return absl::InternalError("memory plan has a different number of buffers than requests");
  for (size_t i = 0; i < requests.size(); ++i) {
    if (plan.alignment == 0 || plan.offsets[i] % plan.alignment != 0 ||
        plan.offsets[i] + requests[i].bytes > plan.arena_bytes)
      return absl::InternalError(absl::StrCat("buffer ", requests[i].name, " at ", plan.offsets[i],
                                              " does not fit the arena of ", plan.arena_bytes,
                                              " bytes"));
    for (size_t j = i + 1; j < requests.size(); ++j) {
      if (!LifetimesOverlap(requests[i], requests[j])) continue;
      const size_t a0 = plan.offsets[i], a1 = a0 + requests[i].bytes;
      const size_t b0 = plan.offsets[j], b1 = b0 + requests[j].bytes;
      if (a0 < b1 && b0 < a1 && requests[i].bytes > 0 && requests[j].bytes > 0)
        return absl::InternalError(
            absl::StrCat("live buffers overlap: ", requests[i].name, " [", a0, ",", a1, ") steps ",
                         requests[i].first, "-", requests[i].last, " and ", requests[j].name, " [",
                         b0, ",", b1, ") steps ", requests[j].first, "-", requests[j].last));
    }
  }
  return absl::OkStatus();
}

}  // namespace cnnbench
