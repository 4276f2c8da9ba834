// Reduce (reduce_perf): every rank's count elements reduced on the root
// alone (the others' receive buffers are not written); in place within the
// receive buffer.
#include "bench/cases/collective/collective_values.h"
#include "bench/cases/collective/definitions/definition.h"

namespace cnnbench::bench {

const CollectiveDefinition& ReduceDefinition() {
  static const CollectiveDefinition kDefinition = {
      Collective::kReduce,
      [](Communicator& comm, const RankCase& c, char* send, char* recv, bool in_place,
         const Stream& stream) {
        return comm.Reduce(in_place ? recv : send, recv, c.shape.count, c.dtype, c.op, c.root,
                           stream);
      },
      [](const RankCase& c, bool in_place) { return BufferRange{!in_place, 0, c.shape.count}; },
      [](const RankCase& c, bool) {
        return BufferRange{false, 0, c.rank == c.root ? c.shape.count : 0};
      },
      [](const RankCase& c, size_t i) { return ReducedInput(c.op, c.dtype, c.ranks, i); },
  };
  return kDefinition;
}

}  // namespace cnnbench::bench
