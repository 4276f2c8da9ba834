// <collective>/<local|mpi>/<dtype>/<op>/bytes:<S>/ranks:<N>: the collectives
// on the timing harness, in the manner of nccl-tests (one case family per
// collective, as nccl-tests has one binary per collective). Each rank holds
// its own communicator; rank 0 is the harness's thread and ranks 1..N-1 are
// threads started when the case is prepared, parked between commands
// (bench/harness/rank_threads.h). Every rank makes the same fixed number of
// collectives, so none waits for a call another never makes.
#include "bench/cases/collective/collective_cases.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/cases/collective/collective_values.h"
#include "bench/cases/collective/definitions/definition.h"
#include "bench/cli/flag_values.h"
#include "bench/harness/harness.h"
#include "bench/suite/names.h"
#include "bench/harness/rank_threads.h"
#include "bench/suite/suite.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/status.h"
#include "kernels/collectives/communicator.h"
#include "kernels/collectives/nccl.h"

namespace cnnbench::bench {
namespace {

// What every rank does next.
enum class Task {
  kFill,        // writes its buffers: their pages are faulted in by the thread that uses them
  kOutOfPlace,  // `count` collectives send -> recv
  kInPlace,     // `count` collectives within one buffer
  kCheck,       // one collective of each variant, its result checked
  kCapture,     // each variant's timed loop captured as a CUDA graph
};
struct Command {
  Task task = Task::kFill;
  int64_t count = 0;
};

// What one rank holds, and what its last check saw.
struct Rank {
  Communicator* comm = nullptr;
  RankCase side;  // what this rank's calls and checks are given
  Stream stream = Stream::Cpu();
  Buffer send;             // ShapeOf's send_elements
  Buffer recv;             // ShapeOf's recv_elements
  Buffer stop;             // one int64: the ranks' agreement to stop a span (Loop)
  std::vector<char> host;  // a staging copy of one buffer, for fills and checks
  // With CollectiveCase::graph: each variant's timed loop, captured once.
  CapturedWork out_of_place, in_place;
  std::string wrong;  // the first wrong result of the last check, if any
  // Wrong elements the last check counted, out of place and in place
  // (nccl-tests' #wrong).
  int64_t wrong_out = 0, wrong_in = 0;
};

// Waits for the rank's enqueued work: on a GPU at most the communicator's
// timeout (a collective whose peers never come never completes), on the
// CPU it is done already.
absl::Status Wait(Rank& rank) {
  if (rank.stream.device().is_cpu()) return absl::OkStatus();
  return NcclSynchronize(*rank.comm, rank.stream);
}

// `values` reduced by `op` over the whole group, through `rank`'s
// communicator on its device (every rank of the group makes the same call).
absl::StatusOr<std::vector<int64_t>> OverGroup(Rank& rank, std::vector<int64_t> values,
                                               ReduceOp op) {
  const size_t bytes = values.size() * sizeof(int64_t);
  const Device device = rank.stream.device();
  ASSIGN_OR_RETURN(Buffer buffer, Buffer::Allocate(device, bytes));
  RETURN_IF_ERROR(CopyBytes(buffer.data(), device, values.data(), Device::Cpu(), bytes));
  RETURN_IF_ERROR(rank.comm->AllReduce(buffer.data(), buffer.data(), values.size(), DType::kI64, op,
                                       rank.stream));
  RETURN_IF_ERROR(Wait(rank));
  RETURN_IF_ERROR(CopyBytes(values.data(), Device::Cpu(), buffer.data(), device, bytes));
  return values;
}

}  // namespace

int64_t CallsBetweenStopChecks(int64_t bytes) {
  return std::max<int64_t>(1, kStopCheckBytes / std::max<int64_t>(bytes, 1));
}

namespace {

class CollectiveWorkload : public Workload {
 public:
  static absl::StatusOr<std::unique_ptr<Workload>> Prepare(std::shared_ptr<CommunicatorGroup> group,
                                                           const CollectiveCase& spec);

