// Ranks of one process as threads: rank 0 is the caller's thread (the
// harness's, so its timer brackets rank 0's work) and ranks 1..N-1 are
// threads started once and parked between tasks. Used by cases whose ranks
// share a process (data-parallel training over the local or NCCL group).
#ifndef CNNBENCH_BENCH_RANK_THREADS_H_
#define CNNBENCH_BENCH_RANK_THREADS_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace cnnbench::bench {

// The "unsupported: ..." error of a rank's thread the system refused.
absl::Status ThreadStartError(int rank, int ranks, const std::system_error& error);

class RankThreads {
 public:
  using Task = std::function<absl::Status(int rank)>;

  // Starts ranks 1..N-1's threads. One the system refuses (a thread limit,
  // the address space) leaves status() an "unsupported: ..." error naming
  // the rank, which Start returns; the threads started are joined as usual.
  explicit RankThreads(int ranks);
  ~RankThreads();  // waits for the running task, then joins every thread
  RankThreads(const RankThreads&) = delete;
  RankThreads& operator=(const RankThreads&) = delete;

  int size() const { return ranks_; }
  // OK, or why not every rank's thread started.
  const absl::Status& status() const { return start_error_; }

  // Hands `task` to ranks 1..N-1 (after they finish the last one), runs
  // rank 0's share on this thread and returns its status, without waiting
  // for the others: Finish() does.
  absl::Status Start(const Task& task);
  // Waits for ranks 1..N-1; the first error since the last Finish, prefixed
  // with "rank r: ".
  absl::Status Finish();
  // Start, then Finish; rank 0's error first.
  absl::Status RunEverywhere(const Task& task);

 private:
  void Serve(int rank);

  const int ranks_;
  std::mutex mutex_;
  std::condition_variable posted_, finished_;
  Task task_;
  uint64_t generation_ = 0;
  int busy_ = 0;
  bool quit_ = false;
  std::vector<absl::Status> errors_;
  absl::Status start_error_;
  std::vector<std::thread> threads_;
};

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_RANK_THREADS_H_
