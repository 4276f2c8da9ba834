#include "bench/harness/harness.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "bench/harness/iteration_stats.h"
#include "bench/harness/step_times.h"
#include "core/compile_log.h"
#include "core/status.h"

namespace cnnbench::bench {
namespace {

// The value of `--<name>=value`, Google Benchmark 1.7.1's only flag syntax.
std::optional<std::string> FlagValue(absl::string_view arg, absl::string_view name) {
  if (!absl::ConsumePrefix(&arg, "--") || !absl::ConsumePrefix(&arg, name) ||
      !absl::ConsumePrefix(&arg, "="))
    return std::nullopt;
  return std::string(arg);
}

// The flag's value from the command line (the last one wins), else from the
// environment variable Google Benchmark reads it from (BENCHMARK_<NAME>).
// `where` says which, for messages.
std::optional<std::string> UserValue(int argc, const char* const* argv, absl::string_view name,
                                     std::string* where) {
  std::optional<std::string> value;
  for (int i = 1; i < argc; ++i) {
    if (auto v = FlagValue(argv[i], name)) {
      value = v;
      *where = absl::StrCat("--", name);
    }
  }
  if (value) return value;
  const std::string variable = absl::AsciiStrToUpper(name);
  const char* env = std::getenv(variable.c_str());
  if (env == nullptr || *env == '\0') return std::nullopt;
  *where = variable;
  return std::string(env);
}

// Times one iteration of `workload` with `timer` (on the workload's stream).
absl::StatusOr<double> TimeIteration(Workload& workload, Timer& timer) {
  RETURN_IF_ERROR(timer.Start());
  absl::Status run = workload.Run();
  if (!run.ok()) return run;  // unannotated: the workload's message is the skip reason
  RETURN_IF_ERROR(timer.Stop());
  return timer.ElapsedSeconds();
}

// Times `count` iterations of `workload` as one span.
absl::StatusOr<double> TimeSpan(Workload& workload, Timer& timer, int64_t count) {
  RETURN_IF_ERROR(timer.Start());
  absl::Status run = workload.RunIterations(count);
  if (!run.ok()) return run;
  RETURN_IF_ERROR(timer.Stop());
  return timer.ElapsedSeconds();
}

}  // namespace

absl::Status Workload::RunIterations(int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    absl::Status run = Run();
    if (!run.ok()) return run;
  }
  return absl::OkStatus();
}

std::string SkipMessage(const absl::Status& status) {
  // "bench/cases/train/train_cases.cc:73: " and the like, wherever a
  // RETURN_IF_ERROR put one: the one rule for stripping them (core/status.h).
  std::string message = WithoutSourceLocations(status.message());
  std::string kind;
  if (IsOutOfMemory(status)) {
    kind = "OOM: ";
  } else if (absl::StrContains(message, "unsupported: ")) {
    kind = "unsupported: ";
  } else if (IsCompileDeadline(status)) {
    kind = kCompileDeadlinePrefix;
  }
  if (kind.empty()) return message;
  absl::StrReplaceAll({{kind, ""}}, &message);
  return kind + message;
}

namespace {
std::mutex& UnwrittenMutex() {
  static std::mutex mutex;
  return mutex;
}
std::vector<std::string>& Unwritten() {
  static std::vector<std::string> unwritten;
  return unwritten;
}
}  // namespace

void NoteUnwrittenOutput(const std::string& case_name, const absl::Status& why) {
  const std::string what = absl::StrCat(case_name, ": ", SkipMessage(why));
  std::fprintf(stderr, "cnnbench: warning: %s; the case's figures are kept\n", what.c_str());
  std::fflush(stderr);
  std::lock_guard<std::mutex> lock(UnwrittenMutex());
  Unwritten().push_back(what);
}

std::vector<std::string> UnwrittenOutputs() {
  std::lock_guard<std::mutex> lock(UnwrittenMutex());
  return Unwritten();
}

