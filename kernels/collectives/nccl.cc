// The nccl group on NCCL (CUDA builds). Communicators made by
// CreateNcclCommunicator are non-blocking (config.blocking = 0): creation
// and each enqueue may return ncclInProgress, and the communicator's state
// (ncclCommGetAsyncError) is polled until it leaves it or the deadline
// passes, when the communicator is aborted (ncclCommAbort) and broken.
// CreateNcclGroup's communicators (ncclCommInitAll) are blocking: all ranks
// are in this process, so there is no peer to wait for at creation.
#include "kernels/collectives/nccl.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/cuda_status.h"
#include "core/dtype.h"

namespace cnnbench {
namespace {

using Clock = std::chrono::steady_clock;

static_assert(sizeof(ncclUniqueId) == sizeof(NcclUniqueId::bytes),
              "NcclUniqueId must hold an ncclUniqueId");

Clock::time_point DeadlineAfter(absl::Duration timeout) {
  timeout = std::min(timeout, absl::Hours(24 * 365));  // beyond a year: none
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(absl::ToChronoNanoseconds(timeout));
}

// Polls `comm`'s state until it is ready (true) or `deadline` passes (false);
// an asynchronous NCCL error is an error.
absl::StatusOr<bool> WaitReady(ncclComm_t comm, Clock::time_point deadline) {
  for (;;) {
    ncclResult_t state = ncclSuccess;
    NCCL_RETURN_IF_ERROR(ncclCommGetAsyncError(comm, &state));
    if (state == ncclSuccess) return true;
    if (state != ncclInProgress)
      return NcclError(state, "ncclCommGetAsyncError (the communicator's state)", __FILE__,
                       __LINE__);
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

absl::StatusOr<ncclDataType_t> NcclType(DType dtype, bool reduce) {
  switch (dtype) {
    case DType::kF32:
      return ncclFloat32;
    case DType::kF16:
      return ncclFloat16;
    case DType::kBF16:
      return ncclBfloat16;
    case DType::kF64:
      return ncclFloat64;
    case DType::kI32:
      return ncclInt32;
    case DType::kI64:
      return ncclInt64;
    case DType::kU8:
      return ncclUint8;
  }
  return absl::UnimplementedError(absl::StrCat("unsupported: nccl ",
                                               reduce ? "all-reduce" : "collective", " of dtype ",
                                               static_cast<int>(dtype)));
}

absl::StatusOr<ncclRedOp_t> NcclOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kAvg:
      return ncclAvg;
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kMin:
      return ncclMin;
    case ReduceOp::kProd:
      return ncclProd;
  }
  return absl::UnimplementedError(
      absl::StrCat("unsupported: reduce op ", static_cast<int>(op),
                   " in nccl all-reduce (known: sum, avg, max, min, prod)"));
}

class NcclCommunicator final : public Communicator {
 public:
  // `blocking`: made by ncclCommInitAll, not with config.blocking = 0.
  NcclCommunicator(ncclComm_t comm, int rank, int size, Device device, absl::Duration timeout,
                   bool blocking)
      : comm_(comm),
        rank_(rank),
        size_(size),
        device_(device),
        timeout_(timeout),
        blocking_(blocking) {}

  ~NcclCommunicator() override {
    if (comm_ == nullptr) return;  // aborted
    if (cudaSetDevice(device_.ordinal) != cudaSuccess) return;
    if (blocking_) {
      ncclCommDestroy(comm_);
      return;
    }
    // Finalize flushes what is enqueued; a peer that never makes its calls
    // would hold it forever, so it gets the timeout too, then the abort.
    const ncclResult_t result = ncclCommFinalize(comm_);
    if (result == ncclSuccess || result == ncclInProgress) {
      auto ready = WaitReady(comm_, DeadlineAfter(timeout_));
      if (ready.ok() && *ready) {
        ncclCommDestroy(comm_);
        return;
      }
    }
    ncclCommAbort(comm_);
  }

