// All-reduce (nccl-tests' all_reduce_perf): every rank's one buffer of
// count elements, reduced on every rank; in place within the receive buffer.
#include "bench/cases/collective/collective_values.h"
#include "bench/cases/collective/definitions/definition.h"

namespace cnnbench::bench {

const CollectiveDefinition& AllReduceDefinition() {
  static const CollectiveDefinition kDefinition = {
      Collective::kAllReduce,
      [](Communicator& comm, const RankCase& c, char* send, char* recv, bool in_place,
         const Stream& stream) {
        return comm.AllReduce(in_place ? recv : send, recv, c.shape.count, c.dtype, c.op, stream);
      },
      [](const RankCase& c, bool in_place) { return BufferRange{!in_place, 0, c.shape.count}; },
      [](const RankCase& c, bool) { return BufferRange{false, 0, c.shape.count}; },
      [](const RankCase& c, size_t i) { return ReducedInput(c.op, c.dtype, c.ranks, i); },
  };
  return kDefinition;
}

}  // namespace cnnbench::bench
