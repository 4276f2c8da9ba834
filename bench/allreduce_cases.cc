// allreduce/local/<dtype>/bytes:<S>/ranks:<N>: the all-reduce harness (sizes
// by factors of 2, result checked in the same run, algbw/busbw as nccl-tests
// defines them), with the in-process `local` implementation.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/names.h"
#include "bench/suite.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "kernels/collectives/all_reduce.h"

namespace cnnbench::bench {
namespace {

struct AllReduceCase {
  std::string name;
  int64_t bytes;
  int ranks;
  int threads;
  int progress_index = 0;
};

// Rank r's element i is (r + 1) * (i % 7): sums are small exact integers.
float Expected(int ranks, size_t i) { return static_cast<float>(ranks * (ranks + 1) / 2 * (i % 7)); }

void RunAllReduceCase(benchmark::State& state, AllReduceCase* c, Progress* progress) {
  progress->Announce(c->progress_index);
  const size_t count = c->bytes / sizeof(float);
  auto impl = CreateLocalAllReduce(c->ranks, c->threads);
  if (!impl.ok()) {
    state.SkipWithError(SkipMessage(impl.status()).c_str());
    return;
  }
  std::vector<Buffer> send, recv;
  std::vector<const void*> send_ptrs;
  std::vector<void*> recv_ptrs, inplace_ptrs;
  for (int r = 0; r < c->ranks; ++r) {
    auto s = Buffer::Allocate(Device::Cpu(), c->bytes);
    auto d = Buffer::Allocate(Device::Cpu(), c->bytes);
    if (!s.ok() || !d.ok()) {
      state.SkipWithError(SkipMessage(s.ok() ? d.status() : s.status()).c_str());
      return;
    }
    send.push_back(*std::move(s));
    recv.push_back(*std::move(d));
    send_ptrs.push_back(send.back().data());
    recv_ptrs.push_back(recv.back().data());
    inplace_ptrs.push_back(recv.back().data());
  }
  auto fill = [&](std::vector<Buffer>& buffers) {
    for (int r = 0; r < c->ranks; ++r) {
      float* f = static_cast<float*>(buffers[r].data());
      for (size_t i = 0; i < count; ++i) f[i] = static_cast<float>((r + 1) * (i % 7));
    }
  };
  auto check = [&](const char* variant) -> bool {
    for (int r = 0; r < c->ranks; ++r) {
      const float* f = static_cast<const float*>(recv[r].data());
      for (size_t i = 0; i < count; ++i)
        if (f[i] != Expected(c->ranks, i)) {
          state.SkipWithError(absl::StrCat(variant, " result wrong at rank ", r, " element ", i,
                                           ": ", f[i], " vs ", Expected(c->ranks, i))
                                  .c_str());
          return false;
        }
    }
    return true;
  };
  fill(send);
  double out_of_place = 0, in_place = 0;
  int64_t iterations = 0;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    absl::Status s = (*impl)->Run(send_ptrs, recv_ptrs, count, DType::kF32);
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!s.ok()) {
      state.SkipWithError(SkipMessage(s).c_str());
      return;
    }
    out_of_place += t;
    ++iterations;
    state.SetIterationTime(t);
  }
  if (!check("out-of-place")) return;
  // In place, over the same number of iterations (the input is refilled each
  // time outside the timed region).
  for (int64_t i = 0; i < iterations; ++i) {
    fill(recv);
    std::vector<const void*> in(inplace_ptrs.begin(), inplace_ptrs.end());
    auto start = std::chrono::steady_clock::now();
    absl::Status s = (*impl)->Run(in, inplace_ptrs, count, DType::kF32);
    in_place += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!s.ok()) {
      state.SkipWithError(SkipMessage(s).c_str());
      return;
    }
  }
  if (!check("in-place")) return;
  const double factor = AllReduceBusFactor(c->ranks);
  const double algbw = c->bytes * iterations / out_of_place;
  const double algbw_in = c->bytes * iterations / in_place;
  state.counters["algbw"] = benchmark::Counter(algbw);
  state.counters["busbw"] = benchmark::Counter(algbw * factor);
  state.counters["algbw_inplace"] = benchmark::Counter(algbw_in);
  state.counters["busbw_inplace"] = benchmark::Counter(algbw_in * factor);
  state.SetBytesProcessed(static_cast<int64_t>(c->bytes) * iterations);
  state.SetLabel(absl::StrCat("local, ", c->threads, " thread(s), result checked"));
}

}  // namespace

absl::Status RegisterAllReduceCases(const SuiteOptions& options, Progress& progress) {
  const int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  // Sizes are capped by memory: send and receive buffers for every rank must
  // fit in half of this machine's memory.
  const double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  for (int ranks : options.allreduce_ranks) {
    for (int64_t bytes = std::max<int64_t>(options.allreduce_min_bytes, 8);
         bytes <= options.allreduce_max_bytes && 2.0 * ranks * bytes <= memory / 2; bytes *= 2) {
      auto* c = new AllReduceCase{AllReduceCaseName("local", "fp32", bytes, ranks), bytes, ranks,
                                  threads};
      c->progress_index = progress.Add(c->name);
      benchmark::RegisterBenchmark(c->name.c_str(), RunAllReduceCase, c, &progress)
          ->MinTime(options.kernel_min_time)
          ->Repetitions(options.repetitions)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
