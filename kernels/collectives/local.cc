// The local group: ranks are threads of one process. A collective is a
// rendezvous: every rank posts its call and waits for the others (barrier 1);
// each checks that the calls agree, then moves data: an all-reduce reduces
// its own chunk of the vector across all ranks' send buffers and writes it to
// every rank's receive buffer (a reduce: to the root's only); a
// reduce-scatter reduces every rank's slice r into rank r's receive buffer;
// a broadcast copies the root's buffer into its own; an all-gather copies
// every rank's send buffer into its own receive buffer. A second barrier holds everyone until all
// ranks are done, so no buffer changes while another rank still reads it.
//
// Timeout: a rank waits at barrier 1 at most options.timeout. The first rank
// to give up breaks the group with DeadlineExceeded naming the ranks that
// never arrived, and wakes the other waiting ranks with that same error;
// every later call on any rank then fails at once with FailedPrecondition.
// Barrier 2 needs no deadline: every rank that reaches it has passed barrier
// 1, and the work between the two is plain memory traffic that always ends.
#include "kernels/collectives/local.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status.h"
#include "kernels/collectives/call.h"

namespace cnnbench {
namespace {

using collectives::Describe;
using collectives::KindName;

// What one rank asked for in the collective under way (collectives::Call),
// and what only this rank can see is wrong (a null buffer, a GPU stream, an
// unsupported type): shared so that every rank returns an error, not just
// this one while the others wait for it.
struct Call : collectives::Call {
  absl::Status local;
};

// Longer than this counts as no deadline (and keeps clock arithmetic finite).
constexpr absl::Duration kNoDeadline = absl::Hours(24 * 365);

// A reusable barrier with a deadline that breaks it for good. The generation
// count lets a fast thread enter the next Wait while slow ones are still
// leaving this one.
class Barrier {
 public:
  Barrier(int size, absl::Duration timeout)
      : size_(size), timeout_(timeout), arrived_(static_cast<size_t>(size), false) {}

  // Returns OK once all `size` ranks have called it. With `timed`, a rank that
  // waits longer than the timeout breaks the barrier: it and every rank still
  // waiting get DeadlineExceeded naming the ranks that did not arrive. Once
  // broken, every Wait fails at once with FailedPrecondition.
  absl::Status Wait(int rank, Collective kind, bool timed) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!broken_.ok()) return BrokenError(rank);
    const uint64_t generation = generation_;
    arrived_[rank] = true;
    if (++arrived_count_ == size_) {
      std::fill(arrived_.begin(), arrived_.end(), false);
      arrived_count_ = 0;
      ++generation_;
      lock.unlock();
      released_.notify_all();
      return absl::OkStatus();
    }
    auto done = [&] { return generation_ != generation || !broken_.ok(); };
    if (timed && timeout_ < kNoDeadline) {
      const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout_);
      if (!released_.wait_until(lock, deadline, done)) {
        std::vector<int> missing;
        for (int r = 0; r < size_; ++r)
          if (!arrived_[r]) missing.push_back(r);
        broken_ = absl::DeadlineExceededError(absl::StrCat(
            "local ", KindName(kind), " timed out after ", absl::FormatDuration(timeout_), ": ",
            missing.size() == 1 ? "rank " : "ranks ", absl::StrJoin(missing, ", "),
            " did not arrive (", size_ - missing.size(), " of ", size_,
            " ranks waited; the group is broken and fails every later call)"));
        lock.unlock();
        released_.notify_all();
        return broken_;
      }
    } else {
      released_.wait(lock, done);
    }
    if (generation_ != generation) return absl::OkStatus();
    return broken_;  // another waiting rank's deadline passed first
  }

  // OK, or FailedPrecondition when an earlier collective timed out.
  absl::Status CheckUsable(int rank) {
    std::lock_guard<std::mutex> lock(mutex_);
    return broken_.ok() ? absl::OkStatus() : BrokenError(rank);
  }

 private:
  absl::Status BrokenError(int rank) const {
    return absl::FailedPreconditionError(absl::StrCat(
        "local group, rank ", rank, " of ", size_, ": the group is broken since an earlier ",
        "collective timed out (", broken_.message(), "); create a new group"));
  }

  const int size_;
  const absl::Duration timeout_;
  std::mutex mutex_;
  std::condition_variable released_;
  std::vector<bool> arrived_;  // ranks in the current generation
  int arrived_count_ = 0;
  uint64_t generation_ = 0;
  absl::Status broken_;  // set once, by the first rank whose deadline passed
};

