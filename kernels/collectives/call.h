// What a rank asks of a collective, as the groups that check ranks agree
// (local, mpi) describe a call. Internal to kernels/collectives.
#ifndef CNNBENCH_KERNELS_COLLECTIVES_CALL_H_
#define CNNBENCH_KERNELS_COLLECTIVES_CALL_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "core/dtype.h"
#include "kernels/collectives/communicator.h"

namespace cnnbench::collectives {

enum class Kind { kAllReduce, kBroadcast, kAllGather };

// "all-reduce", "broadcast", "all-gather"; "collective" for a value that is
// no Kind (a signature field received from another rank).
inline absl::string_view KindName(int64_t kind) {
  switch (static_cast<Kind>(kind)) {
    case Kind::kAllReduce:
      return "all-reduce";
    case Kind::kBroadcast:
      return "broadcast";
    case Kind::kAllGather:
      return "all-gather";
  }
  return "collective";
}
inline absl::string_view KindName(Kind kind) { return KindName(static_cast<int64_t>(kind)); }

// One rank's call. A broadcast posts its buffer as both send and recv; `op`
// is kSum unless an all-reduce and `root` 0 unless a broadcast, so two calls
// agree exactly when these fields (but the buffers) are equal.
struct Call {
  Kind kind = Kind::kAllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;
  DType dtype = DType::kF32;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
};

}  // namespace cnnbench::collectives

#endif  // CNNBENCH_KERNELS_COLLECTIVES_CALL_H_
