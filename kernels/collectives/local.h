// The `local` group: ranks are threads of this process and buffers are host
// memory. Each communicator is used by its own thread; a collective returns
// when every rank has made it.
#ifndef CNNBENCH_KERNELS_COLLECTIVES_LOCAL_H_
#define CNNBENCH_KERNELS_COLLECTIVES_LOCAL_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/collectives/communicator.h"

namespace cnnbench {

// One communicator per rank, element r being rank r. The communicators share
// the group's state and may be destroyed in any order once no call is running.
// Supported: fp32, fp64, fp16, bf16, int32, int64; sum, avg, max, min.
absl::StatusOr<std::vector<std::unique_ptr<Communicator>>> CreateLocalGroup(int ranks);

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_COLLECTIVES_LOCAL_H_