struct LocalGroup {
  LocalGroup(int size, absl::Duration timeout) : barrier(size, timeout), calls(size) {}
  Barrier barrier;
  // calls[r] is written by rank r before barrier 1 and read by every rank
  // between barriers 1 and 2; rank r cannot post its next call before all
  // ranks reach barrier 2, so no read sees a half-written call.
  std::vector<Call> calls;
};

// How an element type is loaded into the accumulator and stored back: fp16
// and bf16 in fp32 (rounded once, on the way out), the rest in their own type.
template <typename T>
struct Accumulator {
  using Type = T;
  static T Load(T value) { return value; }
  static T Store(T value) { return value; }
};
template <>
struct Accumulator<Half> {
  using Type = float;
  static float Load(Half value) { return HalfToFloat(value); }
  static Half Store(float value) { return FloatToHalf(value); }
};
template <>
struct Accumulator<BFloat16> {
  using Type = float;
  static float Load(BFloat16 value) { return BFloat16ToFloat(value); }
  static BFloat16 Store(float value) { return FloatToBFloat16(value); }
};

struct SumOp {
  template <typename V>
  static V Apply(V a, V b) {
    if constexpr (std::is_integral_v<V>) {
      // Two's-complement wrap-around, as NCCL; signed overflow is undefined in C++.
      using U = std::make_unsigned_t<V>;
      return static_cast<V>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  }
};
struct ProdOp {
  template <typename V>
  static V Apply(V a, V b) {
    if constexpr (std::is_integral_v<V>) {
      using U = std::make_unsigned_t<V>;  // wraps around, as SumOp
      return static_cast<V>(static_cast<U>(a) * static_cast<U>(b));
    } else {
      return a * b;
    }
  }
};
struct MaxOp {
  template <typename V>
  static V Apply(V a, V b) {
    return b > a ? b : a;
  }
};
struct MinOp {
  template <typename V>
  static V Apply(V a, V b) {
    return b < a ? b : a;
  }
};

// Reduces elements [offset + begin, offset + end) of every rank's send
// buffer into elements [begin, end) of the receive buffer of rank `only`,
// or of every rank when `only` is negative, in rank order (the same result
// on every run). Each block is read from all ranks before it is written to
// any, so in place is correct.
template <typename T, typename Op, bool kAverage>
void ReduceRange(const std::vector<Call>& calls, size_t offset, size_t begin, size_t end,
                 int only) {
  using A = Accumulator<T>;
  using V = typename A::Type;
  constexpr size_t kBlock = 2048;  // elements: the partial results stay in L1
  V acc[kBlock];
  const size_t ranks = calls.size();
  for (size_t b = begin; b < end; b += kBlock) {
    const size_t n = std::min(kBlock, end - b);
    const T* first = static_cast<const T*>(calls[0].send) + offset + b;
    for (size_t i = 0; i < n; ++i) acc[i] = A::Load(first[i]);
    for (size_t r = 1; r < ranks; ++r) {
      const T* s = static_cast<const T*>(calls[r].send) + offset + b;
      for (size_t i = 0; i < n; ++i) acc[i] = Op::Apply(acc[i], A::Load(s[i]));
    }
    if constexpr (kAverage) {
      const V divisor = static_cast<V>(ranks);
      for (size_t i = 0; i < n; ++i) acc[i] = static_cast<V>(acc[i] / divisor);
    }
    for (size_t r = 0; r < ranks; ++r) {
      if (only >= 0 && r != static_cast<size_t>(only)) continue;
      T* d = static_cast<T*>(calls[r].recv) + b;
      for (size_t i = 0; i < n; ++i) d[i] = A::Store(acc[i]);
    }
  }
}

using ReduceFn = void (*)(const std::vector<Call>&, size_t, size_t, size_t, int);

template <typename T>
ReduceFn ForOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ReduceRange<T, SumOp, false>;
    case ReduceOp::kAvg:
      return ReduceRange<T, SumOp, true>;
    case ReduceOp::kMax:
      return ReduceRange<T, MaxOp, false>;
    case ReduceOp::kMin:
      return ReduceRange<T, MinOp, false>;
    case ReduceOp::kProd:
      return ReduceRange<T, ProdOp, false>;
  }
  return nullptr;
}

// nullptr where the pair is not supported.
ReduceFn FindReduce(DType dtype, ReduceOp op) {
  switch (dtype) {
    case DType::kF32:
      return ForOp<float>(op);
    case DType::kF64:
      return ForOp<double>(op);
    case DType::kF16:
      return ForOp<Half>(op);
    case DType::kBF16:
      return ForOp<BFloat16>(op);
    case DType::kI32:
      return ForOp<int32_t>(op);
    case DType::kI64:
      return ForOp<int64_t>(op);
    default:
      return nullptr;
  }
}

