// The local group: ranks are threads of one process. An all-reduce is a
// rendezvous: every rank posts its call and waits for the others (barrier 1);
// each checks that the calls agree, then reduces its own chunk of the vector
// across all ranks' send buffers and writes it to every rank's receive
// buffer; a second barrier holds everyone until all chunks are written, so no
// buffer changes while another rank still reads it.
#include "kernels/collectives/local.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status.h"

namespace cnnbench {
namespace {

// What one rank asked for in the collective under way.
struct Call {
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;
  DType dtype = DType::kF32;
  ReduceOp op = ReduceOp::kSum;
  // What only this rank can see is wrong (a null buffer, a GPU stream, an
  // unsupported type): shared so that every rank returns an error, not just
  // this one while the others wait for it.
  absl::Status local;
};

// A reusable barrier. The generation count lets a fast thread enter the next
// Wait while slow ones are still leaving this one.
class Barrier {
 public:
  explicit Barrier(int size) : size_(size) {}

  // Returns once all `size` threads have called it. Always OK today. The
  // collective timeout (still to come) returns DeadlineExceeded here; a rank that gave up
  // leaves the count off by one, so the group must then be marked broken and
  // fail every later call.
  absl::Status Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t generation = generation_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++generation_;
      lock.unlock();
      released_.notify_all();
      return absl::OkStatus();
    }
    released_.wait(lock, [&] { return generation_ != generation; });
    return absl::OkStatus();
  }

 private:
  const int size_;
  std::mutex mutex_;
  std::condition_variable released_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
};

