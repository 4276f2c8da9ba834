// The `local` group: ranks are threads of this process and buffers are host
// memory. Each communicator is used by its own thread; a collective returns
// when every rank has made it, or fails once the group's timeout passes.
#ifndef CNNBENCH_KERNELS_COLLECTIVES_LOCAL_H_
#define CNNBENCH_KERNELS_COLLECTIVES_LOCAL_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/collectives/communicator.h"

namespace cnnbench {

// One communicator per rank, element r being rank r. The communicators share
// the group's state and may be destroyed in any order once no call is running.
// AllReduce: fp32, fp64, fp16, bf16, int32, int64; sum, avg, max, min, prod.
// Broadcast and AllGather: every dtype (they copy bytes); an in-place
// all-gather passes send == recv + rank * count.
// A rank that waits longer than options.timeout for the others gets
// DeadlineExceeded naming the ranks that did not arrive ("local all-reduce
// timed out after 2s: ranks 1, 3 did not arrive ..."); so does every rank
// still waiting then, and every later call on any rank fails at once with
// FailedPrecondition (the group is broken).
absl::StatusOr<std::vector<std::unique_ptr<Communicator>>> CreateLocalGroup(
    int ranks, const CommunicatorOptions& options);
// With default options (CommunicatorOptions{}).
absl::StatusOr<std::vector<std::unique_ptr<Communicator>>> CreateLocalGroup(int ranks);

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_COLLECTIVES_LOCAL_H_
