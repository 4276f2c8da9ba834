// allreduce/local/<dtype>/bytes:<S>/ranks:<N>: all-reduce cases on the timing
// harness, in the manner of nccl-tests. Each rank holds its own communicator;
// rank 0 is the harness's thread and ranks 1..N-1 are threads started when
// the case is prepared, parked between commands. Every rank makes the same
// fixed number of collectives, so none waits for a call another never makes.
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/harness.h"
#include "bench/names.h"
#include "bench/suite.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/status.h"
#include "kernels/collectives/communicator.h"
#include "kernels/collectives/local.h"

// Defined beside the only code that reads them; -1 keeps the preset's value.
ABSL_FLAG(int, allreduce_warmup, -1,
          "untimed all-reduces of each variant when an allreduce case is prepared, before its "
          "first timed loop (default: the preset's, 5; nccl-tests' -w is 1 per size, run over "
          "every size before any is timed)");
ABSL_FLAG(std::string, collective_dtypes, "",
          "element types of the allreduce cases, e.g. fp32,bf16,int64 (of fp32, fp16, bf16, "
          "fp64, int32, int64; default: the preset's, fp32, as nccl-tests' -d float)");
ABSL_FLAG(int, collective_factor, 2,
          "the allreduce cases' size sweep: each size this many times the one before, from "
          "--allreduce_bytes' first to its last (nccl-tests' -f; 2 or more)");
ABSL_FLAG(int, allreduce_iters, -1,
          "timed all-reduces per variant and repetition of an allreduce case, the same on every "
          "rank (default: the preset's, 20, as nccl-tests' -n)");

namespace cnnbench::bench {
namespace {

// Rank r's element i is (r + i) % 3: every sum over up to 128 ranks is a
// small integer, exact in every dtype (bf16 holds integers to 256), whatever
// the order the transport adds in.
double Pattern(int rank, size_t i) { return static_cast<double>((rank + i) % 3); }
double Expected(int ranks, size_t i) {
  double sum = 0;
  for (int r = 0; r < ranks; ++r) sum += Pattern(r, i);
  return sum;
}
constexpr double kPoison = -1;  // never an expected value

// Element i of a buffer of `dtype`, as a double, and back.
double Load(DType dtype, const void* data, size_t i) {
  switch (dtype) {
    case DType::kF32:
      return static_cast<const float*>(data)[i];
    case DType::kF64:
      return static_cast<const double*>(data)[i];
    case DType::kF16:
      return HalfToFloat(static_cast<const Half*>(data)[i]);
    case DType::kBF16:
      return BFloat16ToFloat(static_cast<const BFloat16*>(data)[i]);
    case DType::kI32:
      return static_cast<const int32_t*>(data)[i];
    case DType::kI64:
      return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    default:
      return 0;
  }
}
void Store(DType dtype, void* data, size_t i, double value) {
  switch (dtype) {
    case DType::kF32:
      static_cast<float*>(data)[i] = static_cast<float>(value);
      break;
    case DType::kF64:
      static_cast<double*>(data)[i] = value;
      break;
    case DType::kF16:
      static_cast<Half*>(data)[i] = FloatToHalf(static_cast<float>(value));
      break;
    case DType::kBF16:
      static_cast<BFloat16*>(data)[i] = FloatToBFloat16(static_cast<float>(value));
      break;
    case DType::kI32:
      static_cast<int32_t*>(data)[i] = static_cast<int32_t>(value);
      break;
    case DType::kI64:
      static_cast<int64_t*>(data)[i] = static_cast<int64_t>(value);
      break;
    default:
      break;
  }
}

// The element types every transport reduces.
bool Reduced(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16 ||
         dtype == DType::kF64 || dtype == DType::kI32 || dtype == DType::kI64;
}

// What every rank does next.
enum class Task {
  kFill,        // writes its buffers: their pages are faulted in by the thread that uses them
  kOutOfPlace,  // `count` all-reduces send -> recv
  kInPlace,     // `count` all-reduces recv -> recv
  kCheck,       // one all-reduce of each variant, its result checked
  kQuit,
};
struct Command {
  Task task = Task::kQuit;
  int64_t count = 0;
};

// What one rank holds, and what its last check saw.
struct Rank {
  std::unique_ptr<Communicator> comm;
  Stream stream = Stream::Cpu();
  Buffer send;        // (count) of the case's dtype
  Buffer recv;        // (count)
  std::string wrong;  // the first wrong result of the last check, if any
  // Wrong elements the last check counted, out of place and in place
  // (nccl-tests' #wrong).
  int64_t wrong_out = 0, wrong_in = 0;
};

absl::Status OnRank(int rank, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("rank ", rank, ": ", status.message()));
}

class AllReduceWorkload : public Workload {
 public:
  static absl::StatusOr<std::unique_ptr<Workload>> Prepare(
      std::vector<std::unique_ptr<Communicator>> group, int64_t bytes, int warmup, DType dtype);
  ~AllReduceWorkload() override;