bool LocalReduces(DType dtype, ReduceOp op) { return FindReduce(dtype, op) != nullptr; }

constexpr collectives::GroupRules kLocalRules = {
    .group = "local",
    .memory = "a local group works on host memory on the CPU",
    .reduces = LocalReduces,
};

// The verdict on the collective from every rank's posted call, the same on
// every rank: ranks that disagree, else this rank's own problem, else the
// first other rank's (whose message names it).
absl::Status CheckGroupCall(const std::vector<Call>& calls, int rank) {
  const Call& first = calls[0];
  for (size_t r = 1; r < calls.size(); ++r) {
    const Call& c = calls[r];
    if (c.kind != first.kind || c.count != first.count || c.dtype != first.dtype ||
        c.op != first.op || c.root != first.root)
      return absl::InvalidArgumentError(
          absl::StrCat("local group: ranks disagree on the collective: rank 0 called ",
                       Describe(first), ", rank ", r, " ", Describe(c),
                       " (every rank must make the same call; seen by rank ", rank, ")"));
  }
  if (!calls[rank].local.ok()) return calls[rank].local;
  for (const Call& c : calls)
    if (!c.local.ok()) return c.local;
  return absl::OkStatus();
}

// Rank `rank` owns elements [rank * chunk, (rank + 1) * chunk) of the vector.
// Chunks are whole 64-byte lines, so two ranks never write one cache line of
// a 64-byte aligned buffer.
std::pair<size_t, size_t> OwnChunk(size_t count, DType dtype, int rank, int size) {
  const size_t line = std::max<size_t>(1, 64 / SizeOf(dtype));
  size_t chunk = (count + size - 1) / size;
  chunk = (chunk + line - 1) / line * line;
  const size_t begin = std::min(count, static_cast<size_t>(rank) * chunk);
  return {begin, std::min(count, begin + chunk)};
}

// This rank's share of an agreed, checked collective.
void MoveData(const std::vector<Call>& calls, int rank) {
  const Call& mine = calls[rank];
  const int size = static_cast<int>(calls.size());
  const size_t bytes = mine.count * SizeOf(mine.dtype);
  if (bytes == 0) return;
  switch (mine.kind) {
    case Collective::kAllReduce: {
      const auto [begin, end] = OwnChunk(mine.count, mine.dtype, rank, size);
      if (begin < end) FindReduce(mine.dtype, mine.op)(calls, 0, begin, end, -1);
      break;
    }
    case Collective::kReduce: {
      // Every rank reduces its own chunk into the root's receive buffer.
      const auto [begin, end] = OwnChunk(mine.count, mine.dtype, rank, size);
      if (begin < end) FindReduce(mine.dtype, mine.op)(calls, 0, begin, end, mine.root);
      break;
    }
    case Collective::kReduceScatter:
      // Rank r reduces every rank's slice r into its own receive buffer.
      FindReduce(mine.dtype, mine.op)(calls, static_cast<size_t>(rank) * mine.count, 0, mine.count,
                                      rank);
      break;
    case Collective::kBroadcast:
      if (mine.recv != calls[mine.root].send) std::memcpy(mine.recv, calls[mine.root].send, bytes);
      break;
    case Collective::kAllGather:
      for (int r = 0; r < size; ++r) {
        char* slice = static_cast<char*>(mine.recv) + static_cast<size_t>(r) * bytes;
        if (slice != calls[r].send) std::memcpy(slice, calls[r].send, bytes);
      }
      break;
    case Collective::kGather: {
      // Each rank copies its own send into its slice of the root's receive buffer.
      char* slice = static_cast<char*>(calls[mine.root].recv) + static_cast<size_t>(rank) * bytes;
      if (slice != mine.send) std::memcpy(slice, mine.send, bytes);
      break;
    }
    case Collective::kScatter: {
      // Each rank copies its slice of the root's send buffer.
      const char* slice =
          static_cast<const char*>(calls[mine.root].send) + static_cast<size_t>(rank) * bytes;
      if (mine.recv != slice) std::memcpy(mine.recv, slice, bytes);
      break;
    }
    case Collective::kAllToAll:
      // Slice q of this rank's receive buffer: rank q's slice for this rank.
      for (int q = 0; q < size; ++q)
        std::memcpy(static_cast<char*>(mine.recv) + static_cast<size_t>(q) * bytes,
                    static_cast<const char*>(calls[q].send) + static_cast<size_t>(rank) * bytes,
                    bytes);
      break;
  }
}

class LocalCommunicator final : public Communicator {
 public:
  LocalCommunicator(std::shared_ptr<LocalGroup> group, int rank)
      : group_(std::move(group)), rank_(rank) {}

