// The one timing harness every case family runs through: a case is prepared
// once (its Workload), each iteration is timed with core::Timer on the
// workload's stream (device events on GPUs, the steady clock on the CPU),
// and the workload is released before the next case is prepared.
//
//   Harness harness(timing);
//   harness.Register({.name = "gemm/fp32/cpu/gemm:m64n64k64", .family = "gemm",
//                     .prepare = [] { return MakeGemmWorkload(...); }});
//   benchmark::RunSpecifiedBenchmarks();
//   harness.Release();
#ifndef CNNBENCH_BENCH_HARNESS_H_
#define CNNBENCH_BENCH_HARNESS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bench/harness/power_sampler.h"
#include "benchmark/benchmark.h"
#include "core/device.h"

namespace cnnbench::bench {

// The reason a case is skipped with, as a user reads it (console, JSON
// error_message): the file:line trail RETURN_IF_ERROR gathered is left out,
// and a reason kind ("OOM: ", "unsupported: ", "deadline: ") comes first, once. Tables
// print failures starting with "OOM" as OOM, as the published page does.
std::string SkipMessage(const absl::Status& status);

// The message a case is skipped with when the run is interrupted; the
// output leaves such cases out.
inline constexpr char kInterruptedMessage[] = "interrupted";
// What a workload returns when it ends a span early because the run is to
// stop (Workload::StopRequested); the harness then skips the case as
// interrupted, as its own stop check does.
absl::Status InterruptedError();
bool IsInterrupted(const absl::Status& status);

// Whether a case error is a failure: anything but a reason that says the
// case cannot run here ("unsupported: ...", "OOM: ...", as SkipMessage
// writes them), a passed compile deadline ("deadline: ...", the time the
// caller gave ran out) or an interruption. A wrong result, a library's internal
// error or a corrupt input is a failure; //bench:all then exits with
// kCaseFailedExit (docs/benchmarks.md).
bool IsCaseFailure(const absl::Status& status);

// //bench:all's exit status when the run finished and its output was written
// but at least one case failed (IsCaseFailure). 1 and 2 are taken (output
// not written, bad usage), 128 + N are signals.
inline constexpr int kCaseFailedExit = 3;

// An output a case was asked for beside its figures (a --trace_file
// trace) that could not be written: the case keeps its figures (the
// output is never part of them), a warning names the file and the reason
// on stderr now, and //bench:all ends with kCaseFailedExit listing them.
// Safe from any thread.
void NoteUnwrittenOutput(const std::string& case_name, const absl::Status& why);
std::vector<std::string> UnwrittenOutputs();

// Numbers the cases as they are registered and prints "[i/N] name" on
// stderr when case i starts, so a long sweep shows where it is. N counts
// the selected cases only (those --benchmark_filter lets run).
class Progress {
 public:
  // Returns the case's index; call Announce(index) from the case.
  int Add(const std::string& name);
  void Announce(int index);
  // Only the cases with selected[i] are counted and numbered (all by default).
  void Select(const std::vector<bool>& selected);
  const std::vector<std::string>& names() const { return names_; }
  // Selected cases that have started, and how many were selected.
  int started() const;
  int selected() const { return selected_count_; }
  // Prints nothing (the ranks other than 0 of an MPI job).
  void set_quiet(bool quiet) { quiet_ = quiet; }
  bool quiet() const { return quiet_; }

 private:
  std::vector<std::string> names_;
  std::vector<bool> announced_;
  std::vector<int> position_;  // 1-based among the selected; 0: not selected
  int selected_count_ = 0;
  bool quiet_ = false;
};

// Google Benchmark's timing flags as the user gave them. Its 1.7.1 header
// declares no accessor for them, so they are read here, from argv before
// benchmark::Initialize removes them, then from the BENCHMARK_* environment
// variables, with Google Benchmark's own rules (`--flag=value`; the last one
// given wins; the command line wins over the environment).
struct BenchmarkTimingFlags {
  std::optional<int> repetitions;  // --benchmark_repetitions
  std::optional<double> min_time;  // --benchmark_min_time, seconds
};
absl::StatusOr<BenchmarkTimingFlags> ReadBenchmarkTimingFlags(int argc, const char* const* argv);

// A Google Benchmark flag's value as the user gave it, with the same rules:
// the last `--<name>=value` on the command line, else the environment
// variable BENCHMARK_<NAME> when set and not empty.
std::optional<std::string> BenchmarkFlagValue(int argc, const char* const* argv,
                                              absl::string_view name);

// The timing settings every case gets, after the user's flags.
struct TimingSettings {
  int repetitions = 1;    // every family
  double min_time = 0.5;  // seconds per repetition of the cases that count time
  // The user gave --benchmark_min_time: families that count iterations say
  // once that it does not apply to them, and which flag does.
  bool min_time_from_user = false;
  // Each repetition's step times of the cases that keep them
  // (TimedCase::keeps_step_times) go into the JSON (bench/harness/step_times.h).
  bool keep_step_times = true;
  // Live progress of the cases timed step by step: a stderr line every this
  // many timed steps; 0: never; kDisplayAuto: every 10 when stderr is a
  // terminal and the first timed step predicts over 10 s of timed steps.
  int display_every = 0;
  static constexpr int kDisplayAuto = -1;
};

// A case while it runs. Made once by its case's `prepare`, then timed
// iteration by iteration; destroyed when the next case starts or the run ends.
class Workload {
 public:
  virtual ~Workload() = default;
  // Where the timed work is enqueued: the timer's events are recorded there.
  virtual const Stream& stream() const = 0;
  // One timed iteration: enqueues (or, on the CPU, runs) the work on stream().
  virtual absl::Status Run() = 0;
  // `count` iterations in one go, for cases timed as one span (see
  // TimedCase::time_span). Default: Run() `count` times.
  virtual absl::Status RunIterations(int64_t count);
  // After each timed iteration, outside the timed interval: work the next
  // iteration needs that is not what the case measures (inference on real
  // data: the next batch, and the accuracy of the last). Not called for
  // cases timed as one span.
  virtual absl::Status BetweenIterations() { return absl::OkStatus(); }
  // After each repetition's timed loop: counters and label, and any check
  // of the results; an error skips the repetition with its message.
  virtual absl::Status Report(benchmark::State& state) { return absl::OkStatus(); }