  // Rank 0's: the harness's timer brackets rank 0's calls.
  const Stream& stream() const override { return ranks_[0].stream; }
  absl::Status Run() override { return RunIterations(1); }
  // `count` out-of-place all-reduces on every rank. Returns when rank 0's
  // last one has (so every rank's result is written); the other threads
  // report back before the next command, outside the timed span.
  absl::Status RunIterations(int64_t count) override;
  // Times the in-place loop the same way, checks both variants' results on
  // every rank, and sets the counters.
  absl::Status Report(benchmark::State& state) override;

 private:
  AllReduceWorkload(int64_t bytes, int warmup, DType dtype)
      : bytes_(bytes), warmup_(warmup), dtype_(dtype) {}

  // Runs `command` on `rank` (called from that rank's thread). Stops at the
  // first failed collective: a group fails a collective on every rank
  // alike, so all ranks stop at the same call.
  absl::Status Execute(Rank& rank, const Command& command);
  // Hands `command` to ranks 1..N-1 once they are done with the last one.
  void Post(const Command& command);
  // Waits until ranks 1..N-1 are done; their first error since the last Finish.
  absl::Status Finish();
  // Post, rank 0's share, Finish.
  absl::Status RunEverywhere(const Command& command);
  // The loop of rank r's thread (r >= 1).
  void Serve(int r);

  const int64_t bytes_;
  const int warmup_;
  const DType dtype_;
  // Not resized once the rank threads run: they hold references into it.
  std::vector<Rank> ranks_;
  std::optional<Timer> in_place_timer_;  // on rank 0's stream
  int64_t count_ = 0;                    // iterations of the last timed span

