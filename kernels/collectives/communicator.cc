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
  }
  return "unknown";  // a value cast from outside the enumeration
}

}  // namespace cnnbench
