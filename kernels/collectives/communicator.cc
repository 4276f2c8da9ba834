#include "kernels/collectives/communicator.h"

#include <algorithm>

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

absl::string_view CollectiveName(Collective collective) {
  switch (collective) {
    case Collective::kAllReduce:
      return "allreduce";
    case Collective::kAllGather:
      return "allgather";
    case Collective::kReduceScatter:
      return "reducescatter";
    case Collective::kBroadcast:
      return "broadcast";
    case Collective::kReduce:
      return "reduce";
    case Collective::kAllToAll:
      return "alltoall";
  }
  return "unknown";
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
  const size_t n = static_cast<size_t>(ranks);
  const size_t elements = static_cast<size_t>(bytes) / element_bytes;
  // One rank's part of an all-gather, reduce-scatter or all-to-all.
  const size_t align = std::max<size_t>(1, kRankPartAlignment / element_bytes);
  const size_t part = elements / n / align * align;
  switch (collective) {
    case Collective::kAllReduce:
    case Collective::kBroadcast:
    case Collective::kReduce:
      s.count = s.send_elements = s.recv_elements = elements;
      break;
    case Collective::kAllGather:
      s.count = s.send_elements = part;
      s.recv_elements = s.count * n;
      break;
    case Collective::kReduceScatter:
      s.count = s.recv_elements = part;
      s.send_elements = s.count * n;
      break;
    case Collective::kAllToAll:
      s.count = part;
      s.send_elements = s.recv_elements = s.count * n;
      break;
  }
  if (s.count == 0) return CollectiveShape{};
  s.bytes = static_cast<int64_t>(std::max(s.send_elements, s.recv_elements) * element_bytes);
  return s;
}

double BusFactor(Collective collective, int ranks) {
  if (ranks < 1) return 0;
  const double n = ranks;
  switch (collective) {
    case Collective::kAllReduce:
      return 2 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
      return (n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kReduce:
      return 1;
  }
  return 0;
}

}  // namespace cnnbench