  std::mutex mutex_;
  std::condition_variable posted_;    // a new command for ranks 1..N-1
  std::condition_variable finished_;  // none of them is running it any more
  Command command_;                   // the last one posted
  uint64_t generation_ = 0;           // commands posted so far
  int busy_ = 0;                      // ranks still running command_
  std::vector<absl::Status> errors_;  // per rank, the first since the last Finish
  std::vector<std::thread> threads_;  // ranks 1..N-1
};

absl::StatusOr<std::unique_ptr<Workload>> AllReduceWorkload::Prepare(
    std::vector<std::unique_ptr<Communicator>> group, int64_t bytes, int warmup, DType dtype) {
  // The ranks of this process: all of the group's (local: threads), or one
  // of several processes' (mpi), each with its own thread here.
  const int n = static_cast<int>(group.size());
  if (n == 0) return absl::InvalidArgumentError("an all-reduce case needs at least one rank");
  if (group[0] == nullptr) return absl::InvalidArgumentError("communicator 0 is missing");
  // A whole in-process group starts at rank 0; an MPI process holds its own rank.
  const int size = group[0]->size();
  const int first = n == size ? 0 : group[0]->rank();
  for (int r = 0; r < n; ++r)
    if (group[r] == nullptr || group[r]->size() != size || first + n > size ||
        group[r]->rank() != first + r)
      return absl::InvalidArgumentError(absl::StrCat("communicator ", r, " of ", n, " is not rank ",
                                                     first + r, " of one group of ", size));
  if (bytes <= 0 || bytes % SizeOf(dtype) != 0)
    return absl::InvalidArgumentError(absl::StrCat("bytes:", bytes, " is not a positive number of ",
                                                   DTypeName(dtype), " elements"));
  if (warmup < 0) return absl::InvalidArgumentError("warm-up count must be >= 0");

  std::unique_ptr<AllReduceWorkload> w(new AllReduceWorkload(bytes, warmup, dtype));
  // Everything that can fail on one rank alone is done before the rank
  // threads start, so no rank waits for one that already gave up.
  w->ranks_.resize(n);
  for (int r = 0; r < n; ++r) {
    Rank& rank = w->ranks_[r];
    rank.comm = std::move(group[r]);
    ASSIGN_OR_RETURN(rank.stream, Stream::Create(Device::Cpu()));
    ASSIGN_OR_RETURN(rank.send, Buffer::Allocate(Device::Cpu(), bytes));
    ASSIGN_OR_RETURN(rank.recv, Buffer::Allocate(Device::Cpu(), bytes));
  }
  ASSIGN_OR_RETURN(Timer timer, Timer::Create(w->ranks_[0].stream));
  w->in_place_timer_.emplace(std::move(timer));
  w->errors_.resize(n);
  for (int r = 1; r < n; ++r) w->threads_.emplace_back([p = w.get(), r] { p->Serve(r); });

  RETURN_IF_ERROR(w->RunEverywhere({Task::kFill}));
  RETURN_IF_ERROR(w->RunEverywhere({Task::kOutOfPlace, warmup}));
  RETURN_IF_ERROR(w->RunEverywhere({Task::kInPlace, warmup}));
  return std::unique_ptr<Workload>(std::move(w));
}

AllReduceWorkload::~AllReduceWorkload() {
  if (threads_.empty()) return;
  Post({Task::kQuit});
  for (std::thread& t : threads_) t.join();
}

absl::Status AllReduceWorkload::Execute(Rank& rank, const Command& command) {
  const size_t count = bytes_ / SizeOf(dtype_);
  const int r = rank.comm->rank();
  const int n = rank.comm->size();
  void* send = rank.send.data();  // (count)
  void* recv = rank.recv.data();  // (count)
  auto all_reduce = [&](const void* in, void* out) {
    return rank.comm->AllReduce(in, out, count, dtype_, ReduceOp::kSum, rank.stream);
  };
  // Counts every wrong element; keeps the first.
  auto check = [&](const char* variant, int64_t& wrong) {
    for (size_t i = 0; i < count; ++i) {
      const double got = Load(dtype_, recv, i);
      if (got == Expected(n, i)) continue;
      ++wrong;
      if (rank.wrong.empty())
        rank.wrong = absl::StrCat(variant, " result wrong at rank ", r, " element ", i, ": ", got,
                                  " vs ", Expected(n, i));
    }
  };
  switch (command.task) {
    case Task::kFill:
      for (size_t i = 0; i < count; ++i) {
        Store(dtype_, send, i, Pattern(r, i));
        Store(dtype_, recv, i, Pattern(r, i));
      }
      return absl::OkStatus();
    case Task::kOutOfPlace:
      for (int64_t k = 0; k < command.count; ++k) RETURN_IF_ERROR(all_reduce(send, recv));
      return absl::OkStatus();
    case Task::kInPlace:
      // Each call sums the data into itself: it grows by a factor of the
      // rank count per call, perhaps to inf (adds take the same time on it);
      // the check starts again from the pattern.
      for (int64_t k = 0; k < command.count; ++k) RETURN_IF_ERROR(all_reduce(recv, recv));
      return absl::OkStatus();
    case Task::kCheck:
      rank.wrong.clear();
      rank.wrong_out = rank.wrong_in = 0;
      for (size_t i = 0; i < count; ++i) Store(dtype_, recv, i, kPoison);  // unwritten shows
      RETURN_IF_ERROR(all_reduce(send, recv));
      check("out-of-place", rank.wrong_out);
      std::memcpy(recv, send, count * SizeOf(dtype_));
      RETURN_IF_ERROR(all_reduce(recv, recv));
      check("in-place", rank.wrong_in);
      return absl::OkStatus();
    case Task::kQuit:
      break;
  }
  return absl::OkStatus();
}

void AllReduceWorkload::Post(const Command& command) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return busy_ == 0; });
    command_ = command;
    ++generation_;
    busy_ = command.task == Task::kQuit ? 0 : static_cast<int>(threads_.size());
  }
  posted_.notify_all();
}