absl::Status InterruptedError() { return absl::CancelledError(kInterruptedMessage); }

bool IsInterrupted(const absl::Status& status) {
  return status.code() == absl::StatusCode::kCancelled &&
         absl::EndsWith(status.message(), kInterruptedMessage);
}

bool IsCaseFailure(const absl::Status& status) {
  if (status.ok()) return false;
  const std::string message = SkipMessage(status);
  return message != kInterruptedMessage && !absl::StartsWith(message, "unsupported: ") &&
         !absl::StartsWith(message, "OOM: ") && !absl::StartsWith(message, kCompileDeadlinePrefix);
}

int Progress::Add(const std::string& name) {
  names_.push_back(name);
  announced_.push_back(false);
  position_.push_back(static_cast<int>(names_.size()));
  selected_count_ = static_cast<int>(names_.size());
  return static_cast<int>(names_.size()) - 1;
}

void Progress::Select(const std::vector<bool>& selected) {
  selected_count_ = 0;
  for (size_t i = 0; i < position_.size(); ++i)
    position_[i] = i < selected.size() && selected[i] ? ++selected_count_ : 0;
}

int Progress::started() const {
  int count = 0;
  for (size_t i = 0; i < announced_.size(); ++i) count += announced_[i] && position_[i] > 0;
  return count;
}

void Progress::Announce(int index) {
  if (announced_[index]) return;
  announced_[index] = true;
  if (quiet_) return;
  std::fprintf(stderr, "[%d/%d] %s\n", position_[index], selected_count_, names_[index].c_str());
  std::fflush(stderr);
}

std::optional<std::string> BenchmarkFlagValue(int argc, const char* const* argv,
                                              absl::string_view name) {
  std::string where;
  return UserValue(argc, argv, name, &where);
}

absl::StatusOr<BenchmarkTimingFlags> ReadBenchmarkTimingFlags(int argc, const char* const* argv) {
  BenchmarkTimingFlags flags;
  std::string where;
  if (auto text = UserValue(argc, argv, "benchmark_repetitions", &where)) {
    int value = 0;
    if (!absl::SimpleAtoi(*text, &value) || value < 1)
      return absl::InvalidArgumentError(
          absl::StrCat(where, "=", *text, ": repetitions must be an integer >= 1"));
    flags.repetitions = value;
  }
  if (auto text = UserValue(argc, argv, "benchmark_min_time", &where)) {
    double value = 0;
    if (!absl::SimpleAtod(*text, &value) || !std::isfinite(value) || value <= 0)
      return absl::InvalidArgumentError(absl::StrCat(
          where, "=", *text, ": the min time must be a number of seconds > 0 (e.g. 0.5)"));
    flags.min_time = value;
  }
  return flags;
}

void Harness::Register(TimedCase c) {
  auto entry = std::make_unique<Entry>();
  entry->index = static_cast<int>(entries_.size());
  entry->progress_index = progress_.Add(c.name);
  entry->spec = std::move(c);
  Entry* e = entry.get();
  entries_.push_back(std::move(entry));
  benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(
      e->spec.name.c_str(), [this, e](benchmark::State& state) { RunCase(state, *e); });
  b->UseManualTime()->Unit(e->spec.unit)->Repetitions(timing_.repetitions);
  if (e->spec.iterations > 0) {
    b->Iterations(e->spec.iterations);
  } else {
    b->MinTime(timing_.min_time);
  }
}

std::string Harness::InstanceName(int index) const {
  // Google Benchmark 1.7.1's BenchmarkName: the name, then min_time,
  // iterations, repeats and the time type, '/'-separated.
  const TimedCase& c = entries_[index]->spec;
  std::string name = c.name;
  if (c.iterations > 0) {
    absl::StrAppend(&name, "/iterations:", c.iterations);
  } else {
    absl::StrAppend(&name, absl::StrFormat("/min_time:%0.3f", timing_.min_time));
  }
  absl::StrAppend(&name, "/repeats:", timing_.repetitions, "/manual_time");
  return name;
}

