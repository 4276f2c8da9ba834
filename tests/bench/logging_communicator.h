// A communicator that passes every collective on to another, counting the
// calls and the threads they come from, and, when asked, spoiling one
// rank's result (element 3 of an fp32 result, out of place or in place):
// what the collective cases' tests inject faults with, on any transport
// whose results are in host memory.
#ifndef CNNBENCH_TESTS_BENCH_LOGGING_COMMUNICATOR_H_
#define CNNBENCH_TESTS_BENCH_LOGGING_COMMUNICATOR_H_

#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "kernels/collectives/communicator.h"

namespace cnnbench::bench::testing_comm {

// Which calls a spoiling communicator corrupts (element 3 of its result).
enum class Spoil { kNone, kOutOfPlace, kInPlace };

// What every rank's communicator saw, shared by the group.
struct Log {
  std::mutex mutex;
  std::vector<int64_t> calls;                      // per rank
  std::vector<std::set<std::thread::id>> threads;  // per rank: who called
  int64_t calls_at_first_span = -1;                // rank 0's, when the first timed span began
};

class LoggingCommunicator : public Communicator {
 public:
  LoggingCommunicator(std::unique_ptr<Communicator> inner, Log& log, int spoiled_rank, Spoil spoil,
                      float delta)
      : inner_(std::move(inner)),
        log_(log),
        spoiled_rank_(spoiled_rank),
        spoil_(spoil),
        delta_(delta) {}
  absl::string_view name() const override { return inner_->name(); }
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  absl::Status AllReduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                         const Stream& stream) override {
    Note();
    return Spoiled(inner_->AllReduce(send, recv, count, dtype, op, stream), recv, count,
                   send == recv);
  }
  absl::Status Broadcast(const void* send, void* recv, size_t count, DType dtype, int root,
                         const Stream& stream) override {
    Note();
    return Spoiled(inner_->Broadcast(send, recv, count, dtype, root, stream), recv, count,
                   send == recv);
  }
  absl::Status AllGather(const void* send, void* recv, size_t count, DType dtype,
                         const Stream& stream) override {
    Note();
    return Spoiled(inner_->AllGather(send, recv, count, dtype, stream), recv, count * size(),
                   send == static_cast<char*>(recv) + rank() * count * SizeOf(dtype));
  }
  absl::Status ReduceScatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                             const Stream& stream) override {
    Note();
    return Spoiled(inner_->ReduceScatter(send, recv, count, dtype, op, stream), recv, count,
                   recv == static_cast<const char*>(send) + rank() * count * SizeOf(dtype));
  }
  absl::Status AllToAll(const void* send, void* recv, size_t count, DType dtype,
                        const Stream& stream) override {
    Note();
    return Spoiled(inner_->AllToAll(send, recv, count, dtype, stream), recv, count * size(), false);
  }
  absl::Status Reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                      int root, const Stream& stream) override {
    Note();
    return Spoiled(inner_->Reduce(send, recv, count, dtype, op, root, stream), recv, count,
                   send == recv);
  }
  absl::Status Gather(const void* send, void* recv, size_t count, DType dtype, int root,
                      const Stream& stream) override {
    Note();
    // Written on the root only.
    return Spoiled(inner_->Gather(send, recv, count, dtype, root, stream), recv,
                   rank() == root ? count * size() : 0,
                   send == static_cast<char*>(recv) + root * count * SizeOf(dtype));
  }
  absl::Status Scatter(const void* send, void* recv, size_t count, DType dtype, int root,
                       const Stream& stream) override {
    Note();
    return Spoiled(inner_->Scatter(send, recv, count, dtype, root, stream), recv, count,
                   recv == static_cast<const char*>(send) + root * count * SizeOf(dtype));
  }

 private:
  void Note() {
    std::lock_guard<std::mutex> lock(log_.mutex);
    ++log_.calls[rank()];
    log_.threads[rank()].insert(std::this_thread::get_id());
  }
  // Adds delta_ to element 3 of the (fp32) result of the spoiled calls.
  absl::Status Spoiled(absl::Status status, void* result, size_t elements, bool in_place) {
    if (rank() == spoiled_rank_ && elements > 3 &&
        ((spoil_ == Spoil::kOutOfPlace && !in_place) || (spoil_ == Spoil::kInPlace && in_place)))
      static_cast<float*>(result)[3] += delta_;
    return status;
  }

  std::unique_ptr<Communicator> inner_;
  Log& log_;
  int spoiled_rank_;
  Spoil spoil_;
  float delta_;
};

}  // namespace cnnbench::bench::testing_comm

#endif  // CNNBENCH_TESTS_BENCH_LOGGING_COMMUNICATOR_H_