  // Rank 0's: the harness's timer brackets rank 0's calls.
  const Stream& stream() const override { return ranks_[0].stream; }
  absl::Status Run() override { return RunIterations(1); }
  // `count` out-of-place collectives on every rank. Returns when rank 0's
  // last one has (so every rank's result is written); the other threads
  // report back before the next command, outside the timed span.
  absl::Status RunIterations(int64_t count) override;
  // Times the in-place loop the same way, checks both variants' results on
  // every rank, and sets the counters.
  absl::Status Report(benchmark::State& state) override;

 private:
  CollectiveWorkload(std::shared_ptr<CommunicatorGroup> group, const CollectiveCase& spec)
      : group_(std::move(group)), spec_(spec) {}

  // One collective on `rank`, out of place or in place.
  absl::Status Call(Rank& rank, bool in_place);
  // `count` of them: the captured loop's replay when it has that count.
  absl::Status Loop(Rank& rank, bool in_place, int64_t count);
  // Writes the inputs of the variant into the rank's buffers (the receive
  // buffer poisoned out of place).
  absl::Status Fill(Rank& rank, bool in_place);
  // Counts the wrong elements of the variant's result; keeps the first.
  absl::Status Check(Rank& rank, bool in_place, int64_t& wrong);
  // Runs `command` on `rank` (called from that rank's thread). Stops at the
  // first failed collective: a group fails a collective on every rank
  // alike, so all ranks stop at the same call.
  absl::Status Execute(Rank& rank, const Command& command);
  // `command` on every rank of this process: rank 0's share on this thread.
  RankThreads::Task On(const Command& command) {
    return [this, command](int r) { return Execute(ranks_[r], command); };
  }
  // A timed span of `count` calls of the variant: rank 0's share is its
  // calls alone (the timer on its stream brackets them); the other ranks
  // also wait for theirs.
  RankThreads::Task Span(bool in_place, int64_t count) {
    return [this, in_place, count](int r) -> absl::Status {
      RETURN_IF_ERROR(Loop(ranks_[r], in_place, count));
      return r == 0 ? absl::OkStatus() : Wait(ranks_[r]);
    };
  }