void Harness::Release() {
  timer_.reset();  // its events before the stream they were recorded on
  workload_.reset();
  active_ = nullptr;
}

Workload* Harness::Activate(Entry& entry) {
  {
    std::lock_guard<std::mutex> lock(current_case_mutex_);
    current_case_ = entry.spec.name;
  }
  if (active_ == &entry) return workload_.get();
  Release();  // the previous case's memory goes before this one allocates
  if (!entry.failure.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<Workload>> workload = entry.spec.prepare();
  if (!workload.ok()) {
    entry.failure = workload.status();
    return nullptr;
  }
  absl::StatusOr<Timer> timer = Timer::Create((*workload)->stream());
  if (!timer.ok()) {
    entry.failure = timer.status();
    return nullptr;
  }
  workload_ = *std::move(workload);
  workload_->SetStopCheck(stop_check_);
  timer_.emplace(*std::move(timer));
  active_ = &entry;
  return workload_.get();
}

void Harness::NoteMinTime(const TimedCase& c) {
  if (!timing_.min_time_from_user || c.iterations == 0) return;
  if (!noted_families_.insert(c.family).second) return;
  std::fprintf(stderr,
               "cnnbench: --benchmark_min_time does not apply to %s cases: each repetition "
               "runs a fixed count (%lld); set it with %s\n",
               c.family.c_str(), static_cast<long long>(c.iterations), c.iterations_flag.c_str());
  std::fflush(stderr);
}

bool Harness::StopNow(benchmark::State& state) {
  if (!stopped_) {
    const bool here = stop_check_ && stop_check_();
    if (!(agree_ ? agree_(here) : here)) return false;
  }
  stopped_ = true;
  Release();  // abandoned: its memory goes now
  state.SkipWithError(kInterruptedMessage);
  return true;
}

bool Harness::StoppedBy(benchmark::State& state, const absl::Status& status) {
  if (!IsInterrupted(status)) return false;
  // The ranks' span left at the same call on their agreed view: one more
  // agreement, at the same point on every rank, tells each which signal
  // it was and where it arrived.
  if (agree_ && !stopped_) agree_(stop_check_ && stop_check_());
  stopped_ = true;
  Release();
  state.SkipWithError(kInterruptedMessage);
  return true;
}

void Harness::Skip(benchmark::State& state, const Entry& entry, const absl::Status& why) {
  if (verbose_ && reported_skips_.insert(&entry).second) {
    std::fprintf(stderr, "cnnbench: %s skipped: %s\n", entry.spec.name.c_str(),
                 std::string(why.message()).c_str());
    std::fflush(stderr);
  }
  if (IsCaseFailure(why) && failed_entries_.insert(&entry).second) {
    failed_cases_.push_back(entry.spec.name);
    if (failure_hook_) failure_hook_(entry.spec.name, why);
  }
  state.SkipWithError(SkipMessage(why).c_str());
}

void Harness::RunCase(benchmark::State& state, Entry& entry) {
  if (StopNow(state)) return;
  progress_.Announce(entry.progress_index);
  ++entry.repetition;
  NoteMinTime(entry.spec);
  Workload* workload = Activate(entry);
  if (workload == nullptr) {
    Skip(state, entry, entry.failure);
    return;
  }
  std::vector<double>& times = workload->iteration_seconds_;
  times.clear();
  // Power over the timed span: the sampler's thread starts before the
  // first timed iteration and stops after the last, outside them.
  std::unique_ptr<PowerSampler> sampler;
  if (power_sensors_ != nullptr && power_period_.count() > 0) {
    sampler =
        std::make_unique<PowerSampler>(*power_sensors_, workload->gpu_ordinals(), power_period_);
    sampler->Start();
  }
  int64_t timed_steps = 0;
  if (entry.spec.time_span && entry.spec.iterations > 0) {
    if (StopNow(state)) return;
    const int64_t count = static_cast<int64_t>(state.max_iterations);
    absl::StatusOr<double> seconds = TimeSpan(*workload, *timer_, count);
    if (!seconds.ok() && StoppedBy(state, seconds.status())) return;
    timed_steps = count;
    if (!seconds.ok()) entry.failure = seconds.status();
    if (seconds.ok()) times.push_back(*seconds);
    for (auto _ : state) {
      if (!seconds.ok()) {
        Skip(state, entry, entry.failure);
        break;
      }
      state.SetIterationTime(*seconds / count);
    }
  } else {
    for (auto _ : state) {
      if (StopNow(state)) return;
      absl::StatusOr<double> seconds = TimeIteration(*workload, *timer_);
      if (!seconds.ok() && StoppedBy(state, seconds.status())) return;
      if (!seconds.ok()) {
        // A case that failed while running fails its later repetitions the same way.
        entry.failure = seconds.status();
        Skip(state, entry, entry.failure);
        break;
      }
      state.SetIterationTime(*seconds);
      times.push_back(*seconds);
      // Manual time: only the timer's seconds count, not this.
      absl::Status between = workload->BetweenIterations();
      if (!between.ok()) {
        entry.failure = between;
        Skip(state, entry, entry.failure);
        break;
      }
      DisplayProgress(entry, *workload, static_cast<int64_t>(times.size()),
                      static_cast<int64_t>(state.max_iterations));
    }
  }
  if (!entry.spec.time_span || entry.spec.iterations == 0)
    timed_steps = static_cast<int64_t>(times.size());
  workload->power_ = sampler != nullptr ? sampler->Stop() : PowerSummary{};
  sampler.reset();
  if (!entry.failure.ok()) {
    Release();
    return;
  }
  absl::Status reported = workload->Report(state);
  if (StoppedBy(state, reported)) return;
  if (!reported.ok()) {
    Skip(state, entry, reported);
    return;
  }
  AddPowerCounters(state, workload->power_, timed_steps, workload->items_per_iteration());
  KeepStepTimes(entry, *workload);
}

void Harness::KeepStepTimes(const Entry& entry, const Workload& workload) {
  if (!timing_.keep_step_times || !entry.spec.keeps_step_times) return;
  std::vector<double> steps = workload.StepSeconds();
  if (!steps.empty())
    StepTimes::Global().Add(InstanceName(entry.index), std::move(steps),
                            workload.RankArrivalSeconds());
}

void Harness::DisplayProgress(const Entry& entry, Workload& workload, int64_t done, int64_t total) {
  if (progress_.quiet() || timing_.display_every == 0) return;
  const double items = workload.items_per_iteration();
  if (!(items > 0)) return;
  const std::vector<double>& times = workload.iteration_seconds();
  int64_t every = timing_.display_every;
  if (every == TimingSettings::kDisplayAuto) {
    // Decided on the repetition's first timed step.
    every = isatty(fileno(stderr)) && !times.empty() && times.front() * total > 10.0 ? 10 : 0;
  }
  if (every <= 0 || done % every != 0) return;
  absl::StatusOr<RateStats> rate = SummarizeRates(times, items);
  if (!rate.ok()) return;
  const std::string note = workload.ProgressNote();
  // Which repetition, where there are several (each restarts its steps).
  const std::string repetition =
      timing_.repetitions > 1
          ? absl::StrCat(" repetition ", entry.repetition, "/", timing_.repetitions)
          : std::string();
  std::fprintf(stderr, "%s%s step %lld/%lld  images/sec: %.1f +/- %.1f (jitter = %.1f)%s%s\n",
               entry.spec.name.c_str(), repetition.c_str(), static_cast<long long>(done),
               static_cast<long long>(total), rate->mean, rate->uncertainty, rate->jitter,
               note.empty() ? "" : "  ", note.c_str());
  std::fflush(stderr);
}

}  // namespace cnnbench::bench
