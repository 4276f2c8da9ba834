// Broadcast (broadcast_perf): the root's count elements on every rank;
// in place, the root's input is its receive buffer.
#include "bench/cases/collective/collective_values.h"
#include "bench/cases/collective/definitions/definition.h"

namespace cnnbench::bench {

const CollectiveDefinition& BroadcastDefinition() {
  static const CollectiveDefinition kDefinition = {
      Collective::kBroadcast,
      [](Communicator& comm, const RankCase& c, char* send, char* recv, bool in_place,
         const Stream& stream) {
        return comm.Broadcast(in_place ? recv : send, recv, c.shape.count, c.dtype, c.root, stream);
      },
      [](const RankCase& c, bool in_place) { return BufferRange{!in_place, 0, c.shape.count}; },
      [](const RankCase& c, bool) { return BufferRange{false, 0, c.shape.count}; },
      [](const RankCase& c, size_t i) { return CollectiveInput(c.collective, c.op, c.root, i); },
  };
  return kDefinition;
}

}  // namespace cnnbench::bench
