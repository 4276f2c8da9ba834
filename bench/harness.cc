#include "bench/harness.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
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
  std::string message(status.message());
  if (IsOutOfMemory(status) && !absl::StartsWith(message, "OOM")) return "OOM: " + message;
  return message;
}

int Progress::Add(const std::string& name) {
  names_.push_back(name);
  announced_.push_back(false);
  return static_cast<int>(names_.size()) - 1;
}

void Progress::Announce(int index) {
  if (announced_[index]) return;
  announced_[index] = true;
  std::fprintf(stderr, "[%d/%zu] %s\n", index + 1, names_.size(), names_[index].c_str());
  std::fflush(stderr);
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

void Harness::Release() {
  timer_.reset();  // its events before the stream they were recorded on
  workload_.reset();
  active_ = nullptr;
}

Workload* Harness::Activate(Entry& entry) {
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

void Harness::RunCase(benchmark::State& state, Entry& entry) {
  progress_.Announce(entry.progress_index);
  NoteMinTime(entry.spec);
  Workload* workload = Activate(entry);
  if (workload == nullptr) {
    state.SkipWithError(SkipMessage(entry.failure).c_str());
    return;
  }
  if (entry.spec.time_span && entry.spec.iterations > 0) {
    const int64_t count = static_cast<int64_t>(state.max_iterations);
    absl::StatusOr<double> seconds = TimeSpan(*workload, *timer_, count);
    if (!seconds.ok()) entry.failure = seconds.status();
    for (auto _ : state) {
      if (!seconds.ok()) {
        state.SkipWithError(SkipMessage(entry.failure).c_str());
        break;
      }
      state.SetIterationTime(*seconds / count);
    }
  } else {
    for (auto _ : state) {
      absl::StatusOr<double> seconds = TimeIteration(*workload, *timer_);
      if (!seconds.ok()) {
        // A case that failed while running fails its later repetitions the same way.
        entry.failure = seconds.status();
        state.SkipWithError(SkipMessage(entry.failure).c_str());
        break;
      }
      state.SetIterationTime(*seconds);
    }
  }
  if (!entry.failure.ok()) {
    Release();
    return;
  }
  absl::Status reported = workload->Report(state);
  if (!reported.ok()) state.SkipWithError(SkipMessage(reported).c_str());
}

}  // namespace cnnbench::bench
