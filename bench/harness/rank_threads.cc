#include "bench/harness/rank_threads.h"

#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status.h"

namespace cnnbench::bench {
namespace {

absl::Status OnRank(int rank, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("rank ", rank, ": ", status.message()));
}

}  // namespace

absl::Status ThreadStartError(int rank, int ranks, const std::system_error& error) {
  return absl::UnimplementedError(absl::StrCat(
      "unsupported: ", ranks, " ranks as threads of one process: the thread of rank ", rank,
      " could not start (", error.what(), "; the system's thread or address-space limit)"));
}

RankThreads::RankThreads(int ranks) : ranks_(ranks < 1 ? 1 : ranks), errors_(ranks_) {
  for (int r = 1; r < ranks_; ++r) {
    try {
      threads_.emplace_back([this, r] { Serve(r); });
    } catch (const std::system_error& e) {
      start_error_ = ThreadStartError(r, ranks_, e);
      return;
    }
  }
}

RankThreads::~RankThreads() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return busy_ == 0; });
    quit_ = true;
    ++generation_;
  }
  posted_.notify_all();
  for (std::thread& t : threads_) t.join();
}

absl::Status RankThreads::Start(const Task& task) {
  RETURN_IF_ERROR(start_error_);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return busy_ == 0; });
    task_ = task;
    ++generation_;
    busy_ = ranks_ - 1;
  }
  posted_.notify_all();
  return OnRank(0, task(0));
}

absl::Status RankThreads::Finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [&] { return busy_ == 0; });
  absl::Status first;
  for (int r = 0; r < ranks_; ++r) {
    if (first.ok()) first = OnRank(r, errors_[r]);
    errors_[r] = absl::OkStatus();
  }
  return first;
}

absl::Status RankThreads::RunEverywhere(const Task& task) {
  const absl::Status mine = Start(task);
  const absl::Status theirs = Finish();  // always: the next task needs them idle
  return mine.ok() ? theirs : mine;
}

void RankThreads::Serve(int rank) {
  uint64_t seen = 0;
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      posted_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (quit_) return;
      task = task_;
    }
    absl::Status status = task(rank);
    std::lock_guard<std::mutex> lock(mutex_);
    if (errors_[rank].ok()) errors_[rank] = std::move(status);
    if (--busy_ == 0) finished_.notify_all();
  }
}

}  // namespace cnnbench::bench
