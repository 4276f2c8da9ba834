// Reduce-scatter (reduce_scatter_perf): every rank's send buffer of
// ranks x count elements reduced, slice r on rank r; in place, the result is
// slice r of the send buffer itself.
#include "bench/cases/collective/collective_values.h"
#include "bench/cases/collective/definitions/definition.h"

namespace cnnbench::bench {

const CollectiveDefinition& ReduceScatterDefinition() {
  static const CollectiveDefinition kDefinition = {
      Collective::kReduceScatter,
      [](Communicator& comm, const RankCase& c, char* send, char* recv, bool in_place,
         const Stream& stream) {
        const size_t slice = c.shape.count * SizeOf(c.dtype) * static_cast<size_t>(c.rank);
        return comm.ReduceScatter(send, in_place ? send + slice : recv, c.shape.count, c.dtype,
                                  c.op, stream);
      },
      [](const RankCase& c, bool) { return BufferRange{true, 0, c.shape.send_elements}; },
      [](const RankCase& c, bool in_place) {
        return in_place ? BufferRange{true, c.shape.count * c.rank, c.shape.count}
                        : BufferRange{false, 0, c.shape.count};
      },
      [](const RankCase& c, size_t i) {
        return ReducedInput(c.op, c.dtype, c.ranks, c.shape.count * c.rank + i);
      },
  };
  return kDefinition;
}

}  // namespace cnnbench::bench
