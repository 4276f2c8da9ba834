#include "kernels/collectives/communicator.h"

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
  }
  return "unknown";
}

double BusFactor(Collective collective, int ranks) {
  if (ranks < 1) return 0;
  const double n = ranks;
  switch (collective) {
    case Collective::kAllReduce:
      return 2 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
      return (n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kReduce:
      return 1;
  }
  return 0;
}

}  // namespace cnnbench