  absl::string_view name() const override { return "nccl"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  absl::Status AllReduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                         const Stream& stream) override {
    RETURN_IF_ERROR(CheckCall("all-reduce", send, recv, count, stream));
    ASSIGN_OR_RETURN(const ncclDataType_t type, NcclType(dtype, true));
    ASSIGN_OR_RETURN(const ncclRedOp_t nccl_op, NcclOp(op));
    return Enqueued(ncclAllReduce(send, recv, count, type, nccl_op, comm_, Native(stream)),
                    "ncclAllReduce");
  }

  absl::Status Broadcast(const void* send, void* recv, size_t count, DType dtype, int root,
                         const Stream& stream) override {
    // The send buffer is read on the root only: elsewhere it may be null.
    RETURN_IF_ERROR(CheckCall("broadcast", rank_ == root ? send : recv, recv, count, stream));
    if (root < 0 || root >= size_)
      return absl::InvalidArgumentError(absl::StrCat("nccl broadcast, rank ", rank_, " of ", size_,
                                                     ": root ", root, " is not a rank (0 .. ",
                                                     size_ - 1, ")"));
    ASSIGN_OR_RETURN(const ncclDataType_t type, NcclType(dtype, false));
    return Enqueued(ncclBroadcast(send, recv, count, type, root, comm_, Native(stream)),
                    "ncclBroadcast");
  }

  absl::Status AllGather(const void* send, void* recv, size_t count, DType dtype,
                         const Stream& stream) override {
    RETURN_IF_ERROR(CheckCall("all-gather", send, recv, count, stream));
    ASSIGN_OR_RETURN(const ncclDataType_t type, NcclType(dtype, false));
    return Enqueued(ncclAllGather(send, recv, count, type, comm_, Native(stream)), "ncclAllGather");
  }

  absl::Status ReduceScatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                             const Stream& stream) override {
    RETURN_IF_ERROR(CheckCall("reduce-scatter", send, recv, count, stream));
    ASSIGN_OR_RETURN(const ncclDataType_t type, NcclType(dtype, true));
    ASSIGN_OR_RETURN(const ncclRedOp_t nccl_op, NcclOp(op));
    return Enqueued(ncclReduceScatter(send, recv, count, type, nccl_op, comm_, Native(stream)),
                    "ncclReduceScatter");
  }

  absl::Status AllToAll(const void* send, void* recv, size_t count, DType dtype,
                        const Stream& stream) override {
    RETURN_IF_ERROR(CheckCall("all-to-all", send, recv, count, stream));
    const size_t bytes = count * SizeOf(dtype) * static_cast<size_t>(size_);
    if (count > 0 && static_cast<const char*>(send) < static_cast<char*>(recv) + bytes &&
        static_cast<char*>(recv) < static_cast<const char*>(send) + bytes)
      return absl::InvalidArgumentError(absl::StrCat(
          "nccl all-to-all, rank ", rank_, " of ", size_,
          ": the send and receive buffers overlap (an all-to-all has no in-place form)"));
    ASSIGN_OR_RETURN(const ncclDataType_t type, NcclType(dtype, false));
    // As nccl-tests makes it: a send and a receive to every rank, one group.
    const size_t slice = count * SizeOf(dtype);
    ncclResult_t result = ncclGroupStart();
    for (int r = 0; r < size_ && result == ncclSuccess; ++r) {
      result = ncclSend(static_cast<const char*>(send) + r * slice, count, type, r, comm_,
                        Native(stream));
      if (result == ncclSuccess)
        result =
            ncclRecv(static_cast<char*>(recv) + r * slice, count, type, r, comm_, Native(stream));
    }
    const ncclResult_t ended = ncclGroupEnd();
    if (result == ncclSuccess) result = ended;
    return Enqueued(result, "ncclSend/ncclRecv (all-to-all)");
  }

  absl::Status Gather(const void* send, void* recv, size_t count, DType dtype, int root,
                      const Stream& stream) override {
    return RootParts(/*gather=*/true, send, recv, count, dtype, root, stream);
  }

  absl::Status Scatter(const void* send, void* recv, size_t count, DType dtype, int root,
                       const Stream& stream) override {
    return RootParts(/*gather=*/false, send, recv, count, dtype, root, stream);
  }

