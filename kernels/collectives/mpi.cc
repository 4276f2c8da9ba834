// The mpi group. Every collective is two steps on the communicator's own
// duplicate of MPI_COMM_WORLD, each non-blocking and polled with MPI_Testall
// until it completes or the call's deadline (start + timeout) passes:
//  1. Arrival and agreement. Every rank posts an MPI_Iallreduce(MAX) of its
//     call's signature and of its negation (kind, count, dtype, op, root,
//     and whether it refuses the call itself), so every rank learns the
//     range of each field: max == min means the ranks agree. Beside it, one
//     int per pair with rank 0: every rank r > 0 Isends to rank 0 and rank 0
//     Isends to every rank. When the deadline passes, rank 0 names the ranks
//     whose message has not come; another rank names rank 0 when rank 0's
//     has not come, and otherwise points to rank 0's error.
//  2. The transfer: MPI_Iallreduce, MPI_Ibcast, MPI_Iallgather,
//     MPI_Ireduce_scatter_block, MPI_Ireduce, MPI_Ialltoall, MPI_Igather
//     or MPI_Iscatter.
// MPI cannot cancel a started collective, so a timeout leaves requests
// pending for good: the communicator is broken, fails every later call at
// once, keeps its internal buffers alive until the process ends and never
// frees its MPI communicator.
#include "kernels/collectives/mpi.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/status.h"
#include "kernels/collectives/call.h"
#include "kernels/collectives/mpi_process.h"

namespace cnnbench {
namespace {

using mpi_internal::KeepUntilExit;
using mpi_internal::MpiError;
using mpi_internal::MpiFinalized;

using Clock = std::chrono::steady_clock;

Clock::time_point DeadlineAfter(absl::Duration timeout) {
  // Beyond a year counts as none (and keeps the clock arithmetic finite).
  timeout = std::min(timeout, absl::Hours(24 * 365));
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(absl::ToChronoNanoseconds(timeout));
}

// Polls `requests` until all complete (true) or `deadline` passes (false).
// A non-blocking collective advances only inside MPI calls (each round of a
// large all-reduce waits for the next MPI_Testall), so the thread spins as a
// blocking MPI call would; only a call still waiting after a quarter second
// (a peer late, not a transfer under way) naps, at most 50 us at a time.
absl::StatusOr<bool> PollUntil(std::vector<MPI_Request>& requests, Clock::time_point deadline) {
  const Clock::time_point nap_after = Clock::now() + std::chrono::milliseconds(250);
  std::chrono::microseconds nap(1);
  for (;;) {
    int done = 0;
    MPI_RETURN_IF_ERROR(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                                    MPI_STATUSES_IGNORE));
    if (done) return true;
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return false;
    if (now < nap_after) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::microseconds(50));
    }
  }
}

using collectives::Call;
using collectives::CheckOwnCall;
using collectives::Describe;
using collectives::DTypeText;
using collectives::KindName;
using collectives::OpText;

// The MPI type an all-reduce runs in; fp16 and bf16 run widened to fp32.
MPI_Datatype ReduceType(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
      return MPI_FLOAT;
    case DType::kF64:
      return MPI_DOUBLE;
    case DType::kI32:
      return MPI_INT32_T;
    case DType::kI64:
      return MPI_INT64_T;
    default:
      return MPI_DATATYPE_NULL;
  }
}

MPI_Op ReduceMpiOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg:
      return MPI_SUM;
    case ReduceOp::kMax:
      return MPI_MAX;
    case ReduceOp::kMin:
      return MPI_MIN;
    case ReduceOp::kProd:
      return MPI_PROD;
  }
  return MPI_OP_NULL;
}

bool MpiReduces(DType dtype, ReduceOp) { return ReduceType(dtype) != MPI_DATATYPE_NULL; }

// MPI counts are ints: elements for the reductions, bytes for the others.
absl::Status MpiCountFits(const Call& c) {
  const size_t mpi_count = Reduces(c.kind) ? c.count : c.count * SizeOf(c.dtype);
  if (mpi_count > static_cast<size_t>(INT_MAX))
    return absl::InvalidArgumentError(absl::StrCat(
        "count ", c.count, " of ", DTypeName(c.dtype), " is beyond what one MPI call takes (",
        INT_MAX, Reduces(c.kind) ? " elements" : " bytes", ")"));
  return absl::OkStatus();
}