  absl::string_view name() const override { return "local"; }
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(group_->calls.size()); }

  absl::Status AllReduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                         const Stream& stream) override {
    return Run(Call{Collective::kAllReduce, send, recv, count, dtype, op, 0, absl::OkStatus()}, stream);
  }

  absl::Status Broadcast(const void* send, void* recv, size_t count, DType dtype, int root,
                         const Stream& stream) override {
    return Run(
        Call{Collective::kBroadcast, send, recv, count, dtype, ReduceOp::kSum, root, absl::OkStatus()},
        stream);
  }

  absl::Status AllGather(const void* send, void* recv, size_t count, DType dtype,
                         const Stream& stream) override {
    return Run(
        Call{Collective::kAllGather, send, recv, count, dtype, ReduceOp::kSum, 0, absl::OkStatus()},
        stream);
  }

  absl::Status ReduceScatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                             const Stream& stream) override {
    return Run(Call{Collective::kReduceScatter, send, recv, count, dtype, op, 0, absl::OkStatus()},
               stream);
  }

  absl::Status Reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                      int root, const Stream& stream) override {
    return Run(Call{Collective::kReduce, send, recv, count, dtype, op, root, absl::OkStatus()}, stream);
  }

  absl::Status AllToAll(const void* send, void* recv, size_t count, DType dtype,
                        const Stream& stream) override {
    return Run(Call{Collective::kAllToAll, send, recv, count, dtype, ReduceOp::kSum, 0, absl::OkStatus()},
               stream);
  }

  absl::Status Gather(const void* send, void* recv, size_t count, DType dtype, int root,
                      const Stream& stream) override {
    return Run(
        Call{Collective::kGather, send, recv, count, dtype, ReduceOp::kSum, root, absl::OkStatus()},
        stream);
  }

  absl::Status Scatter(const void* send, void* recv, size_t count, DType dtype, int root,
                       const Stream& stream) override {
    return Run(
        Call{Collective::kScatter, send, recv, count, dtype, ReduceOp::kSum, root, absl::OkStatus()},
        stream);
  }

 private:
  absl::Status Run(Call call, const Stream& stream) {
    // A second caller would overwrite this rank's posted call and count as
    // another rank at the barrier: refuse it instead of corrupting the group.
    if (in_call_.exchange(true, std::memory_order_acquire))
      return absl::FailedPreconditionError(
          absl::StrCat("local ", KindName(call.kind), ", rank ", rank_, " of ", size(),
                       ": called while another call on this communicator is running (each "
                       "communicator belongs to one thread)"));
    call.local = collectives::CheckOwnCall(call, stream, rank_, size(), kLocalRules);
    absl::Status status = Rendezvous(std::move(call));
    in_call_.store(false, std::memory_order_release);
    return status;
  }

  absl::Status Rendezvous(Call call) {
    Barrier& barrier = group_->barrier;
    const Collective kind = call.kind;
    // A broken group is refused before this rank's call is posted.
    RETURN_IF_ERROR(barrier.CheckUsable(rank_));
    std::vector<Call>& calls = group_->calls;
    calls[rank_] = std::move(call);
    // Every rank's call is posted (or the deadline passed: return untouched).
    absl::Status arrived = barrier.Wait(rank_, kind, /*timed=*/true);
    if (!arrived.ok()) return arrived;
    absl::Status status = CheckGroupCall(calls, rank_);
    if (status.ok()) MoveData(calls, rank_);
    // Every rank is done and nobody reads another rank's buffers any more.
    RETURN_IF_ERROR(barrier.Wait(rank_, kind, /*timed=*/false));
    return status;
  }

  std::shared_ptr<LocalGroup> group_;
  const int rank_;
  std::atomic<bool> in_call_{false};
};

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<Communicator>>> CreateLocalGroup(
    int ranks, const CommunicatorOptions& options) {
  if (ranks < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("a local group needs at least 1 rank, got ", ranks));
  if (options.timeout <= absl::ZeroDuration())
    return absl::InvalidArgumentError(absl::StrCat("a local group's timeout must be positive, got ",
                                                   absl::FormatDuration(options.timeout)));
  auto group = std::make_shared<LocalGroup>(ranks, options.timeout);
  std::vector<std::unique_ptr<Communicator>> communicators;
  for (int r = 0; r < ranks; ++r)
    communicators.push_back(std::make_unique<LocalCommunicator>(group, r));
  return communicators;
}

absl::StatusOr<std::vector<std::unique_ptr<Communicator>>> CreateLocalGroup(int ranks) {
  return CreateLocalGroup(ranks, CommunicatorOptions());
}

}  // namespace cnnbench