  // The seconds of each timed iteration of the repetition being reported,
  // in order (bench/harness/iteration_stats.h summarises them). The harness fills
  // it; a span-timed case has one entry per span.
  const std::vector<double>& iteration_seconds() const { return iteration_seconds_; }

  // The seconds of each step of the repetition being reported, for the
  // step statistics and the kept list (--keep_step_times): each timed
  // iteration's by default; a span-timed case gives the steps it can time
  // inside the span without perturbing it, or none (the span only).
  virtual std::vector<double> StepSeconds() const { return iteration_seconds_; }
  // For the same repetition, each rank's arrival at every step's
  // all-reduce (seconds; by rank, then step): data-parallel CPU cases,
  // every rank's, kept beside the step times ("rank_arrival_ms").
  virtual std::vector<std::vector<double>> RankArrivalSeconds() const { return {}; }
  // Live progress (--display_every): the items one iteration processes
  // (images; 0: the case prints no progress) and a note on the last step
  // ("loss 6.912"), asked between iterations, never inside the timed interval.
  virtual double items_per_iteration() const { return 0; }
  virtual std::string ProgressNote() { return ""; }
  // The GPUs (CUDA ordinals) whose power the case's span is measured by:
  // its stream's GPU by default; none for a CPU case (then the CPU's).
  virtual std::vector<int> gpu_ordinals() const {
    if (stream().device().is_cpu()) return {};
    return {stream().device().ordinal};
  }
  // Power, energy and clocks over the repetition's timed span
  // (bench/harness/power_sampler.h), set before Report: empty without a sensor or
  // with sampling off. The harness writes its counters after Report; a
  // workload's label may name what it saw (ThrottleNote).
  const PowerSummary& power() const { return power_; }

  // The harness's stop check (Harness::SetStopCheck), given after prepare.
  // A workload that wraps another passes it on.
  virtual void SetStopCheck(std::function<bool()> check) { stop_check_ = std::move(check); }

 protected:
  // For a long span (a collective case's millions of calls): true once the
  // run is to stop. Safe to ask from any thread; a workload whose ranks
  // must stop at the same call agrees on it first (collective_cases.cc).
  bool StopRequested() const { return stop_check_ && stop_check_(); }

 private:
  friend class Harness;
  std::vector<double> iteration_seconds_;
  PowerSummary power_;
  std::function<bool()> stop_check_;
};

using PrepareFunction = std::function<absl::StatusOr<std::unique_ptr<Workload>>()>;

struct TimedCase {
  std::string name;
  std::string family;  // "train", "conv", "gemm", ... (for the one-time notes)
  // 0: Google Benchmark runs as many iterations as fill the min time (kernel,
  // GEMM). > 0: exactly this many per repetition (training steps, collective
  // iterations), named by `iterations_flag` ("--steps").
  int64_t iterations = 0;
  std::string iterations_flag;
  // With `iterations`: time a repetition's iterations as one span and give
  // each the mean, as nccl-tests times its loop (collectives, where every
  // rank makes all its calls in one go and no rank may wait on the host).
  bool time_span = false;
  // Its repetitions' step times are kept in the JSON (train, infer).
  bool keeps_step_times = false;
  benchmark::TimeUnit unit = benchmark::kMillisecond;
  PrepareFunction prepare;
};

class Harness {
 public:
  explicit Harness(const TimingSettings& timing) : timing_(timing) {}
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  const TimingSettings& timing() const { return timing_; }
  // Numbers the cases and prints "[i/N] name" as each starts.
  Progress& progress() { return progress_; }

