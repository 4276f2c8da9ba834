// allreduce/local/<dtype>/bytes:<S>/ranks:<N>: the all-reduce harness in the
// manner of nccl-tests. Each rank is a thread holding its own communicator,
// and every rank makes the same fixed number of collectives (warm-up, timed,
// one checked; out of place, then in place), so none waits for a call another
// never makes. Rank 0 times its collectives after a barrier; algbw and busbw
// as nccl-tests defines them.
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "bench/names.h"
#include "bench/suite.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/status.h"
#include "kernels/collectives/communicator.h"
#include "kernels/collectives/local.h"

// Defined beside the only code that reads them; -1 keeps the preset's value.
ABSL_FLAG(int, allreduce_warmup, -1,
          "untimed all-reduces before each timed loop of an allreduce case (default: the "
          "preset's, 5 as nccl-tests' -w)");
ABSL_FLAG(int, allreduce_iters, -1,
          "timed all-reduces per variant and repetition of an allreduce case, the same on every "
          "rank (default: the preset's, 20 as nccl-tests' -n)");

namespace cnnbench::bench {
namespace {

struct AllReduceCase {
  std::string name;
  int64_t bytes;
  int ranks;
  int warmup;  // untimed all-reduces before each timed loop
  int progress_index = 0;
};

// Rank r's element i is (r + 1) * (i % 7): sums are small exact integers.
float Pattern(int rank, size_t i) { return static_cast<float>((rank + 1) * (i % 7)); }
float Expected(int ranks, size_t i) {
  return static_cast<float>(ranks * (ranks + 1) / 2 * (i % 7));
}
constexpr float kPoison = -1;  // never an expected value

// What one rank holds, and what it saw.
struct Rank {
  Communicator* comm = nullptr;
  const Stream* stream = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
  float* token = nullptr;           // one element: an all-reduce of it is the barrier
  std::string wrong;                // the first wrong result, if any
  double out_of_place_seconds = 0;  // rank 0: its timed loops
  double in_place_seconds = 0;
};

// Rank 0's clock: core::Timer around each collective on its stream. A timer
// error is kept for the end rather than returned at once, which would leave
// the other ranks waiting for collectives rank 0 never makes.
class Clock {
 public:
  explicit Clock(Timer* timer) : timer_(timer) {}

  // Runs `collective`; `seconds` is its time (0 on ranks that do not time).
  template <typename F>
  absl::Status Time(F&& collective, double* seconds) {
    *seconds = 0;
    if (timer_ == nullptr) return collective();
    if (error_.ok()) error_ = timer_->Start();
    absl::Status status = collective();
    if (error_.ok()) error_ = timer_->Stop();
    if (error_.ok()) {
      absl::StatusOr<double> elapsed = timer_->ElapsedSeconds();
      if (elapsed.ok())
        *seconds = *elapsed;
      else
        error_ = elapsed.status();
    }
    return status;
  }
  const absl::Status& error() const { return error_; }

