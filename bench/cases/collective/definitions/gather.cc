// Gather (nccl-tests' gather_perf): rank r's count elements land at slice r
// of the root's receive buffer (the others' are not written); in place, the
// root's input already sits in its slice.
#include "bench/cases/collective/collective_values.h"
#include "bench/cases/collective/definitions/definition.h"

namespace cnnbench::bench {

const CollectiveDefinition& GatherDefinition() {
  static const CollectiveDefinition kDefinition = {
      Collective::kGather,
      [](Communicator& comm, const RankCase& c, char* send, char* recv, bool in_place,
         const Stream& stream) {
        const size_t slice = c.shape.count * SizeOf(c.dtype) * static_cast<size_t>(c.root);
        const bool root_in_place = in_place && c.rank == c.root;
        return comm.Gather(root_in_place ? recv + slice : send, recv, c.shape.count, c.dtype,
                           c.root, stream);
      },
      [](const RankCase& c, bool in_place) {
        return in_place && c.rank == c.root
                   ? BufferRange{false, c.shape.count * c.rank, c.shape.count}
                   : BufferRange{true, 0, c.shape.count};
      },
      [](const RankCase& c, bool) {
        return BufferRange{false, 0, c.rank == c.root ? c.shape.recv_elements : 0};
      },
      [](const RankCase& c, size_t i) {
        const size_t count = c.shape.count;
        return CollectiveInput(c.collective, c.op, static_cast<int>(i / count), i % count);
      },
  };
  return kDefinition;
}

}  // namespace cnnbench::bench