absl::Status AllReduceWorkload::Finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [&] { return busy_ == 0; });
  absl::Status first;
  for (size_t r = 0; r < errors_.size(); ++r) {
    if (first.ok()) first = OnRank(static_cast<int>(r), errors_[r]);
    errors_[r] = absl::OkStatus();
  }
  return first;
}

absl::Status AllReduceWorkload::RunEverywhere(const Command& command) {
  Post(command);
  const absl::Status mine = Execute(ranks_[0], command);
  const absl::Status theirs = Finish();  // always: the next command needs them idle
  if (!mine.ok()) return OnRank(0, mine);
  return theirs;
}

void AllReduceWorkload::Serve(int r) {
  uint64_t seen = 0;
  for (;;) {
    Command command;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      posted_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      command = command_;
    }
    if (command.task == Task::kQuit) return;
    absl::Status status = Execute(ranks_[r], command);
    std::lock_guard<std::mutex> lock(mutex_);
    if (errors_[r].ok()) errors_[r] = std::move(status);
    if (--busy_ == 0) finished_.notify_all();
  }
}

absl::Status AllReduceWorkload::RunIterations(int64_t count) {
  count_ = count;
  const Command command{Task::kOutOfPlace, count};
  Post(command);
  return OnRank(0, Execute(ranks_[0], command));
}

absl::Status AllReduceWorkload::Report(benchmark::State& state) {
  RETURN_IF_ERROR_AS_IS(Finish());  // the timed span, on ranks 1..N-1

  const Command in_place{Task::kInPlace, count_};
  RETURN_IF_ERROR(in_place_timer_->Start());
  Post(in_place);
  const absl::Status mine = Execute(ranks_[0], in_place);
  const absl::Status stopped = in_place_timer_->Stop();
  RETURN_IF_ERROR_AS_IS(Finish());
  if (!mine.ok()) return OnRank(0, mine);
  RETURN_IF_ERROR(stopped);
  ASSIGN_OR_RETURN(const double in_place_seconds, in_place_timer_->ElapsedSeconds());

  RETURN_IF_ERROR_AS_IS(RunEverywhere({Task::kCheck}));
  // This process's ranks' counts (under MPI, its one rank's).
  int64_t wrong_out = 0, wrong_in = 0;
  for (const Rank& rank : ranks_) wrong_out += rank.wrong_out, wrong_in += rank.wrong_in;
  for (const Rank& rank : ranks_)
    if (!rank.wrong.empty())
      return absl::InternalError(absl::StrCat(
          rank.wrong, " (wrong elements: ", wrong_out, " out of place, ", wrong_in,
          " in place, over ", ranks_.size() == 1 ? "this rank" : "the ranks of this process", ")"));
  // No counter for the count, which is 0 here: a counter that is 0 in
  // every repetition makes Google Benchmark's cv aggregate 0/0, written as
  // NaN, which is not JSON. The label says it.

  // Out of place from the harness's manual time (bytes per iteration / its
  // time); in place from this repetition's own span.
  // The whole group's size: under MPI this process holds one of its ranks.
  const int ranks = ranks_[0].comm->size();
  const double factor = AllReduceBusFactor(ranks);
  const double bytes = static_cast<double>(bytes_);
  state.counters["algbw"] =
      benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["busbw"] =
      benchmark::Counter(bytes * factor, benchmark::Counter::kIsIterationInvariantRate);
  const double algbw_in = bytes * count_ / in_place_seconds;
  state.counters["algbw_inplace"] = benchmark::Counter(algbw_in);
  state.counters["busbw_inplace"] = benchmark::Counter(algbw_in * factor);
  state.SetBytesProcessed(bytes_ * count_);
  state.SetLabel(absl::StrCat(ranks_[0].comm->name(), ", one thread per rank, ", warmup_,
                              " warm-up + ", count_,
                              " timed per variant, result checked (0 wrong elements)"));
  return absl::OkStatus();
}

