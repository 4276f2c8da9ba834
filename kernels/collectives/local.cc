// The local all-reduce: every rank's buffer lives in this process; chunks of
// the vector are reduced and broadcast back by a few threads.
#include <algorithm>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "kernels/collectives/all_reduce.h"

namespace cnnbench {
namespace {

template <typename T>
void ReduceChunk(const std::vector<const void*>& send, const std::vector<void*>& recv,
                 size_t begin, size_t end) {
  const size_t ranks = send.size();
  constexpr size_t kBlock = 4096;  // elements: keeps the partial sum in L1
  T acc[kBlock];
  for (size_t b = begin; b < end; b += kBlock) {
    const size_t n = std::min(kBlock, end - b);
    std::memcpy(acc, static_cast<const T*>(send[0]) + b, n * sizeof(T));
    for (size_t r = 1; r < ranks; ++r) {
      const T* s = static_cast<const T*>(send[r]) + b;
      for (size_t i = 0; i < n; ++i) acc[i] += s[i];
    }
    for (size_t r = 0; r < ranks; ++r) std::memcpy(static_cast<T*>(recv[r]) + b, acc, n * sizeof(T));
  }
}

class LocalAllReduce : public AllReduce {
 public:
  LocalAllReduce(int ranks, int threads) : ranks_(ranks), threads_(threads) {}
  absl::string_view name() const override { return "local"; }
  int ranks() const override { return ranks_; }

  absl::Status Run(const std::vector<const void*>& send, const std::vector<void*>& recv,
                   size_t count, DType dtype) override {
    if (static_cast<int>(send.size()) != ranks_ || static_cast<int>(recv.size()) != ranks_)
      return absl::InvalidArgumentError(absl::StrCat("local all-reduce over ", ranks_,
                                                     " ranks given ", send.size(), " send and ",
                                                     recv.size(), " receive buffers"));
    void (*reduce)(const std::vector<const void*>&, const std::vector<void*>&, size_t, size_t);
    switch (dtype) {
      case DType::kF32: reduce = ReduceChunk<float>; break;
      case DType::kF64: reduce = ReduceChunk<double>; break;
      case DType::kI32: reduce = ReduceChunk<int32_t>; break;
      default:
        return absl::UnimplementedError(
            absl::StrCat("unsupported: local all-reduce of ", DTypeName(dtype)));
    }
    // Small vectors are not worth a thread.
    const int threads = count * SizeOf(dtype) < (1 << 20) ? 1 : threads_;
    if (threads == 1) {
      reduce(send, recv, 0, count);
      return absl::OkStatus();
    }
    std::vector<std::thread> workers;
    const size_t per = (count + threads - 1) / threads;
    for (int t = 0; t < threads; ++t) {
      const size_t begin = t * per, end = std::min(count, begin + per);
      if (begin >= end) break;
      workers.emplace_back([&, begin, end] { reduce(send, recv, begin, end); });
    }
    for (auto& w : workers) w.join();
    return absl::OkStatus();
  }

 private:
  int ranks_, threads_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<AllReduce>> CreateLocalAllReduce(int ranks, int threads) {
  if (ranks < 1 || threads < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("local all-reduce needs ranks >= 1 and threads >= 1, got ", ranks, " and ",
                     threads));
  return std::unique_ptr<AllReduce>(new LocalAllReduce(ranks, threads));
}

}  // namespace cnnbench