constexpr collectives::GroupRules kMpiRules = {
    .group = "mpi",
    .memory = "an mpi group works on host memory",
    .reduces = MpiReduces,
    .check_count = MpiCountFits,
};

// The signature's fields. kRefusedRank: this rank's number when it refuses
// the call, else size (the minimum names the lowest refusing rank);
// kRefusedCode: its absl code, else 0.
enum Field { kKind, kCount, kDType, kOp, kRoot, kRefusedRank, kRefusedCode, kFields };
constexpr const char* kFieldNames[] = {"collective", "count", "dtype", "op", "root"};

// Buffers MPI reads or writes while a call is under way. Shared so that a
// broken communicator can hand them to KeepUntilExit.
struct Buffers {
  int64_t signature[2 * kFields] = {};  // the fields, then their negations
  int arrival_out = 1;
  std::vector<int> arrival_in;  // rank 0: one per rank; others: [0] from rank 0
  std::vector<MPI_Request> requests;
  std::vector<float> widened;  // fp16/bf16 all-reduce in fp32
  // A large in-place all-reduce reduces out of place from a copy kept here:
  // OpenMPI's non-blocking in-place all-reduce allocates a temporary as big
  // as the data per call, and pays its page faults every time (measured: 64
  // MiB in place at 0.4x the out-of-place rate, docs/results/).
  std::vector<char> staging;
};

// In-place all-reduces at least this big go through Buffers::staging.
constexpr size_t kStagedInPlaceBytes = size_t{1} << 20;