  const std::shared_ptr<CommunicatorGroup> group_;  // outlives the threads
  const CollectiveCase spec_;
  const CollectiveDefinition* definition_ = nullptr;
  // Not resized once the rank threads run: they hold references into it.
  std::vector<Rank> ranks_;
  std::optional<Timer> in_place_timer_;  // on rank 0's stream
  int64_t count_ = 0;                    // iterations of the last timed span
  // Ranks 1..N-1's threads; last, so they are joined before ranks_ goes.
  std::unique_ptr<RankThreads> threads_;
};

absl::StatusOr<std::unique_ptr<Workload>> CollectiveWorkload::Prepare(
    std::shared_ptr<CommunicatorGroup> group, const CollectiveCase& spec) {
  if (group == nullptr) return absl::InvalidArgumentError("a collective case needs a group");
  // The ranks of this process: all of the group's (local: threads), or one
  // of several processes' (mpi), each with its own thread here.
  std::vector<std::unique_ptr<Communicator>>& comms = group->comms;
  const int n = static_cast<int>(comms.size());
  if (n == 0) return absl::InvalidArgumentError("a collective case needs at least one rank");
  if (comms[0] == nullptr) return absl::InvalidArgumentError("communicator 0 is missing");
  if (group->devices.size() != comms.size())
    return absl::InvalidArgumentError(absl::StrCat("the group has ", n, " communicators but ",
                                                   group->devices.size(), " devices"));
  // A whole in-process group starts at rank 0; an MPI process holds its own rank.
  const int size = comms[0]->size();
  const int first = n == size ? 0 : comms[0]->rank();
  for (int r = 0; r < n; ++r)
    if (comms[r] == nullptr || comms[r]->size() != size || first + n > size ||
        comms[r]->rank() != first + r)
      return absl::InvalidArgumentError(absl::StrCat("communicator ", r, " of ", n, " is not rank ",
                                                     first + r, " of one group of ", size));
  const std::string name(CollectiveName(spec.collective));
  if (!ReducedType(spec.dtype))
    return absl::InvalidArgumentError(
        absl::StrCat(DTypeName(spec.dtype), " is not a type the ", name, " cases check"));
  const CollectiveShape shape = ShapeOf(spec.collective, SizeOf(spec.dtype), spec.bytes, size);
  if (shape.count == 0 || shape.bytes != spec.bytes)
    return absl::InvalidArgumentError(absl::StrCat(
        "bytes:", spec.bytes, " is not a whole number of ", DTypeName(spec.dtype), " elements",
        !PartsPerRank(spec.collective)
            ? ""
            : absl::StrCat(" per rank of ", size, " in whole ", kRankPartAlignment,
                           " bytes (nccl-tests' sizes; --list shows the sizes a sweep makes)")));
  if (spec.warmup < 0) return absl::InvalidArgumentError("warm-up count must be >= 0");
  if (spec.graph && (spec.iterations < 1 || group->devices[0].is_cpu()))
    return absl::InvalidArgumentError(
        "a CUDA graph of the timed loop needs GPU ranks and an iteration count");
  if (Rooted(spec.collective) && (spec.root < 0 || spec.root >= size))
    return absl::UnimplementedError(absl::StrCat(
        "unsupported: root ", spec.root, " is not a rank of ", size, " (--collective_root)"));

  std::unique_ptr<CollectiveWorkload> w(new CollectiveWorkload(std::move(group), spec));
  w->definition_ = &DefinitionOf(spec.collective);
  // Everything that can fail on one rank alone is done before the rank
  // threads start, so no rank waits for one that already gave up.
  const size_t element = SizeOf(spec.dtype);
  w->ranks_.resize(n);
  for (int r = 0; r < n; ++r) {
    Rank& rank = w->ranks_[r];
    const Device device = w->group_->devices[r];
    rank.comm = w->group_->comms[r].get();
    rank.side = RankCase{spec.collective, spec.op, spec.dtype, spec.root, rank.comm->rank(), size,
                         shape};
    ASSIGN_OR_RETURN(rank.stream, Stream::Create(device));
    ASSIGN_OR_RETURN(rank.send, Buffer::Allocate(device, shape.send_elements * element));
    ASSIGN_OR_RETURN(rank.recv, Buffer::Allocate(device, shape.recv_elements * element));
    ASSIGN_OR_RETURN(rank.stop, Buffer::Allocate(device, sizeof(int64_t)));
  }
  ASSIGN_OR_RETURN(Timer timer, Timer::Create(w->ranks_[0].stream));
  w->in_place_timer_.emplace(std::move(timer));
  w->threads_ = std::make_unique<RankThreads>(n);
  RETURN_IF_ERROR(w->threads_->status());  // the destructor joins those started

  RankThreads& threads = *w->threads_;
  RETURN_IF_ERROR(threads.RunEverywhere(w->On({Task::kFill})));
  RETURN_IF_ERROR(threads.RunEverywhere(w->On({Task::kOutOfPlace, spec.warmup})));
  RETURN_IF_ERROR(threads.RunEverywhere(w->On({Task::kInPlace, spec.warmup})));
  // Captured after the warm-up, as nccl-tests captures (-G) after its own.
  if (spec.graph) RETURN_IF_ERROR(threads.RunEverywhere(w->On({Task::kCapture})));
  return std::unique_ptr<Workload>(std::move(w));
}

absl::Status CollectiveWorkload::Call(Rank& rank, bool in_place) {
  return definition_->call(*rank.comm, rank.side, static_cast<char*>(rank.send.data()),
                           static_cast<char*>(rank.recv.data()), in_place, rank.stream);
}

absl::Status CollectiveWorkload::Loop(Rank& rank, bool in_place, int64_t count) {
  if (in_place && !HasInPlace(spec_.collective)) return absl::OkStatus();  // all-to-all
  const CapturedWork& graph = in_place ? rank.in_place : rank.out_of_place;
  if (graph.valid() && count == spec_.iterations) return graph.Launch(rank.stream);
  // On the host transports every call returns done, so a long span stops
  // between calls when the run is to stop: every few calls the ranks agree
  // on it (a one-value all-reduce of each rank's view, every rank at the
  // same call), so all leave at the same call. The agreement's cost is one
  // tiny collective per kStopCheckBytes moved. A GPU's enqueued span runs out.
  const int64_t chunk = rank.stream.device().is_cpu() ? CallsBetweenStopChecks(spec_.bytes) : count;
  for (int64_t done = 0; done < count;) {
    const int64_t end = std::min(count, done + chunk);
    for (; done < end; ++done) RETURN_IF_ERROR(Call(rank, in_place));
    if (done == count) break;
    // Each rank's view, the max over the group, in place in the buffer made
    // at prepare (host memory here): nothing allocated inside the span.
    int64_t* stop = static_cast<int64_t*>(rank.stop.data());
    *stop = StopRequested() ? 1 : 0;
    RETURN_IF_ERROR(rank.comm->AllReduce(stop, stop, 1, DType::kI64, ReduceOp::kMax, rank.stream));
    if (*stop != 0) return InterruptedError();
  }
  return absl::OkStatus();
}

absl::Status CollectiveWorkload::Fill(Rank& rank, bool in_place) {
  const DType t = spec_.dtype;
  // The buffer the inputs go in, and where in it this rank's own are.
  const BufferRange inputs = definition_->inputs(rank.side, in_place);
  Buffer& buffer = inputs.send ? rank.send : rank.recv;
  const size_t elements = buffer.size() / SizeOf(t);
  rank.host.assign(buffer.size(), 0);
  for (size_t i = 0; i < elements; ++i) {
    const bool input = i >= inputs.first && i - inputs.first < inputs.elements;
    StoreElement(t, rank.host.data(), i,
                 input ? CollectiveInput(spec_.collective, spec_.op, rank.side.rank,
                                         i - inputs.first)
                       : kPoison);
  }
  RETURN_IF_ERROR(
      CopyBytes(buffer.data(), buffer.device(), rank.host.data(), Device::Cpu(), buffer.size()));
  // A result landing in the other buffer (out of place: the receive buffer;
  // in place, a scatter's off the root) finds it poisoned, so an unwritten
  // element shows rather than the last check's values.
  const BufferRange result = definition_->result(rank.side, in_place);
  if (result.send == inputs.send) return absl::OkStatus();
  Buffer& out = result.send ? rank.send : rank.recv;
  rank.host.assign(out.size(), 0);
  for (size_t i = 0; i < out.size() / SizeOf(t); ++i) StoreElement(t, rank.host.data(), i, kPoison);
  return CopyBytes(out.data(), out.device(), rank.host.data(), Device::Cpu(), out.size());
}

absl::Status CollectiveWorkload::Check(Rank& rank, bool in_place, int64_t& wrong) {
  const DType t = spec_.dtype;
  // Where the result is, and what each of its elements must be.
  const BufferRange result = definition_->result(rank.side, in_place);
  if (result.elements == 0) return absl::OkStatus();  // nothing written on this rank
  Buffer& buffer = result.send ? rank.send : rank.recv;
  rank.host.assign(buffer.size(), 0);
  RETURN_IF_ERROR(
      CopyBytes(rank.host.data(), Device::Cpu(), buffer.data(), buffer.device(), buffer.size()));
  for (size_t i = 0; i < result.elements; ++i) {
    const double got = LoadElement(t, rank.host.data(), result.first + i);
    const double want = RoundedTo(t, definition_->expected(rank.side, i));
    if (std::fabs(got - want) <= ResultTolerance(spec_.op, t, want)) continue;
    ++wrong;
    if (rank.wrong.empty())
      rank.wrong = absl::StrCat(in_place ? "in-place" : "out-of-place", " result wrong at rank ",
                                rank.side.rank, " element ", i, ": ", got, " vs ", want);
  }
  return absl::OkStatus();
}

absl::Status CollectiveWorkload::Execute(Rank& rank, const Command& command) {
  switch (command.task) {
    case Task::kFill:
      return Fill(rank, /*in_place=*/false);
    case Task::kOutOfPlace:
      RETURN_IF_ERROR(Loop(rank, false, command.count));
      return Wait(rank);
    case Task::kInPlace:
      // Each call reduces the data into itself: a sum grows by a factor of
      // the rank count per call, perhaps to inf (adds take the same time on
      // it); the check starts again from the inputs.
      RETURN_IF_ERROR(Loop(rank, true, command.count));
      return Wait(rank);
    case Task::kCapture:
      for (bool in_place : {false, true}) {
        if (in_place && !HasInPlace(spec_.collective)) continue;
        RETURN_IF_ERROR(CapturedWork::BeginCapture(rank.stream));
        absl::Status calls;
        for (int64_t k = 0; k < spec_.iterations && calls.ok(); ++k) calls = Call(rank, in_place);
        absl::StatusOr<CapturedWork> graph = CapturedWork::EndCapture(rank.stream);
        RETURN_IF_ERROR(calls);  // after ending the capture, which a failed call leaves open
        if (!graph.ok()) return graph.status();
        (in_place ? rank.in_place : rank.out_of_place) = *std::move(graph);
      }
      return absl::OkStatus();
    case Task::kCheck:
      rank.wrong.clear();
      rank.wrong_out = rank.wrong_in = 0;
      RETURN_IF_ERROR(Fill(rank, false));
      RETURN_IF_ERROR(Call(rank, false));
      RETURN_IF_ERROR(Wait(rank));
      RETURN_IF_ERROR(Check(rank, false, rank.wrong_out));
      if (!HasInPlace(spec_.collective)) return absl::OkStatus();
      RETURN_IF_ERROR(Fill(rank, true));
      RETURN_IF_ERROR(Call(rank, true));
      RETURN_IF_ERROR(Wait(rank));
      RETURN_IF_ERROR(Check(rank, true, rank.wrong_in));
      return Fill(rank, false);  // the out-of-place loop's inputs again
  }
  return absl::OkStatus();
}

absl::Status CollectiveWorkload::RunIterations(int64_t count) {
  count_ = count;
  // Returns after rank 0's calls (the harness stops its timer on rank 0's
  // stream); Report waits for the others.
  return threads_->Start(Span(/*in_place=*/false, count));
}

absl::Status CollectiveWorkload::Report(benchmark::State& state) {
  RETURN_IF_ERROR_AS_IS(threads_->Finish());  // the timed span, on ranks 1..N-1

  double in_place_seconds = 0;  // all-to-all has no in-place variant
  // At one rank an in-place NCCL call leaves its buffer as it was and NCCL
  // returns without moving a byte: its "bandwidth" would mean nothing.
  const bool in_place_no_op = ranks_[0].comm->size() == 1 && ranks_[0].comm->name() == "nccl";
  if (HasInPlace(spec_.collective) && !in_place_no_op) {
    RETURN_IF_ERROR(in_place_timer_->Start());
    const absl::Status mine = threads_->Start(Span(/*in_place=*/true, count_));
    const absl::Status stopped = in_place_timer_->Stop();
    RETURN_IF_ERROR_AS_IS(threads_->Finish());
    if (!mine.ok()) return mine;
    RETURN_IF_ERROR(stopped);
    ASSIGN_OR_RETURN(in_place_seconds, in_place_timer_->ElapsedSeconds());
  }

  RETURN_IF_ERROR_AS_IS(threads_->RunEverywhere(On({Task::kCheck})));
  // Every rank's counts: this process's ranks', and under MPI (a process
  // holds one rank) the others' summed over the group, as nccl-tests sums
  // its #wrong over its processes, so every rank fails a wrong case alike.
  int64_t wrong_out = 0, wrong_in = 0, first_bad = std::numeric_limits<int64_t>::max();
  for (const Rank& rank : ranks_) {
    wrong_out += rank.wrong_out, wrong_in += rank.wrong_in;
    if (!rank.wrong.empty()) first_bad = std::min<int64_t>(first_bad, rank.comm->rank());
  }
  if (static_cast<int>(ranks_.size()) < ranks_[0].comm->size()) {
    ASSIGN_OR_RETURN(std::vector<int64_t> sums,
                     OverGroup(ranks_[0], {wrong_out, wrong_in}, ReduceOp::kSum));
    ASSIGN_OR_RETURN(std::vector<int64_t> first, OverGroup(ranks_[0], {first_bad}, ReduceOp::kMin));
    wrong_out = sums[0], wrong_in = sums[1], first_bad = first[0];
  }
  for (const Rank& rank : ranks_)
    if (!rank.wrong.empty())
      return absl::InternalError(absl::StrCat(rank.wrong, " (wrong elements: ", wrong_out,
                                              " out of place, ", wrong_in,
                                              " in place, over the group)"));
  if (wrong_out + wrong_in > 0)
    return absl::InternalError(absl::StrCat(
        "result wrong at rank ", first_bad, " (wrong elements: ", wrong_out, " out of place, ",
        wrong_in, " in place, over the group; this rank's are right)"));
  // No counter for the count, which is 0 here: a counter that is 0 in
  // every repetition makes Google Benchmark's cv aggregate 0/0, written as
  // NaN, which is not JSON. The label says it.

  // Out of place from the harness's manual time (bytes per iteration / its
  // time); in place from this repetition's own span. The whole group's
  // size: under MPI this process holds one of its ranks.
  const int ranks = ranks_[0].comm->size();
  const double factor = BusFactor(spec_.collective, ranks);
  const double bytes = static_cast<double>(spec_.bytes);
  state.counters["algbw"] =
      benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["busbw"] =
      benchmark::Counter(bytes * factor, benchmark::Counter::kIsIterationInvariantRate);
  if (in_place_seconds > 0) {
    const double algbw_in = bytes * count_ / in_place_seconds;
    state.counters["algbw_inplace"] = benchmark::Counter(algbw_in);
    state.counters["busbw_inplace"] = benchmark::Counter(algbw_in * factor);
  }
  state.SetBytesProcessed(spec_.bytes * count_);
  const bool rooted = Rooted(spec_.collective);
  const bool in_process = static_cast<int>(ranks_.size()) == ranks;
  state.SetLabel(absl::StrCat(
      ranks_[0].comm->name(), in_process ? ", one thread per rank" : ", one rank per process",
      group_->devices[0].is_cpu() ? ", host memory" : ", device memory",
      rooted ? absl::StrCat(", root ", spec_.root) : "", ", ", spec_.warmup, " warm-up + ", count_,
      " timed per variant",
      !HasInPlace(spec_.collective)
          ? " (out of place only: an all-to-all has no in-place form)"
          : in_place_no_op ? " (out of place only: in place at one rank is a no-op in NCCL)" : "",
      ranks_[0].out_of_place.valid() ? " (each loop a CUDA graph, captured once, replayed)" : "",
      ", result checked (0 wrong elements)"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Workload>> PrepareCollectiveWorkload(
    std::shared_ptr<CommunicatorGroup> group, const CollectiveCase& spec) {
  return CollectiveWorkload::Prepare(std::move(group), spec);
}

absl::StatusOr<std::unique_ptr<Workload>> PrepareCollectiveWorkload(
    std::vector<std::unique_ptr<Communicator>> comms, const CollectiveCase& spec) {
  auto group = std::make_shared<CommunicatorGroup>();
  group->devices.assign(comms.size(), Device::Cpu());
  group->comms = std::move(comms);
  return CollectiveWorkload::Prepare(std::move(group), spec);
}

TimedCase CollectiveTimedCase(const std::string& name, const CollectiveCase& spec) {
  TimedCase timed;
  timed.name = name;
  timed.family = std::string(CollectiveName(spec.collective));
  timed.iterations = spec.iterations;
  timed.iterations_flag = "--collective_iters";
  timed.time_span = true;
  timed.unit = benchmark::kMicrosecond;
  return timed;
}

}  // namespace cnnbench::bench
