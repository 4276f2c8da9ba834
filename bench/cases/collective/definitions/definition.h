// One collective as the collective cases run and check it, in the shape of
// nccl-tests' per-collective files (src/all_reduce.cu, ...): where a rank's
// inputs go, the communicator call out of place and in place, and where the
// rank's result is with what each of its elements must be. Its name, sizes
// and bus factor are kernels/collectives' (CollectiveName, ShapeOf,
// BusFactor). The workload (collective_cases.cc) calls through these alone:
// adding a collective is one more file here and its line in DefinitionOf's
// table (definitions.cc), which does not compile while one is missing.
#ifndef CNNBENCH_BENCH_CASES_COLLECTIVE_DEFINITIONS_DEFINITION_H_
#define CNNBENCH_BENCH_CASES_COLLECTIVE_DEFINITIONS_DEFINITION_H_

#include <cstddef>

#include "absl/status/status.h"
#include "core/device.h"
#include "core/dtype.h"
#include "kernels/collectives/communicator.h"

namespace cnnbench::bench {

// One rank's side of one case: what every call and check of it is given.
struct RankCase {
  Collective collective = Collective::kAllReduce;
  ReduceOp op = ReduceOp::kSum;
  DType dtype = DType::kF32;
  int root = 0;
  int rank = 0;   // in the group
  int ranks = 1;  // the group's size
  CollectiveShape shape;
};

// A range of one of the rank's two buffers, in elements.
struct BufferRange {
  bool send = false;  // the send buffer (else the receive buffer)
  size_t first = 0;
  size_t elements = 0;  // 0: nothing (a reduce's result off the root)
};

struct CollectiveDefinition {
  Collective collective;
  // The call on `comm` with the rank's buffers (send_elements and
  // recv_elements of the shape), in place within whichever buffer
  // nccl-tests uses for it. Never called in place where the collective has
  // no in-place form (HasInPlace).
  absl::Status (*call)(Communicator& comm, const RankCase& c, char* send, char* recv,
                       bool in_place, const Stream& stream);
  // Where the rank's inputs go: element first + i of the range holds input
  // i (CollectiveInput(collective, op, rank, i)); the rest of that buffer
  // is poisoned.
  BufferRange (*inputs)(const RankCase& c, bool in_place);
  // Where the rank's result is after one call.
  BufferRange (*result)(const RankCase& c, bool in_place);
  // Element i of that result.
  double (*expected)(const RankCase& c, size_t i);
};

// The definition of `collective`.
const CollectiveDefinition& DefinitionOf(Collective collective);

// Each collective's definition, one file each.
const CollectiveDefinition& AllReduceDefinition();
const CollectiveDefinition& AllGatherDefinition();
const CollectiveDefinition& ReduceScatterDefinition();
const CollectiveDefinition& BroadcastDefinition();
const CollectiveDefinition& ReduceDefinition();
const CollectiveDefinition& AllToAllDefinition();
const CollectiveDefinition& GatherDefinition();
const CollectiveDefinition& ScatterDefinition();

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_CASES_COLLECTIVE_DEFINITIONS_DEFINITION_H_