template <typename T>
void DivideInPlace(void* data, size_t count, int size) {
  T* values = static_cast<T*>(data);
  for (size_t i = 0; i < count; ++i) values[i] = static_cast<T>(values[i] / static_cast<T>(size));
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MPI_Comm comm, int rank, int size, absl::Duration timeout)
      : comm_(comm), rank_(rank), size_(size), timeout_(timeout), buffers_(new Buffers) {
    buffers_->arrival_in.assign(rank_ == 0 ? size_ : 1, 0);
  }

  ~MpiCommunicator() override {
    if (!broken_.ok()) {
      KeepUntilExit(std::move(buffers_));  // requests may still be pending on them
      return;
    }
    if (!MpiFinalized()) MPI_Comm_free(&comm_);
  }

  absl::string_view name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  absl::Status AllReduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                         const Stream& stream) override {
    return Run(Call{Collective::kAllReduce, send, recv, count, dtype, op, 0}, stream);
  }

  absl::Status Broadcast(const void* send, void* recv, size_t count, DType dtype, int root,
                         const Stream& stream) override {
    return Run(Call{Collective::kBroadcast, send, recv, count, dtype, ReduceOp::kSum, root}, stream);
  }

  absl::Status AllGather(const void* send, void* recv, size_t count, DType dtype,
                         const Stream& stream) override {
    return Run(Call{Collective::kAllGather, send, recv, count, dtype, ReduceOp::kSum, 0}, stream);
  }

  absl::Status ReduceScatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                             const Stream& stream) override {
    return Run(Call{Collective::kReduceScatter, send, recv, count, dtype, op, 0}, stream);
  }

  absl::Status Reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                      int root, const Stream& stream) override {
    return Run(Call{Collective::kReduce, send, recv, count, dtype, op, root}, stream);
  }

  absl::Status AllToAll(const void* send, void* recv, size_t count, DType dtype,
                        const Stream& stream) override {
    return Run(Call{Collective::kAllToAll, send, recv, count, dtype, ReduceOp::kSum, 0}, stream);
  }

  absl::Status Gather(const void* send, void* recv, size_t count, DType dtype, int root,
                      const Stream& stream) override {
    return Run(Call{Collective::kGather, send, recv, count, dtype, ReduceOp::kSum, root}, stream);
  }

  absl::Status Scatter(const void* send, void* recv, size_t count, DType dtype, int root,
                       const Stream& stream) override {
    return Run(Call{Collective::kScatter, send, recv, count, dtype, ReduceOp::kSum, root}, stream);
  }

 private:
  absl::Status Run(const Call& call, const Stream& stream) {
    const std::string what = absl::StrCat("mpi ", KindName(static_cast<int64_t>(call.kind)),
                                          ", rank ", rank_, " of ", size_);
    if (in_call_.exchange(true, std::memory_order_acquire))
      return absl::FailedPreconditionError(
          absl::StrCat(what,
                       ": called while another call on this communicator is running (each "
                       "communicator belongs to one thread)"));
    absl::Status status;
    if (!broken_.ok()) {
      status = absl::FailedPreconditionError(
          absl::StrCat(what, ": the communicator is broken since an earlier call failed (",
                       broken_.message(), "); end the job (AbortMpiJob)"));
    } else if (MpiFinalized()) {
      status = absl::FailedPreconditionError(absl::StrCat(what, ": MPI is finalized"));
    } else {
      status = Steps(call, stream, what);
      // A timeout or an MPI failure leaves the ranks at different points.
      if (status.code() == absl::StatusCode::kDeadlineExceeded ||
          status.code() == absl::StatusCode::kInternal)
        broken_ = status;
    }
    in_call_.store(false, std::memory_order_release);
    return status;
  }

  absl::Status Steps(const Call& call, const Stream& stream, const std::string& what) {
    const Clock::time_point deadline = DeadlineAfter(timeout_);
    const absl::Status own = CheckOwnCall(call, stream, rank_, size_, kMpiRules);
    // Returned as they are: "unsupported: ..." must stay at the start.
    absl::Status agreed = Agree(call, own, deadline, what);
    if (!agreed.ok() || call.count == 0) return agreed;
    return Transfer(call, deadline, what);
  }

  // Step 1: every rank arrives and the calls agree.
  absl::Status Agree(const Call& call, const absl::Status& own, Clock::time_point deadline,
                     const std::string& what) {
    Buffers& b = *buffers_;
    const int64_t fields[kFields] = {static_cast<int64_t>(call.kind),
                                     static_cast<int64_t>(call.count),
                                     static_cast<int64_t>(call.dtype),
                                     static_cast<int64_t>(call.op),
                                     call.root,
                                     own.ok() ? size_ : rank_,
                                     own.ok() ? 0 : static_cast<int64_t>(own.code())};
    for (int f = 0; f < kFields; ++f) {
      b.signature[f] = fields[f];
      b.signature[kFields + f] = -fields[f];
    }
    b.requests.assign(1, MPI_REQUEST_NULL);
    MPI_RETURN_IF_ERROR(MPI_Iallreduce(MPI_IN_PLACE, b.signature, 2 * kFields, MPI_INT64_T, MPI_MAX,
                                       comm_, &b.requests[0]));
    constexpr int kArrivalTag = 1;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_ || (rank_ != 0 && r != 0)) continue;
      b.requests.push_back(MPI_REQUEST_NULL);
      MPI_RETURN_IF_ERROR(
          MPI_Isend(&b.arrival_out, 1, MPI_INT, r, kArrivalTag, comm_, &b.requests.back()));
      b.requests.push_back(MPI_REQUEST_NULL);
      MPI_RETURN_IF_ERROR(MPI_Irecv(&b.arrival_in[rank_ == 0 ? r : 0], 1, MPI_INT, r, kArrivalTag,
                                    comm_, &b.requests.back()));
    }
    ASSIGN_OR_RETURN(const bool done, PollUntil(b.requests, deadline));
    if (!done) return TimedOut(call, what);

    int64_t max[kFields], min[kFields];
    for (int f = 0; f < kFields; ++f) {
      max[f] = b.signature[f];
      min[f] = -b.signature[kFields + f];
    }
    std::vector<std::string> disagreements;
    for (int f = 0; f < kRefusedRank; ++f) {
      if (max[f] == min[f]) continue;
      auto text = [&](int64_t v) -> std::string {
        if (f == kKind) return std::string(KindName(v));
        if (f == kDType) return DTypeText(v);
        if (f == kOp) return OpText(v);
        return absl::StrCat(v);
      };
      disagreements.push_back(
          absl::StrCat(kFieldNames[f], " from ", text(min[f]), " to ", text(max[f])));
    }
    if (!disagreements.empty())
      return absl::InvalidArgumentError(absl::StrCat(
          "mpi group: ranks disagree on the collective: rank ", rank_, " of ", size_, " called ",
          Describe(call), "; across the ranks ", absl::StrJoin(disagreements, ", "),
          " (every rank must make the same call)"));
    if (!own.ok()) return own;
    if (min[kRefusedRank] < size_)
      return absl::Status(static_cast<absl::StatusCode>(max[kRefusedCode]),
                          absl::StrCat(what, ": rank ", min[kRefusedRank],
                                       " refused the call (its own error says why)"));
    return absl::OkStatus();
  }

  // Step 1 ran out of time: name who did not arrive, as far as this rank knows.
  absl::Status TimedOut(const Call& call, const std::string& what) {
    Buffers& b = *buffers_;
    // b.requests: [0] the signature, then (send, receive) per peer, in rank order.
    std::vector<int> missing;
    bool rank0_arrived = true;
    size_t index = 1;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_ || (rank_ != 0 && r != 0)) continue;
      int arrived = 0;
      MPI_RETURN_IF_ERROR(
          MPI_Request_get_status(b.requests[index + 1], &arrived, MPI_STATUS_IGNORE));
      index += 2;
      if (!arrived) {
        missing.push_back(r);
        if (r == 0) rank0_arrived = false;
      }
    }
    // Each rank with its host: across hosts, where to look.
    absl::StatusOr<MpiEnvironment*> env = MpiEnvironment::Get();
    auto on_host = [&env](std::string* out, int r) {
      absl::StrAppend(out, r);
      if (env.ok() && r < static_cast<int>((*env)->host_names().size()))
        absl::StrAppend(out, " (on ", (*env)->host_names()[r], ")");
    };
    std::string who;
    if (rank_ == 0 && !missing.empty()) {
      who = absl::StrCat(missing.size() == 1 ? "rank " : "ranks ",
                         absl::StrJoin(missing, ", ", on_host), " did not arrive");
    } else if (rank_ != 0 && !rank0_arrived) {
      who = "rank ";
      on_host(&who, 0);
      absl::StrAppend(&who, " did not arrive");
    } else if (rank_ == 0) {
      who = "every rank arrived but the agreement step did not complete";
    } else {
      who = "rank 0 arrived; its error names the ranks that did not";
    }
    return absl::DeadlineExceededError(
        absl::StrCat("mpi ", KindName(static_cast<int64_t>(call.kind)), " timed out after ",
                     absl::FormatDuration(timeout_), ": ", who, " (", what,
                     "; the communicator is broken: end the job with AbortMpiJob)"));
  }

  // Step 2: the data, once every rank has agreed to the call.
  absl::Status Transfer(const Call& call, Clock::time_point deadline, const std::string& what) {
    Buffers& b = *buffers_;
    b.requests.assign(1, MPI_REQUEST_NULL);
    const int bytes = static_cast<int>(call.count * SizeOf(call.dtype));
    const bool reduces = Reduces(call.kind);
    const bool widened = reduces && (call.dtype == DType::kF16 || call.dtype == DType::kBF16);
    // What this rank's reduction reads (a reduce-scatter's whole send
    // buffer) and writes (nothing on a reduce's other ranks).
    const size_t in_count =
        call.kind == Collective::kReduceScatter ? call.count * static_cast<size_t>(size_) : call.count;
    const bool writes = call.kind != Collective::kReduce || rank_ == call.root;
    const int count = static_cast<int>(call.count);
    if (widened) {
      // fp16/bf16 reduce in fp32: the input widened into the first
      // `in_count` floats, the result into the `count` after them.
      b.widened.resize(in_count + call.count);
      for (size_t i = 0; i < in_count; ++i)
        b.widened[i] = call.dtype == DType::kF16
                           ? HalfToFloat(static_cast<const Half*>(call.send)[i])
                           : BFloat16ToFloat(static_cast<const BFloat16*>(call.send)[i]);
    }
    const MPI_Op op = ReduceMpiOp(call.op);
    switch (call.kind) {
      case Collective::kAllReduce: {
        if (widened) {
          MPI_RETURN_IF_ERROR(MPI_Iallreduce(MPI_IN_PLACE, b.widened.data(), count, MPI_FLOAT, op,
                                             comm_, &b.requests[0]));
        } else {
          const void* send = call.send == call.recv ? MPI_IN_PLACE : call.send;
          const size_t data_bytes = call.count * SizeOf(call.dtype);
          if (send == MPI_IN_PLACE && data_bytes >= kStagedInPlaceBytes) {
            if (b.staging.size() < data_bytes) b.staging.resize(data_bytes);  // touched once
            std::memcpy(b.staging.data(), call.recv, data_bytes);
            send = b.staging.data();
          }
          MPI_RETURN_IF_ERROR(MPI_Iallreduce(send, call.recv, count, ReduceType(call.dtype), op,
                                             comm_, &b.requests[0]));
        }
        break;
      }
      case Collective::kReduceScatter: {
        if (widened) {
          MPI_RETURN_IF_ERROR(MPI_Ireduce_scatter_block(b.widened.data(),
                                                        b.widened.data() + in_count, count,
                                                        MPI_FLOAT, op, comm_, &b.requests[0]));
        } else {
          // In place (recv is this rank's slice of send): MPI's in-place form
          // takes the whole buffer and leaves the result at its start, so the
          // result goes through staging instead.
          const size_t data_bytes = call.count * SizeOf(call.dtype);
          const bool in_place = call.recv == static_cast<const char*>(call.send) +
                                                 static_cast<size_t>(rank_) * data_bytes;
          void* out = call.recv;
          if (in_place) {
            if (b.staging.size() < data_bytes) b.staging.resize(data_bytes);
            out = b.staging.data();
          }
          MPI_RETURN_IF_ERROR(MPI_Ireduce_scatter_block(
              call.send, out, count, ReduceType(call.dtype), op, comm_, &b.requests[0]));
        }
        break;
      }
      case Collective::kReduce: {
        if (widened) {
          MPI_RETURN_IF_ERROR(MPI_Ireduce(b.widened.data(), b.widened.data() + in_count, count,
                                          MPI_FLOAT, op, call.root, comm_, &b.requests[0]));
        } else {
          const bool in_place = rank_ == call.root && call.send == call.recv;
          MPI_RETURN_IF_ERROR(MPI_Ireduce(in_place ? MPI_IN_PLACE : call.send, call.recv, count,
                                          ReduceType(call.dtype), op, call.root, comm_,
                                          &b.requests[0]));
        }
        break;
      }
      case Collective::kBroadcast:
        // MPI broadcasts in place: out of place, the root's data first
        // moves into its receive buffer.
        if (rank_ == call.root && call.send != call.recv) std::memcpy(call.recv, call.send, bytes);
        MPI_RETURN_IF_ERROR(
            MPI_Ibcast(call.recv, bytes, MPI_BYTE, call.root, comm_, &b.requests[0]));
        break;
      case Collective::kAllGather: {
        const bool in_place =
            call.send == static_cast<const char*>(call.recv) + static_cast<size_t>(rank_) * bytes;
        MPI_RETURN_IF_ERROR(MPI_Iallgather(in_place ? MPI_IN_PLACE : call.send, bytes, MPI_BYTE,
                                           call.recv, bytes, MPI_BYTE, comm_, &b.requests[0]));
        break;
      }
      case Collective::kAllToAll:
        MPI_RETURN_IF_ERROR(MPI_Ialltoall(call.send, bytes, MPI_BYTE, call.recv, bytes, MPI_BYTE,
                                          comm_, &b.requests[0]));
        break;
      case Collective::kGather: {
        // In place, the root's part already sits in its slice of recv.
        const bool in_place =
            rank_ == call.root &&
            call.send == static_cast<const char*>(call.recv) + static_cast<size_t>(rank_) * bytes;
        MPI_RETURN_IF_ERROR(MPI_Igather(in_place ? MPI_IN_PLACE : call.send, bytes, MPI_BYTE,
                                        call.recv, bytes, MPI_BYTE, call.root, comm_,
                                        &b.requests[0]));
        break;
      }
      case Collective::kScatter: {
        // In place, the root's part stays in its slice of send.
        const bool in_place =
            rank_ == call.root &&
            call.recv == static_cast<const char*>(call.send) + static_cast<size_t>(rank_) * bytes;
        MPI_RETURN_IF_ERROR(MPI_Iscatter(call.send, bytes, MPI_BYTE,
                                         in_place ? MPI_IN_PLACE : call.recv, bytes, MPI_BYTE,
                                         call.root, comm_, &b.requests[0]));
        break;
      }
    }
    ASSIGN_OR_RETURN(const bool done, PollUntil(b.requests, deadline));
    if (!done)
      return absl::DeadlineExceededError(absl::StrCat(
          "mpi ", KindName(static_cast<int64_t>(call.kind)), " timed out after ",
          absl::FormatDuration(timeout_),
          ": every rank arrived and agreed, but the transfer did not complete (", what,
          "; the communicator is broken: end the job with AbortMpiJob, and keep the call's "
          "buffers until then)"));
    if (!reduces || !writes) return absl::OkStatus();
    const bool average = call.op == ReduceOp::kAvg;
    if (widened) {
      // All-reduce reduced in place in the first floats; the others wrote
      // after the input.
      const float* result = b.widened.data() + (call.kind == Collective::kAllReduce ? 0 : in_count);
      const float divisor = average ? static_cast<float>(size_) : 1.0f;
      for (size_t i = 0; i < call.count; ++i) {
        const float value = average ? result[i] / divisor : result[i];
        if (call.dtype == DType::kF16)
          static_cast<Half*>(call.recv)[i] = FloatToHalf(value);
        else
          static_cast<BFloat16*>(call.recv)[i] = FloatToBFloat16(value);
      }
      return absl::OkStatus();
    }
    if (call.kind == Collective::kReduceScatter) {
      const size_t data_bytes = call.count * SizeOf(call.dtype);
      const bool in_place = call.recv == static_cast<const char*>(call.send) +
                                             static_cast<size_t>(rank_) * data_bytes;
      if (in_place) std::memcpy(call.recv, b.staging.data(), data_bytes);
    }
    if (!average) return absl::OkStatus();
    switch (call.dtype) {
      case DType::kF32:
        DivideInPlace<float>(call.recv, call.count, size_);
        break;
      case DType::kF64:
        DivideInPlace<double>(call.recv, call.count, size_);
        break;
      case DType::kI32:
        DivideInPlace<int32_t>(call.recv, call.count, size_);
        break;
      case DType::kI64:
        DivideInPlace<int64_t>(call.recv, call.count, size_);
        break;
      default:
        break;
    }
    return absl::OkStatus();
  }

  MPI_Comm comm_;
  const int rank_;
  const int size_;
  const absl::Duration timeout_;
  std::shared_ptr<Buffers> buffers_;
  absl::Status broken_;
  std::atomic<bool> in_call_{false};
};

}  // namespace