// The preset's count, or the flag's when given (-1: not given).
absl::StatusOr<int> CountFromFlag(const char* flag, int flag_value, int preset_value, int least) {
  const int value = flag_value == -1 ? preset_value : flag_value;
  if (value < least)
    return absl::InvalidArgumentError(absl::StrCat("--", flag, "=", value, ": must be >= ", least));
  return value;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Workload>> PrepareAllReduceWorkload(
    std::vector<std::unique_ptr<Communicator>> group, int64_t bytes, int warmup, DType dtype) {
  return AllReduceWorkload::Prepare(std::move(group), bytes, warmup, dtype);
}

absl::StatusOr<std::vector<std::pair<std::string, DType>>> CollectiveDTypes(
    const std::string& flag, const std::vector<std::string>& preset) {
  std::vector<std::string> names = preset;
  if (!flag.empty()) names = absl::StrSplit(flag, ',');
  std::vector<std::pair<std::string, DType>> out;
  for (const std::string& name : names) {
    const absl::StatusOr<DType> dtype = ParseDType(name);
    if (!dtype.ok() || !Reduced(*dtype))
      return absl::InvalidArgumentError(
          absl::StrCat("--collective_dtypes: '", name,
                       "' is not an element type the collectives reduce (fp32, fp16, bf16, "
                       "fp64, int32, int64)"));
    // By its canonical name, as case names spell it.
    const std::string canonical(DTypeName(*dtype));
    if (std::none_of(out.begin(), out.end(), [&](const auto& d) { return d.first == canonical; }))
      out.emplace_back(canonical, *dtype);
  }
  if (out.empty()) return absl::InvalidArgumentError("--collective_dtypes: no element type");
  return out;
}

absl::Status RegisterAllReduceCases(const SuiteOptions& options, Harness& harness) {
  // Returned as they are: the message names the flag, no file:line needed.
  const absl::StatusOr<int> warmup = CountFromFlag(
      "allreduce_warmup", absl::GetFlag(FLAGS_allreduce_warmup), options.allreduce.warmup, 0);
  if (!warmup.ok()) return warmup.status();
  const absl::StatusOr<int> iterations = CountFromFlag(
      "allreduce_iters", absl::GetFlag(FLAGS_allreduce_iters), options.allreduce.iters, 1);
  if (!iterations.ok()) return iterations.status();
  const int factor = absl::GetFlag(FLAGS_collective_factor);
  if (factor < 2)
    return absl::InvalidArgumentError(absl::StrCat(
        "--collective_factor=", factor, ": the size sweep's step factor must be 2 or more"));
  const auto dtypes =
      CollectiveDTypes(absl::GetFlag(FLAGS_collective_dtypes), options.allreduce.dtypes);
  if (!dtypes.ok()) return dtypes.status();
  // Sizes are capped by memory: send and receive buffers for every rank must
  // fit in half of this machine's memory.
  const double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  std::vector<int> rank_counts = options.allreduce.ranks;
  if (options.mpi != nullptr) rank_counts = {options.mpi->size};  // one rank per process
  const char* impl = options.mpi != nullptr ? "mpi" : "local";
  for (int ranks : rank_counts)
    for (const auto& [dtype_name, dtype] : *dtypes)
      for (int64_t bytes = std::max<int64_t>(options.allreduce.min_bytes, 8);
           bytes <= options.allreduce.max_bytes && 2.0 * ranks * bytes <= memory / 2;
           bytes *= factor) {
        TimedCase timed;
        timed.name = AllReduceCaseName(impl, dtype_name, bytes, ranks);
        timed.family = FamilyName(Family::kAllReduce);
        // A fixed count, never a min time: every rank must know how many
        // collectives to make. Each rank makes them in one go, timed as a span.
        timed.iterations = *iterations;
        timed.iterations_flag = "--allreduce_iters";
        timed.time_span = true;
        timed.unit = benchmark::kMicrosecond;
        timed.prepare = [ranks, bytes, warmup = *warmup, dtype = dtype,
                         &options]() -> absl::StatusOr<std::unique_ptr<Workload>> {
          ASSIGN_OR_RETURN(ReplicaPlacement placement, PlaceReplicas(options, 0, ranks));
          auto workload =
              PrepareAllReduceWorkload(std::move(placement.group), bytes, warmup, dtype);
          if (!workload.ok()) return EndJobOnTimeout(options, workload.status());
          return workload;
        };
        harness.Register(std::move(timed));
      }
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
