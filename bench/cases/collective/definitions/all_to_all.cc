// All-to-all (alltoall_perf): slice q of rank r's send buffer lands at
// slice r of rank q's receive buffer. Out of place only: there is no
// in-place all-to-all (HasInPlace).
#include "bench/cases/collective/collective_values.h"
#include "bench/cases/collective/definitions/definition.h"

namespace cnnbench::bench {

const CollectiveDefinition& AllToAllDefinition() {
  static const CollectiveDefinition kDefinition = {
      Collective::kAllToAll,
      [](Communicator& comm, const RankCase& c, char* send, char* recv, bool,
         const Stream& stream) { return comm.AllToAll(send, recv, c.shape.count, c.dtype, stream); },
      [](const RankCase& c, bool) { return BufferRange{true, 0, c.shape.send_elements}; },
      [](const RankCase& c, bool) { return BufferRange{false, 0, c.shape.recv_elements}; },
      [](const RankCase& c, size_t i) {  // slice q: rank q's slice for this rank
        const size_t count = c.shape.count;
        return CollectiveInput(c.collective, c.op, static_cast<int>(i / count),
                               count * c.rank + i % count);
      },
  };
  return kDefinition;
}

}  // namespace cnnbench::bench