 private:
  Timer* timer_;
  absl::Status error_;
};

// `iterations` collectives; their time on rank 0 in `total`. With `state`
// (rank 0, the out-of-place loop) they are the benchmark's iterations, each
// reported as its manual time.
template <typename F>
absl::Status TimedLoop(int64_t iterations, F&& collective, Clock& clock, benchmark::State* state,
                       double* total) {
  *total = 0;
  double seconds = 0;
  if (state != nullptr) {
    for (auto _ : *state) {
      absl::Status s = clock.Time(collective, &seconds);
      if (!s.ok()) {
        // Leaving the loop early needs an error on the state; every rank
        // failed this collective alike, so all of them stop here.
        state->SkipWithError(SkipMessage(s).c_str());
        return s;
      }
      state->SetIterationTime(seconds);
      *total += seconds;
    }
    return absl::OkStatus();
  }
  for (int64_t i = 0; i < iterations; ++i) {
    RETURN_IF_ERROR(clock.Time(collective, &seconds));
    *total += seconds;
  }
  return absl::OkStatus();
}

// The collectives every rank makes, in the same order. Rank 0 passes its
// `state` and `timer`. Returns the first failed collective: a local group
// fails a collective on every rank alike, so all ranks stop at the same call.
absl::Status RunRank(const AllReduceCase& c, int64_t iterations, Rank& rank,
                     benchmark::State* state, Timer* timer) {
  const size_t count = c.bytes / sizeof(float);
  const int r = rank.comm->rank();
  Clock clock(timer);
  auto all_reduce = [&](const float* send, float* recv, size_t n) {
    return rank.comm->AllReduce(send, recv, n, DType::kF32, ReduceOp::kSum, *rank.stream);
  };
  auto check = [&](const char* variant) {
    for (size_t i = 0; i < count && rank.wrong.empty(); ++i)
      if (rank.recv[i] != Expected(c.ranks, i))
        rank.wrong = absl::StrCat(variant, " result wrong at rank ", r, " element ", i, ": ",
                                  rank.recv[i], " vs ", Expected(c.ranks, i));
  };
  // Every buffer is written by the thread that uses it before anything is
  // timed: its pages are faulted in (and placed near that thread) here.
  for (size_t i = 0; i < count; ++i) rank.send[i] = Pattern(r, i);
  *rank.token = 0;
  for (bool in_place : {false, true}) {
    const float* send = in_place ? rank.recv : rank.send;
    auto fresh_recv = [&] {
      if (in_place) {
        for (size_t i = 0; i < count; ++i) rank.recv[i] = Pattern(r, i);
      } else {
        std::fill(rank.recv, rank.recv + count, kPoison);  // a result nobody wrote shows
      }
    };
    fresh_recv();
    for (int w = 0; w < c.warmup; ++w) RETURN_IF_ERROR(all_reduce(send, rank.recv, count));
    // Every rank has arrived before rank 0's clock starts.
    RETURN_IF_ERROR(all_reduce(rank.token, rank.token, 1));
    // In place, each call sums the data into itself (it grows by a factor of
    // ranks per call, perhaps to inf: adds take the same time on it), so the
    // checked call below starts again from the pattern.
    RETURN_IF_ERROR(TimedLoop(
        iterations, [&] { return all_reduce(send, rank.recv, count); }, clock,
        in_place ? nullptr : state,
        in_place ? &rank.in_place_seconds : &rank.out_of_place_seconds));
    fresh_recv();
    RETURN_IF_ERROR(all_reduce(send, rank.recv, count));
    check(in_place ? "in-place" : "out-of-place");
  }
  return clock.error();
}

void RunAllReduceCase(benchmark::State& state, const AllReduceCase* c, Progress* progress) {
  progress->Announce(c->progress_index);
  auto skip = [&](const absl::Status& s) { state.SkipWithError(SkipMessage(s).c_str()); };
  // Everything that can fail on one rank alone is done before the rank
  // threads start, so no rank waits for one that already gave up.
  auto group = CreateLocalGroup(c->ranks);
  if (!group.ok()) return skip(group.status());
  std::vector<Buffer> buffers;
  std::vector<Stream> streams;
  streams.reserve(c->ranks);  // Rank keeps pointers to them
  std::vector<Rank> ranks(c->ranks);
  for (int r = 0; r < c->ranks; ++r) {
    for (size_t bytes :
         {static_cast<size_t>(c->bytes), static_cast<size_t>(c->bytes), sizeof(float)}) {
      auto buffer = Buffer::Allocate(Device::Cpu(), bytes);
      if (!buffer.ok()) return skip(buffer.status());
      buffers.push_back(*std::move(buffer));
    }
    auto stream = Stream::Create(Device::Cpu());
    if (!stream.ok()) return skip(stream.status());
    streams.push_back(*std::move(stream));
    Rank& rank = ranks[r];
    rank.comm = (*group)[r].get();
    rank.stream = &streams.back();
    rank.send = static_cast<float*>(buffers[buffers.size() - 3].data());
    rank.recv = static_cast<float*>(buffers[buffers.size() - 2].data());
    rank.token = static_cast<float*>(buffers[buffers.size() - 1].data());
  }
  auto timer = Timer::Create(streams[0]);
  if (!timer.ok()) return skip(timer.status());

  // Fixed by ->Iterations() at registration: the same count on every rank.
  const int64_t iterations = state.max_iterations;
  std::vector<absl::Status> statuses(c->ranks);
  std::vector<std::thread> threads;
  for (int r = 1; r < c->ranks; ++r)
    threads.emplace_back(
        [&, r] { statuses[r] = RunRank(*c, iterations, ranks[r], nullptr, nullptr); });
  statuses[0] = RunRank(*c, iterations, ranks[0], &state, &*timer);
  for (auto& t : threads) t.join();

  if (state.error_occurred()) return;  // rank 0's timed loop skipped with the reason
  for (int r = 0; r < c->ranks; ++r)
    if (!statuses[r].ok())
      return skip(
          absl::Status(statuses[r].code(), absl::StrCat("rank ", r, ": ", statuses[r].message())));
  for (const Rank& rank : ranks)
    if (!rank.wrong.empty()) return state.SkipWithError(rank.wrong.c_str());

  const Rank& timed = ranks[0];
  const double factor = AllReduceBusFactor(c->ranks);
  const double algbw = c->bytes * iterations / timed.out_of_place_seconds;
  const double algbw_in = c->bytes * iterations / timed.in_place_seconds;
  state.counters["algbw"] = benchmark::Counter(algbw);
  state.counters["busbw"] = benchmark::Counter(algbw * factor);
  state.counters["algbw_inplace"] = benchmark::Counter(algbw_in);
  state.counters["busbw_inplace"] = benchmark::Counter(algbw_in * factor);
  state.SetBytesProcessed(c->bytes * iterations);
  state.SetLabel(absl::StrCat("local, one thread per rank, ", c->warmup, " warm-up + ", iterations,
                              " timed per variant, result checked"));
}

// The preset's count, or the flag's when given (-1: not given).
absl::StatusOr<int> CountFromFlag(const char* flag, int flag_value, int preset_value, int least) {
  const int value = flag_value == -1 ? preset_value : flag_value;
  if (value < least)
    return absl::InvalidArgumentError(absl::StrCat("--", flag, "=", value, ": must be >= ", least));
  return value;
}

}  // namespace

absl::Status RegisterAllReduceCases(const SuiteOptions& options, Progress& progress) {
  // Returned as they are: the message names the flag, no file:line needed.
  const absl::StatusOr<int> warmup = CountFromFlag(
      "allreduce_warmup", absl::GetFlag(FLAGS_allreduce_warmup), options.allreduce_warmup, 0);
  if (!warmup.ok()) return warmup.status();
  const absl::StatusOr<int> iterations = CountFromFlag(
      "allreduce_iters", absl::GetFlag(FLAGS_allreduce_iters), options.allreduce_iters, 1);
  if (!iterations.ok()) return iterations.status();
  // Sizes are capped by memory: send and receive buffers for every rank must
  // fit in half of this machine's memory.
  const double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  for (int ranks : options.allreduce_ranks) {
    for (int64_t bytes = std::max<int64_t>(options.allreduce_min_bytes, 8);
         bytes <= options.allreduce_max_bytes && 2.0 * ranks * bytes <= memory / 2; bytes *= 2) {
      auto* c = new AllReduceCase{AllReduceCaseName("local", "fp32", bytes, ranks), bytes, ranks,
                                  *warmup};
      c->progress_index = progress.Add(c->name);
      // A fixed iteration count, never a min time: every rank must know how
      // many collectives to make.
      benchmark::RegisterBenchmark(c->name.c_str(), RunAllReduceCase, c, &progress)
          ->Iterations(*iterations)
          ->Repetitions(options.repetitions)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