struct LocalGroup {
  explicit LocalGroup(int size) : barrier(size), calls(size) {}
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

// Reduces elements [begin, end) of every rank's send buffer into every rank's
// receive buffer, in rank order (the same result on every run). Each block is
// read from all ranks before it is written to any, so in place is correct.
template <typename T, typename Op, bool kAverage>
void ReduceRange(const std::vector<Call>& calls, size_t begin, size_t end) {
  using A = Accumulator<T>;
  using V = typename A::Type;
  constexpr size_t kBlock = 2048;  // elements: the partial results stay in L1
  V acc[kBlock];
  const size_t ranks = calls.size();
  for (size_t b = begin; b < end; b += kBlock) {
    const size_t n = std::min(kBlock, end - b);
    const T* first = static_cast<const T*>(calls[0].send) + b;
    for (size_t i = 0; i < n; ++i) acc[i] = A::Load(first[i]);
    for (size_t r = 1; r < ranks; ++r) {
      const T* s = static_cast<const T*>(calls[r].send) + b;
      for (size_t i = 0; i < n; ++i) acc[i] = Op::Apply(acc[i], A::Load(s[i]));
    }
    if constexpr (kAverage) {
      const V divisor = static_cast<V>(ranks);
      for (size_t i = 0; i < n; ++i) acc[i] = static_cast<V>(acc[i] / divisor);
    }
    for (size_t r = 0; r < ranks; ++r) {
      T* d = static_cast<T*>(calls[r].recv) + b;
      for (size_t i = 0; i < n; ++i) d[i] = A::Store(acc[i]);
    }
  }
}

using ReduceFn = void (*)(const std::vector<Call>&, size_t, size_t);

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

bool KnownOp(ReduceOp op) {
  return op == ReduceOp::kSum || op == ReduceOp::kAvg || op == ReduceOp::kMax ||
         op == ReduceOp::kMin;
}

std::string Describe(const Call& c) {
  return absl::StrCat("count ", c.count, ", ", DTypeName(c.dtype), ", ",
                      KnownOp(c.op) ? std::string(ReduceOpName(c.op))
                                    : absl::StrCat("op ", static_cast<int>(c.op)));
}

// What this rank can check alone, before meeting the others.
absl::Status CheckOwnCall(const Call& c, const Stream& stream, int rank, int size) {
  const std::string where = absl::StrCat("rank ", rank, " of ", size);
  if (!KnownOp(c.op))
    return absl::UnimplementedError(absl::StrCat("unsupported: reduce op ", static_cast<int>(c.op),
                                                 " in local all-reduce (known: sum, avg, max, "
                                                 "min; ",
                                                 where, ")"));
  if (FindReduce(c.dtype, c.op) == nullptr)
    return absl::UnimplementedError(
        absl::StrCat("unsupported: local all-reduce of ", DTypeName(c.dtype),
                     " (fp32, fp64, fp16, bf16, int32, int64; ", where, ")"));
  if (!stream.device().is_cpu())
    return absl::InvalidArgumentError(
        absl::StrCat("local all-reduce, ", where, ": the stream is on ", stream.device().ToString(),
                     " but a local group works on host memory on the CPU"));
  if (c.count == 0) return absl::OkStatus();
  if (c.send == nullptr || c.recv == nullptr)
    return absl::InvalidArgumentError(absl::StrCat("local all-reduce, ", where, ": the ",
                                                   c.send == nullptr ? "send" : "receive",
                                                   " buffer is null for ", c.count, " elements"));
  const auto* send = static_cast<const char*>(c.send);
  const auto* recv = static_cast<const char*>(c.recv);
  const size_t bytes = c.count * SizeOf(c.dtype);
  if (send != recv && send < recv + bytes && recv < send + bytes)
    return absl::InvalidArgumentError(absl::StrCat("local all-reduce, ", where,
                                                   ": the send and receive buffers overlap without "
                                                   "being the same (in place is send == recv)"));
  return absl::OkStatus();
}

// The verdict on the collective from every rank's posted call, the same on
// every rank: ranks that disagree, else this rank's own problem, else the
// first other rank's (whose message names it).
absl::Status CheckGroupCall(const std::vector<Call>& calls, int rank) {
  const Call& first = calls[0];
  for (size_t r = 1; r < calls.size(); ++r) {
    const Call& c = calls[r];
    if (c.count != first.count || c.dtype != first.dtype || c.op != first.op)
      return absl::InvalidArgumentError(
          absl::StrCat("local all-reduce: ranks disagree on the collective: rank 0 called it with ",
                       Describe(first), ", rank ", r, " with ", Describe(c),
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

class LocalCommunicator final : public Communicator {
 public:
  LocalCommunicator(std::shared_ptr<LocalGroup> group, int rank)
      : group_(std::move(group)), rank_(rank) {}

  absl::string_view name() const override { return "local"; }
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(group_->calls.size()); }

  absl::Status AllReduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                         const Stream& stream) override {
    // A second caller would overwrite this rank's posted call and count as
    // another rank at the barrier: refuse it instead of corrupting the group.
    if (in_call_.exchange(true, std::memory_order_acquire))
      return absl::FailedPreconditionError(
          absl::StrCat("local all-reduce, rank ", rank_, " of ", size(),
                       ": called while another call on this communicator is running (each "
                       "communicator belongs to one thread)"));
    Call call{send, recv, count, dtype, op, absl::OkStatus()};
    call.local = CheckOwnCall(call, stream, rank_, size());
    absl::Status status = Rendezvous(std::move(call));
    in_call_.store(false, std::memory_order_release);
    return status;
  }

 private:
  absl::Status Rendezvous(Call call) {
    std::vector<Call>& calls = group_->calls;
    calls[rank_] = std::move(call);
    RETURN_IF_ERROR(group_->barrier.Wait());  // every rank's call is posted
    absl::Status status = CheckGroupCall(calls, rank_);
    if (status.ok()) {
      const Call& mine = calls[rank_];
      const auto [begin, end] = OwnChunk(mine.count, mine.dtype, rank_, size());
      if (begin < end) FindReduce(mine.dtype, mine.op)(calls, begin, end);
    }
    // Every chunk is written and nobody reads another rank's buffers any more.
    RETURN_IF_ERROR(group_->barrier.Wait());
    return status;
  }

  std::shared_ptr<LocalGroup> group_;
  const int rank_;
  std::atomic<bool> in_call_{false};
};

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<Communicator>>> CreateLocalGroup(int ranks) {
  if (ranks < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("a local group needs at least 1 rank, got ", ranks));
  auto group = std::make_shared<LocalGroup>(ranks);
  std::vector<std::unique_ptr<Communicator>> communicators;
  for (int r = 0; r < ranks; ++r)
    communicators.push_back(std::make_unique<LocalCommunicator>(group, r));
  return communicators;
}

}  // namespace cnnbench
