// Scatter (nccl-tests' scatter_perf): slice r of the root's send buffer
// lands in rank r's receive buffer; in place, the root's own slice is its
// result already (its receive buffer is that slice).
#include "bench/cases/collective/collective_values.h"
#include "bench/cases/collective/definitions/definition.h"

namespace cnnbench::bench {

const CollectiveDefinition& ScatterDefinition() {
  static const CollectiveDefinition kDefinition = {
      Collective::kScatter,
      [](Communicator& comm, const RankCase& c, char* send, char* recv, bool in_place,
         const Stream& stream) {
        const size_t slice = c.shape.count * SizeOf(c.dtype) * static_cast<size_t>(c.root);
        const bool root_in_place = in_place && c.rank == c.root;
        return comm.Scatter(send, root_in_place ? send + slice : recv, c.shape.count, c.dtype,
                            c.root, stream);
      },
      [](const RankCase& c, bool) { return BufferRange{true, 0, c.shape.send_elements}; },
      [](const RankCase& c, bool in_place) {
        return in_place && c.rank == c.root
                   ? BufferRange{true, c.shape.count * c.rank, c.shape.count}
                   : BufferRange{false, 0, c.shape.count};
      },
      [](const RankCase& c, size_t i) {
        return CollectiveInput(c.collective, c.op, c.root, c.shape.count * c.rank + i);
      },
  };
  return kDefinition;
}

}  // namespace cnnbench::bench