  absl::Status Reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                      int root, const Stream& stream) override {
    // Only the root's receive buffer is written: the others may pass null.
    RETURN_IF_ERROR(CheckCall("reduce", send, rank_ == root ? recv : send, count, stream));
    if (root < 0 || root >= size_)
      return absl::InvalidArgumentError(absl::StrCat("nccl reduce, rank ", rank_, " of ", size_,
                                                     ": root ", root, " is not a rank (0 .. ",
                                                     size_ - 1, ")"));
    ASSIGN_OR_RETURN(const ncclDataType_t type, NcclType(dtype, true));
    ASSIGN_OR_RETURN(const ncclRedOp_t nccl_op, NcclOp(op));
    return Enqueued(ncclReduce(send, recv, count, type, nccl_op, root, comm_, Native(stream)),
                    "ncclReduce");
  }

  // See NcclSynchronize.
  absl::Status Synchronize(const Stream& stream) {
    RETURN_IF_ERROR(CheckCall("synchronize", nullptr, nullptr, 0, stream));
    const Clock::time_point deadline = DeadlineAfter(timeout_);
    for (;;) {
      const cudaError_t query = cudaStreamQuery(Native(stream));
      if (query == cudaSuccess) return absl::OkStatus();
      if (query != cudaErrorNotReady)
        return CudaError(query, "cudaStreamQuery", __FILE__, __LINE__);
      ncclResult_t state = ncclSuccess;
      NCCL_RETURN_IF_ERROR(ncclCommGetAsyncError(comm_, &state));
      if (state != ncclSuccess && state != ncclInProgress)
        return Break(NcclError(state, "ncclCommGetAsyncError", __FILE__, __LINE__));
      if (Clock::now() >= deadline)
        return Break(absl::DeadlineExceededError(absl::StrCat(
            "nccl rank ", rank_, " of ", size_, " on ", device_.ToString(),
            ": the stream's collectives did not complete within ", absl::FormatDuration(timeout_),
            " (a rank did not make the same calls; NCCL cannot tell which); the communicator "
            "is aborted")));
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

 private:
  static cudaStream_t Native(const Stream& stream) {
    return static_cast<cudaStream_t>(stream.native_handle());
  }

  absl::Status CheckCall(absl::string_view what, const void* send, const void* recv, size_t count,
                         const Stream& stream) {
    const std::string where =
        absl::StrCat("nccl ", what, ", rank ", rank_, " of ", size_, " on ", device_.ToString());
    if (!broken_.ok())
      return absl::FailedPreconditionError(
          absl::StrCat(where, ": the communicator is broken since an earlier call failed (",
                       broken_.message(), ")"));
    if (stream.device() != device_)
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": the stream is on ", stream.device().ToString()));
    if (count > 0 && (send == nullptr || recv == nullptr))
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": a null buffer for ", count, " elements"));
    CUDA_RETURN_IF_ERROR(cudaSetDevice(device_.ordinal));
    return absl::OkStatus();
  }

  // Gather (every rank's part into the root's recv) or scatter (the root's
  // send out to every rank), as nccl-tests makes them: the root's sends or
  // receives to every rank and each rank's one receive or send, in one
  // group. The root's side holds size() * count, and is used on the root
  // only (elsewhere it may be null). In place, the root's own part is where
  // it belongs already: no pair to itself.
  absl::Status RootParts(bool gather, const void* send, void* recv, size_t count, DType dtype,
                         int root, const Stream& stream) {
    const char* what = gather ? "gather" : "scatter";
    const bool is_root = rank_ == root;
    const void* part = gather ? send : recv;  // this rank's count elements
    const void* all = gather ? recv : send;   // the root's size() * count
    RETURN_IF_ERROR(CheckCall(what, part, is_root ? all : part, count, stream));
    RETURN_IF_ERROR(CheckRoot(what, root));
    ASSIGN_OR_RETURN(const ncclDataType_t type, NcclType(dtype, false));
    const size_t slice = count * SizeOf(dtype);
    const char* root_slice = static_cast<const char*>(all) + root * slice;
    const bool in_place = is_root && part == root_slice;
    if (is_root && !in_place && Overlaps(part, slice, all, slice * size_))
      return absl::InvalidArgumentError(absl::StrCat(
          "nccl ", what, ", rank ", rank_, " of ", size_, ": the ", gather ? "send" : "receive",
          " buffer overlaps the ", gather ? "receive" : "send",
          " buffer without being the root's slice of it (in place is ",
          gather ? "send == recv" : "recv == send", " + root * count)"));
    ncclResult_t result = ncclGroupStart();
    if (result == ncclSuccess && !in_place)
      result = gather ? ncclSend(send, count, type, root, comm_, Native(stream))
                      : ncclRecv(recv, count, type, root, comm_, Native(stream));
    for (int r = 0; is_root && r < size_ && result == ncclSuccess; ++r) {
      if (in_place && r == root) continue;
      result = gather ? ncclRecv(static_cast<char*>(recv) + r * slice, count, type, r, comm_,
                                 Native(stream))
                      : ncclSend(static_cast<const char*>(send) + r * slice, count, type, r,
                                 comm_, Native(stream));
    }
    const ncclResult_t ended = ncclGroupEnd();
    if (result == ncclSuccess) result = ended;
    return Enqueued(result, gather ? "ncclSend/ncclRecv (gather)" : "ncclSend/ncclRecv (scatter)");
  }

  static bool Overlaps(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
    const char* x = static_cast<const char*>(a);
    const char* y = static_cast<const char*>(b);
    return a_bytes > 0 && b_bytes > 0 && x < y + b_bytes && y < x + a_bytes;
  }

  absl::Status CheckRoot(absl::string_view what, int root) const {
    if (root >= 0 && root < size_) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat("nccl ", what, ", rank ", rank_, " of ", size_,
                                                   ": root ", root, " is not a rank (0 .. ",
                                                   size_ - 1, ")"));
  }

  // The result of an enqueue: on a non-blocking communicator it may still be
  // in progress, and is waited for up to the timeout.
  absl::Status Enqueued(ncclResult_t result, const char* call) {
    if (result == ncclSuccess) return absl::OkStatus();
    if (result != ncclInProgress) return Break(NcclError(result, call, __FILE__, __LINE__));
    auto ready = WaitReady(comm_, DeadlineAfter(timeout_));
    if (!ready.ok()) return Break(ready.status());
    if (*ready) return absl::OkStatus();
    return Break(absl::DeadlineExceededError(absl::StrCat(
        call, " on nccl rank ", rank_, " of ", size_, " was still being enqueued after ",
        absl::FormatDuration(timeout_), "; the communicator is aborted")));
  }

  absl::Status Break(absl::Status status) {
    if (broken_.ok()) broken_ = status;
    if (comm_ != nullptr) {
      ncclCommAbort(comm_);
      comm_ = nullptr;
    }
    return status;
  }

  ncclComm_t comm_;
  const int rank_;
  const int size_;
  const Device device_;
  const absl::Duration timeout_;
  const bool blocking_;
  absl::Status broken_;
};

