// The `nccl` group: ranks are GPUs, buffers are device memory, and every
// call is enqueued on the stream it is given (nothing waits unless asked).
// Two ways to make one: CreateNcclGroup (one process driving several GPUs)
// and CreateNcclCommunicator (one process per GPU, the unique id shared over
// another communicator, usually the mpi one). Without CUDA in the build
// (no toolkit, or --config=nocuda) every function says "unsupported: ...".
#ifndef CNNBENCH_KERNELS_COLLECTIVES_NCCL_H_
#define CNNBENCH_KERNELS_COLLECTIVES_NCCL_H_

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/device.h"
#include "kernels/collectives/communicator.h"

namespace cnnbench {

// True when this build has NCCL (a CUDA build); says nothing about GPUs.
bool NcclBuiltIn();
// The NCCL library's version, e.g. "2.28.9" (ncclGetVersion; needs no GPU).
absl::StatusOr<std::string> NcclVersion();

// What every rank of a multi-process NCCL group must share (ncclUniqueId).
struct NcclUniqueId {
  std::array<char, 128> bytes{};
};
// A new id (ncclGetUniqueId): rank 0 makes it, every rank then receives it.
absl::StatusOr<NcclUniqueId> NewNcclUniqueId();
// Rank 0 of `bootstrap` makes an id and broadcasts it; every rank of
// `bootstrap` calls this and gets the same id.
absl::StatusOr<NcclUniqueId> ShareNcclUniqueId(Communicator& bootstrap);

// One communicator per device of this process (ncclCommInitAll), element r
// being rank r on devices[r]. Each is used by its own thread (or the calls of
// all ranks are made from one thread between ncclGroupStart/End, which this
// interface does not expose).
absl::StatusOr<std::vector<std::unique_ptr<Communicator>>> CreateNcclGroup(
    const std::vector<Device>& devices, const CommunicatorOptions& options = CommunicatorOptions());

// Rank `rank` of `size`, one process per GPU, on `device`. Every rank calls
// it with the same id. Created non-blocking (ncclCommInitRankConfig with
// blocking = 0) and polled: a group that is not complete within
// options.timeout is aborted (ncclCommAbort) and this is DeadlineExceeded.
absl::StatusOr<std::unique_ptr<Communicator>> CreateNcclCommunicator(
    const NcclUniqueId& id, int rank, int size, const Device& device,
    const CommunicatorOptions& options = CommunicatorOptions());

// Waits for `stream`'s work, where `comm`'s collectives were enqueued, at
// most the communicator's timeout. A collective whose peers never make it
// never completes on the GPU: then the communicator is aborted (broken, every
// later call fails at once) and this is DeadlineExceeded. InvalidArgument for
// a communicator that is not an nccl one.
absl::Status NcclSynchronize(Communicator& comm, const Stream& stream);

// The collectives: fp32, fp16, bf16, fp64, int32, int64 (AllReduce also
// uint8); sum, avg (ncclAvg), max, min, prod. Buffers are device memory on the
// communicator's device and the stream is on that device. Unlike the local
// and mpi groups:
// - a mismatch between ranks is not detected (NCCL does not check, and a
//   check would cost a device-to-host round trip per call): as with NCCL
//   itself, every rank must make the same calls;
// - fp16 and bf16 are reduced by NCCL in its own way (each step rounds to
//   the type), not in fp32 rounded once;
// - the timeout covers creating the communicator and enqueueing each call;
//   a collective a peer never makes is caught by NcclSynchronize.

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_COLLECTIVES_NCCL_H_
