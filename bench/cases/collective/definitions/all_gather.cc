// All-gather (all_gather_perf): rank r's count elements land at slice r
// of every rank's receive buffer; in place, rank r's input already sits in
// its slice of the receive buffer.
#include "bench/cases/collective/collective_values.h"
#include "bench/cases/collective/definitions/definition.h"

namespace cnnbench::bench {

const CollectiveDefinition& AllGatherDefinition() {
  static const CollectiveDefinition kDefinition = {
      Collective::kAllGather,
      [](Communicator& comm, const RankCase& c, char* send, char* recv, bool in_place,
         const Stream& stream) {
        const size_t slice = c.shape.count * SizeOf(c.dtype) * static_cast<size_t>(c.rank);
        return comm.AllGather(in_place ? recv + slice : send, recv, c.shape.count, c.dtype, stream);
      },
      [](const RankCase& c, bool in_place) {
        return in_place ? BufferRange{false, c.shape.count * c.rank, c.shape.count}
                        : BufferRange{true, 0, c.shape.count};
      },
      [](const RankCase& c, bool) { return BufferRange{false, 0, c.shape.recv_elements}; },
      [](const RankCase& c, size_t i) {
        const size_t count = c.shape.count;
        return CollectiveInput(c.collective, c.op, static_cast<int>(i / count), i % count);
      },
  };
  return kDefinition;
}

}  // namespace cnnbench::bench