absl::StatusOr<std::unique_ptr<Communicator>> CreateMpiCommunicator(
    const CommunicatorOptions& options) {
  if (options.timeout <= absl::ZeroDuration())
    return absl::InvalidArgumentError(
        absl::StrCat("an mpi communicator's timeout must be positive, got ",
                     absl::FormatDuration(options.timeout)));
  ASSIGN_OR_RETURN(MpiEnvironment * env, MpiEnvironment::Get());
  // MPI writes the new handle when the duplication completes, which after
  // a timeout may be later: the handle lives on the heap, kept then.
  auto comm = std::make_shared<MPI_Comm>(MPI_COMM_NULL);
  std::vector<MPI_Request> request(1, MPI_REQUEST_NULL);
  MPI_RETURN_IF_ERROR(MPI_Comm_idup(MPI_COMM_WORLD, comm.get(), &request[0]));
  ASSIGN_OR_RETURN(const bool done, PollUntil(request, DeadlineAfter(options.timeout)));
  if (!done) {
    KeepUntilExit(comm);
    return absl::DeadlineExceededError(absl::StrCat(
        "creating an mpi communicator timed out after ", absl::FormatDuration(options.timeout),
        ": not every one of the ", env->size(), " ranks called CreateMpiCommunicator (rank ",
        env->rank(), " did); end the job with AbortMpiJob"));
  }
  MPI_RETURN_IF_ERROR(MPI_Comm_set_errhandler(*comm, MPI_ERRORS_RETURN));
  return std::unique_ptr<Communicator>(
      std::make_unique<MpiCommunicator>(*comm, env->rank(), env->size(), options.timeout));
}

}  // namespace cnnbench