absl::Status CheckTimeout(const CommunicatorOptions& options) {
  if (options.timeout <= absl::ZeroDuration())
    return absl::InvalidArgumentError(
        absl::StrCat("an nccl communicator's timeout must be positive, got ",
                     absl::FormatDuration(options.timeout)));
  return absl::OkStatus();
}

absl::Status CheckGpu(const Device& device, absl::string_view what) {
  if (!device.is_cuda())
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", device.ToString(), " is not a GPU (an nccl group runs on GPUs)"));
  return CheckDevice(device);
}

}  // namespace

bool NcclBuiltIn() { return true; }

absl::StatusOr<std::string> NcclVersion() {
  int code = 0;
  NCCL_RETURN_IF_ERROR(ncclGetVersion(&code));
  // Since 2.9: major * 10000 + minor * 100 + patch; before: major * 1000 + minor * 100 + patch.
  if (code >= 10000) return absl::StrCat(code / 10000, ".", code / 100 % 100, ".", code % 100);
  return absl::StrCat(code / 1000, ".", code / 100 % 10, ".", code % 100);
}

absl::StatusOr<NcclUniqueId> NewNcclUniqueId() {
  ncclUniqueId native;
  NCCL_RETURN_IF_ERROR(ncclGetUniqueId(&native));
  NcclUniqueId id;
  std::memcpy(id.bytes.data(), &native, sizeof(native));
  return id;
}

