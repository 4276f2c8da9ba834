// What a rank asks of a collective, as the groups that check ranks agree
// (local, mpi) describe a call, and the checks a rank makes of its own call
// before meeting the others, shared by both. Internal to kernels/collectives.
#ifndef CNNBENCH_KERNELS_COLLECTIVES_CALL_H_
#define CNNBENCH_KERNELS_COLLECTIVES_CALL_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/device.h"
#include "core/dtype.h"
#include "kernels/collectives/communicator.h"

namespace cnnbench::collectives {

// A collective's name in errors ("all-reduce", ...; CollectiveTraits::
// display), or "collective" for a value that is none (a signature field
// received from another rank).
inline absl::string_view KindName(int64_t kind) {
  for (Collective c : kCollectives)
    if (static_cast<int64_t>(c) == kind) return CollectiveTraitsOf(c).display;
  return "collective";
}
inline absl::string_view KindName(Collective kind) { return KindName(static_cast<int64_t>(kind)); }

// One rank's call (in place, a broadcast's send is its recv); `op`
// is kSum unless the collective reduces and `root` 0 unless it has one, so
// two calls agree exactly when these fields (but the buffers) are equal.
// `count` is the per-rank count the interface takes (a reduce-scatter's
// receive count, an all-gather's send count).
struct Call {
  Collective kind = Collective::kAllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;
  DType dtype = DType::kF32;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
};

// sum, avg, max, min and prod: the reductions every group knows.
bool KnownOp(ReduceOp op);
// An op's or a dtype's name, or "op N" / "dtype N" for a value that is none
// (a signature field received from another rank).
std::string OpText(int64_t op);
std::string DTypeText(int64_t dtype);
// "all-reduce (count 4, fp32, sum)", "broadcast (count 4, fp32, root 1)".
std::string Describe(const Call& c);
bool Overlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes);

// What differs between the groups in a rank's own checks.
struct GroupRules {
  absl::string_view group;   // "local", "mpi": the errors' first word
  absl::string_view memory;  // completes "the stream is on <device> but ..."
  // Whether the group reduces `dtype` (the op is one of KnownOp's).
  bool (*reduces)(DType dtype, ReduceOp op) = nullptr;
  // A limit on the call's size, or null; its error is prefixed with the call.
  absl::Status (*check_count)(const Call& c) = nullptr;
};

// What a rank can check alone, before meeting the others: the op and dtype,
// the stream's device, the root, the size limit, null and overlapping
// buffers. Every error names the group, the collective and the rank.
absl::Status CheckOwnCall(const Call& c, const Stream& stream, int rank, int size,
                          const GroupRules& rules);

}  // namespace cnnbench::collectives

#endif  // CNNBENCH_KERNELS_COLLECTIVES_CALL_H_
