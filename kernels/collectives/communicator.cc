#include "kernels/collectives/communicator.h"

#include <algorithm>
#include <iterator>

namespace cnnbench {

absl::string_view ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kAvg:
      return "avg";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kProd:
      return "prod";
  }
  return "unknown";  // a value cast from outside the enumeration
}

namespace {

// clang-format off
constexpr CollectiveTraits kTraits[] = {
    // collective, name, display, rooted, reduces, in place, send / recv per rank,
    // send / recv on the root only, bus
    {Collective::kAllReduce, "allreduce", "all-reduce", false, true, true, false, false, false,
     false, BusRule::kAllReduce},
    {Collective::kAllGather, "allgather", "all-gather", false, false, true, false, true, false,
     false, BusRule::kShared},
    {Collective::kReduceScatter, "reducescatter", "reduce-scatter", false, true, true, true, false,
     false, false, BusRule::kShared},
    {Collective::kBroadcast, "broadcast", "broadcast", true, false, true, false, false, true,
     false, BusRule::kWhole},
    {Collective::kReduce, "reduce", "reduce", true, true, true, false, false, false, true,
     BusRule::kWhole},
    {Collective::kAllToAll, "alltoall", "all-to-all", false, false, false, true, true, false,
     false, BusRule::kShared},
    {Collective::kGather, "gather", "gather", true, false, true, false, true, false, true,
     BusRule::kShared},
    {Collective::kScatter, "scatter", "scatter", true, false, true, true, false, true, false,
     BusRule::kShared},
};
// clang-format on
static_assert(std::size(kTraits) == std::size(kCollectives),
              "every collective of kCollectives needs its row in kTraits");
constexpr bool InOrder() {
  for (size_t i = 0; i < std::size(kTraits); ++i)
    if (kTraits[i].collective != kCollectives[i] || static_cast<size_t>(kCollectives[i]) != i)
      return false;
  return true;
}
static_assert(InOrder(), "kTraits and kCollectives follow the enum's order");

}  // namespace

const CollectiveTraits& CollectiveTraitsOf(Collective collective) {
  return kTraits[static_cast<size_t>(collective)];
}

absl::string_view CollectiveName(Collective collective) {
  return CollectiveTraitsOf(collective).name;
}

bool FindCollective(absl::string_view name, Collective* collective) {
  for (Collective c : kCollectives)
    if (CollectiveName(c) == name) {
      *collective = c;
      return true;
    }
  return false;
}

CollectiveShape ShapeOf(Collective collective, size_t element_bytes, int64_t bytes, int ranks) {
  CollectiveShape s;
  if (element_bytes == 0 || bytes <= 0 || ranks < 1) return s;
  const CollectiveTraits& t = CollectiveTraitsOf(collective);
  const size_t n = static_cast<size_t>(ranks);
  const size_t elements = static_cast<size_t>(bytes) / element_bytes;
  if (t.send_per_rank || t.recv_per_rank) {
    // One rank's part, in whole kRankPartAlignment bytes.
    const size_t align = std::max<size_t>(1, kRankPartAlignment / element_bytes);
    s.count = elements / n / align * align;
  } else {
    s.count = elements;
  }
  if (s.count == 0) return CollectiveShape{};
  s.send_elements = t.send_per_rank ? s.count * n : s.count;
  s.recv_elements = t.recv_per_rank ? s.count * n : s.count;
  s.bytes = static_cast<int64_t>(std::max(s.send_elements, s.recv_elements) * element_bytes);
  return s;
}

double BusFactor(Collective collective, int ranks) {
  if (ranks < 1) return 0;
  const double n = ranks;
  switch (CollectiveTraitsOf(collective).bus) {
    case BusRule::kAllReduce:
      return 2 * (n - 1) / n;
    case BusRule::kShared:
      return (n - 1) / n;
    case BusRule::kWhole:
      return 1;
  }
  return 0;
}

}  // namespace cnnbench