absl::StatusOr<std::vector<std::unique_ptr<Communicator>>> CreateNcclGroup(
    const std::vector<Device>& devices, const CommunicatorOptions& options) {
  RETURN_IF_ERROR(CheckTimeout(options));
  if (devices.empty())
    return absl::InvalidArgumentError("an nccl group needs at least 1 GPU, got none");
  std::vector<int> ordinals;
  for (const Device& device : devices) {
    RETURN_IF_ERROR(CheckGpu(device, "an nccl group"));
    if (std::find(ordinals.begin(), ordinals.end(), device.ordinal) != ordinals.end())
      return absl::InvalidArgumentError(
          absl::StrCat("an nccl group has ", device.ToString(), " twice (one rank per GPU)"));
    ordinals.push_back(device.ordinal);
  }
  std::vector<ncclComm_t> comms(devices.size(), nullptr);
  NCCL_RETURN_IF_ERROR(
      ncclCommInitAll(comms.data(), static_cast<int>(comms.size()), ordinals.data()));
  std::vector<std::unique_ptr<Communicator>> group;
  for (size_t r = 0; r < comms.size(); ++r)
    group.push_back(std::make_unique<NcclCommunicator>(comms[r], static_cast<int>(r),
                                                       static_cast<int>(comms.size()), devices[r],
                                                       options.timeout, /*blocking=*/true));
  return group;
}

absl::StatusOr<std::unique_ptr<Communicator>> CreateNcclCommunicator(
    const NcclUniqueId& id, int rank, int size, const Device& device,
    const CommunicatorOptions& options) {
  RETURN_IF_ERROR(CheckTimeout(options));
  if (size < 1 || rank < 0 || rank >= size)
    return absl::InvalidArgumentError(
        absl::StrCat("an nccl communicator needs 0 <= rank < size, got rank ", rank, " of ", size));
  RETURN_IF_ERROR(CheckGpu(device, absl::StrCat("nccl rank ", rank, " of ", size)));
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device.ordinal));
  ncclUniqueId native;
  std::memcpy(&native, id.bytes.data(), sizeof(native));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  const ncclResult_t result = ncclCommInitRankConfig(&comm, size, native, rank, &config);
  if (result != ncclSuccess && result != ncclInProgress) {
    if (comm != nullptr) ncclCommAbort(comm);
    return NcclError(result, "ncclCommInitRankConfig", __FILE__, __LINE__);
  }
  auto ready = WaitReady(comm, DeadlineAfter(options.timeout));
  if (!ready.ok() || !*ready) {
    ncclCommAbort(comm);
    if (!ready.ok()) return ready.status();
    return absl::DeadlineExceededError(absl::StrCat(
        "creating nccl rank ", rank, " of ", size, " on ", device.ToString(), " timed out after ",
        absl::FormatDuration(options.timeout),
        ": not every rank joined (NCCL cannot tell which); the communicator is aborted"));
  }
  return std::unique_ptr<Communicator>(std::make_unique<NcclCommunicator>(comm, rank, size, device,
                                                                          options.timeout,
                                                                          /*blocking=*/false));
}

absl::Status NcclSynchronize(Communicator& comm, const Stream& stream) {
  auto* nccl = dynamic_cast<NcclCommunicator*>(&comm);
  if (nccl == nullptr)
    return absl::InvalidArgumentError(
        absl::StrCat("NcclSynchronize: the communicator is a ", comm.name(), " one, not nccl"));
  return nccl->Synchronize(stream);
}

}  // namespace cnnbench