  // Registers the case with Google Benchmark, its timing settings applied:
  // manual time, the repetitions, and the min time or the fixed iteration count.
  void Register(TimedCase c);
  // Releases the workload still held (the last case's). Call after
  // benchmark::RunSpecifiedBenchmarks.
  void Release();

  // The name Google Benchmark gives case `index` (in registration order):
  // the case's name plus the suffixes of its settings
  // ("/iterations:2/repeats:2/manual_time"), which --benchmark_filter sees.
  std::string InstanceName(int index) const;
  int case_count() const { return static_cast<int>(entries_.size()); }

  // Asked before each case and each timed iteration: once it returns true,
  // the running case is abandoned and every later one skipped at once with
  // kInterruptedMessage, so Google Benchmark ends the run and closes its
  // output normally.
  void SetStopCheck(std::function<bool()> stop_check) { stop_check_ = std::move(stop_check); }
  // Under an MPI job: given this rank's view of the stop check, every
  // rank's agreed answer (a one-value all-reduce), so that a signal to any
  // one rank stops them all at the same case or iteration, and none waits
  // in a collective for a peer that has gone. Asked wherever the stop check
  // is, which every rank reaches in the same order: their cases and
  // iteration counts are the same (fixed counts under MPI).
  void SetStopAgreement(std::function<bool(bool)> agree) { agree_ = std::move(agree); }
  // True once a case was abandoned or skipped because of the stop check
  // (the harness's own, or a workload's span that saw it: InterruptedError).
  bool stopped() const { return stopped_; }
  // The cases that failed (IsCaseFailure) so far, each once whatever its
  // repetitions, in the order they failed.
  const std::vector<std::string>& failed_cases() const { return failed_cases_; }
  // Called when a case fails (its name, the error), before the failure is
  // reported: where an MPI job ends on a timed-out collective (it may not
  // return).
  void SetFailureHook(std::function<void(const std::string&, const absl::Status&)> hook) {
    failure_hook_ = std::move(hook);
  }
  // The case running now ("" before the first); safe from any thread (a
  // signal watcher, a rank's thread ending the job).
  std::string current_case() const {
    std::lock_guard<std::mutex> lock(current_case_mutex_);
    return current_case_;
  }
  // Prints each skip's full reason (with its file:line trail) on stderr.
  void set_verbose(bool verbose) { verbose_ = verbose; }
  // Samples `sensors` every `period` over each repetition's timed span
  // (null or a zero period: no sampling).
  void SetPowerSensors(PowerSensors* sensors, std::chrono::milliseconds period) {
    power_sensors_ = sensors;
    power_period_ = period;
  }

 private:
  struct Entry {
    TimedCase spec;
    int index = 0;  // in registration order
    int progress_index = 0;
    int repetition = 0;    // the repetition running (1-based), for the progress lines
    absl::Status failure;  // a case that failed to prepare skips every repetition the same way
  };
  void RunCase(benchmark::State& state, Entry& entry);
  // A workload ended its span or report on the stop check (IsInterrupted):
  // the case is abandoned and the rest skipped, as StopNow does. False for
  // any other status.
  bool StoppedBy(benchmark::State& state, const absl::Status& status);
  // The entry's workload, prepared now unless it is the one held; null when
  // preparing failed (entry.failure says why).
  Workload* Activate(Entry& entry);
  void NoteMinTime(const TimedCase& c);
  // Checks the stop check; true (and the state skipped) when the run stops.
  bool StopNow(benchmark::State& state);
  void Skip(benchmark::State& state, const Entry& entry, const absl::Status& why);
  // The repetition's step times (and ranks' arrivals) kept for the JSON.
  void KeepStepTimes(const Entry& entry, const Workload& workload);
  // After timed step `done` of `total` (outside the timed interval): the
  // progress line, when due.
  void DisplayProgress(const Entry& entry, Workload& workload, int64_t done, int64_t total);

  TimingSettings timing_;
  Progress progress_;
  std::vector<std::unique_ptr<Entry>> entries_;
  // The one prepared case: Google Benchmark runs a case's repetitions back
  // to back, so a case is prepared once and released when the next starts
  // (with --benchmark_enable_random_interleaving it is prepared again).
  const Entry* active_ = nullptr;
  std::unique_ptr<Workload> workload_;
  std::optional<Timer> timer_;
  std::set<std::string> noted_families_;
  std::function<bool()> stop_check_;
  std::function<bool(bool)> agree_;
  std::function<void(const std::string&, const absl::Status&)> failure_hook_;
  mutable std::mutex current_case_mutex_;
  std::string current_case_;
  bool stopped_ = false;
  bool verbose_ = false;
  PowerSensors* power_sensors_ = nullptr;
  std::chrono::milliseconds power_period_{0};
  std::set<const Entry*> reported_skips_;  // verbose: each case's reason once
  std::set<const Entry*> failed_entries_;
  std::vector<std::string> failed_cases_;
};

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_HARNESS_H_
