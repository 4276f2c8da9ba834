#include "train/memory_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace cnnbench {
namespace {

size_t RoundUp(size_t bytes, size_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

bool LifetimesOverlap(const BufferRequest& a, const BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

bool IsView(const BufferRequest& r) { return r.view_of >= 0; }

}  // namespace

int RootOf(const std::vector<BufferRequest>& requests, int index) {
  while (index >= 0 && index < static_cast<int>(requests.size()) && IsView(requests[index]) &&
         requests[index].view_of < index)
    index = requests[index].view_of;
  return index;
}

MemoryPlan PlanMemory(const std::vector<BufferRequest>& requests, size_t alignment) {
  MemoryPlan plan;
  plan.alignment = alignment;
  auto Align = [alignment](size_t bytes) { return RoundUp(bytes, alignment); };
  plan.offsets.assign(requests.size(), 0);
  std::vector<int> order;
  for (int i = 0; i < static_cast<int>(requests.size()); ++i)
    if (!IsView(requests[i])) order.push_back(i);
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
  // Views, parents first (a parent comes before its views; VerifyPlan
  // names one that does not).
  for (size_t i = 0; i < requests.size(); ++i)
    if (IsView(requests[i]) && requests[i].view_of < static_cast<int>(i))
      plan.offsets[i] = plan.offsets[requests[i].view_of] + requests[i].view_offset;
  return plan;
}

absl::Status VerifyPlan(const std::vector<BufferRequest>& requests, const MemoryPlan& plan) {
  if (plan.offsets.size() != requests.size())
    return absl::InternalError("memory plan has a different number of buffers than requests");
  for (size_t i = 0; i < requests.size(); ++i) {
    const BufferRequest& r = requests[i];
    if (IsView(r)) {
      if (r.view_of >= static_cast<int>(i))
        return absl::InternalError(absl::StrCat("view ", r.name, " is of request ", r.view_of,
                                                ", which does not come before it"));
      const BufferRequest& parent = requests[r.view_of];
      const BufferRequest& root = requests[RootOf(requests, static_cast<int>(i))];
      if (r.view_offset + r.bytes > parent.bytes ||
          plan.offsets[i] != plan.offsets[r.view_of] + r.view_offset)
        return absl::InternalError(absl::StrCat("view ", r.name, " [", r.view_offset, ",",
                                                r.view_offset + r.bytes, ") is not inside ",
                                                parent.name, " of ", parent.bytes, " bytes"));
      if (r.first != root.first || r.last != root.last)
        return absl::InternalError(absl::StrCat("view ", r.name, " lives steps ", r.first, "-",
                                                r.last, ", its root ", root.name, " steps ",
                                                root.first, "-", root.last));
    }
    if (plan.alignment == 0 || (!IsView(r) && plan.offsets[i] % plan.alignment != 0) ||
        plan.offsets[i] + r.bytes > plan.arena_bytes)
      return absl::InternalError(absl::StrCat("buffer ", r.name, " at ", plan.offsets[i],
                                              " does not fit the arena of ", plan.arena_bytes,
                                              " bytes"));
    for (size_t j = i + 1; j < requests.size(); ++j) {
      const BufferRequest& q = requests[j];
      // Roots against roots; views against their siblings.
      const bool compared = IsView(r) || IsView(q) ? IsView(r) && IsView(q) && r.view_of == q.view_of
                                                   : LifetimesOverlap(r, q);
      if (!compared) continue;
      const size_t a0 = plan.offsets[i], a1 = a0 + r.bytes;
      const size_t b0 = plan.offsets[j], b1 = b0 + q.bytes;
      if (a0 < b1 && b0 < a1 && r.bytes > 0 && q.bytes > 0)
        return absl::InternalError(absl::StrCat("live buffers overlap: ", r.name, " [", a0, ",",
                                                a1, ") steps ", r.first, "-", r.last, " and ",
                                                q.name, " [", b0, ",", b1, ") steps ", q.first,
                                                "-", q.last));
    }
  }
  return absl::OkStatus();
}

}  // namespace cnnbench
