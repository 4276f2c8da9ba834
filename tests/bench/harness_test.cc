// The timing harness in process, with workloads that count what is done to
// them: a case is prepared once and released before the next one prepares
// (and at the end), the repetitions, min time and fixed iteration counts are
// applied, failures skip with their reason, each iteration is timed around
// the work, and Google Benchmark's timing flags are read as it reads them.
#include "bench/harness/harness.h"

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bench/harness/step_times.h"
#include "benchmark/benchmark.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "tests/bench/recorder.h"

namespace cnnbench::bench {
namespace {

// What happened to one case's workloads.
struct Counts {
  int prepared = 0;
  int destroyed = 0;
  int64_t runs = 0;
  int64_t spans = 0;  // RunIterations calls
  int live() const { return prepared - destroyed; }
};

struct Behaviour {
  std::chrono::microseconds sleep{0};      // per Run (a lower bound on its time)
  int64_t fail_at_run = -1;                // Run number (0-based) that fails
  absl::Status report = absl::OkStatus();  // what Report returns
};

class CountingWorkload : public Workload {
 public:
  CountingWorkload(Counts& counts, const Behaviour& behaviour)
      : counts_(counts), behaviour_(behaviour) {
    ++counts_.prepared;
  }
  ~CountingWorkload() override { ++counts_.destroyed; }
  const Stream& stream() const override { return stream_; }
  absl::Status Run() override {
    if (counts_.runs++ == behaviour_.fail_at_run)
      return absl::UnimplementedError("unsupported: the workload's own reason");
    if (behaviour_.sleep.count() > 0) std::this_thread::sleep_for(behaviour_.sleep);
    return absl::OkStatus();
  }
  absl::Status RunIterations(int64_t count) override {
    ++counts_.spans;
    return Workload::RunIterations(count);
  }
  absl::Status Report(benchmark::State& state) override { return behaviour_.report; }

 private:
  Counts& counts_;
  Behaviour behaviour_;
  Stream stream_ = Stream::Cpu();
};

PrepareFunction Counting(Counts& counts, Behaviour behaviour = {}) {
  return [&counts, behaviour]() -> absl::StatusOr<std::unique_ptr<Workload>> {
    return std::unique_ptr<Workload>(new CountingWorkload(counts, behaviour));
  };
}

TimedCase Fixed(const std::string& name, int64_t iterations, PrepareFunction prepare) {
  TimedCase c;
  c.name = name;
  c.family = "train";
  c.iterations = iterations;
  c.iterations_flag = "--steps";
  c.prepare = std::move(prepare);
  return c;
}

TimedCase TimeBased(const std::string& name, PrepareFunction prepare) {
  TimedCase c;
  c.name = name;
  c.family = "gemm";
  c.unit = benchmark::kMicrosecond;
  c.prepare = std::move(prepare);
  return c;
}

// Registers nothing itself; runs what the test registered, then forgets it
// (the harness the lambdas point into dies with the test).
class HarnessTest : public ::testing::Test {
 protected:
  void SetUp() override { benchmark::ClearRegisteredBenchmarks(); }
  void TearDown() override { benchmark::ClearRegisteredBenchmarks(); }
  Recorder RunAll() {
    Recorder recorder;
    benchmark::RunSpecifiedBenchmarks(&recorder, "^harness_test/");
    return recorder;
  }
};

TEST_F(HarnessTest, PreparesOnceAndReleasesBeforeTheNextCase) {
  Harness harness(TimingSettings{.repetitions = 3});
  Counts a, b;
  int a_live_when_b_prepared = -1;
  harness.Register(Fixed("harness_test/a", 4, Counting(a)));
  PrepareFunction make_b = Counting(b);
  harness.Register(Fixed("harness_test/b", 2, [&] {
    a_live_when_b_prepared = a.live();
    return make_b();
  }));
  Recorder recorder = RunAll();

  EXPECT_EQ(a.prepared, 1);
  EXPECT_EQ(b.prepared, 1);
  EXPECT_EQ(a_live_when_b_prepared, 0) << "a's workload was still held when b prepared";
  EXPECT_EQ(a.runs, 3 * 4);
  EXPECT_EQ(b.runs, 3 * 2);
  EXPECT_EQ(b.live(), 1) << "the last case is held until Release()";
  harness.Release();
  EXPECT_EQ(b.live(), 0);

  const std::vector<BenchRun> runs = recorder.Of("harness_test/a");
  ASSERT_EQ(runs.size(), 3u);
  for (const BenchRun& r : runs) {
    EXPECT_FALSE(r.error_occurred) << r.error_message;
    EXPECT_EQ(r.iterations, 4);
    EXPECT_EQ(r.repetitions, 3);
  }
}

// What a workload sees of its own iterations: each one's seconds for the
// repetition being reported (at least the work's sleep), and a call between
// every two, outside the timed interval; an error there skips the case.
class IterationWatcher : public Workload {
 public:
  explicit IterationWatcher(int64_t fail_between_at) : fail_between_at_(fail_between_at) {}
  const Stream& stream() const override { return stream_; }
  absl::Status Run() override {
    ++runs;
    std::this_thread::sleep_for(std::chrono::microseconds(200 * runs));
    return absl::OkStatus();
  }
  absl::Status BetweenIterations() override {
    if (between++ == fail_between_at_)
      return absl::DataLossError("the next batch could not be read");
    return absl::OkStatus();
  }
  absl::Status Report(benchmark::State& state) override {
    reported.push_back(iteration_seconds());
    return absl::OkStatus();
  }
  static inline int64_t runs = 0, between = 0;
  static inline std::vector<std::vector<double>> reported;

 private:
  int64_t fail_between_at_;
  Stream stream_ = Stream::Cpu();
};

TEST_F(HarnessTest, AWorkloadSeesEachIterationsSecondsAndIsCalledBetweenThem) {
  IterationWatcher::runs = IterationWatcher::between = 0;
  IterationWatcher::reported.clear();
  Harness harness(TimingSettings{.repetitions = 2});
  harness.Register(Fixed("harness_test/watched", 3, [] {
    return absl::StatusOr<std::unique_ptr<Workload>>(std::make_unique<IterationWatcher>(-1));
  }));
  Recorder recorder = RunAll();
  harness.Release();
  ASSERT_EQ(IterationWatcher::reported.size(), 2u);
  EXPECT_EQ(IterationWatcher::between, 6);
  int64_t run = 0;
  for (const std::vector<double>& seconds : IterationWatcher::reported) {
    ASSERT_EQ(seconds.size(), 3u) << "one entry per iteration of this repetition only";
    for (double s : seconds) EXPECT_GE(s, 200e-6 * ++run);
  }
}

// --keep_step_times: each repetition's iteration seconds are kept under the
// run's instance name, in order, for the JSON reporter; a case that does
// not keep them, or a run with the flag off, keeps nothing.
TEST_F(HarnessTest, KeepsEachRepetitionsStepTimesUnderItsInstanceName) {
  for (bool keep : {true, false}) {
    IterationWatcher::runs = IterationWatcher::between = 0;
    IterationWatcher::reported.clear();
    StepTimes::Global().Clear();
    Harness harness(TimingSettings{.repetitions = 2, .keep_step_times = keep});
    TimedCase kept = Fixed("harness_test/kept", 3, [] {
      return absl::StatusOr<std::unique_ptr<Workload>>(std::make_unique<IterationWatcher>(-1));
    });
    kept.keeps_step_times = true;
    harness.Register(std::move(kept));
    harness.Register(Fixed("harness_test/not_kept", 2, [] {
      return absl::StatusOr<std::unique_ptr<Workload>>(std::make_unique<IterationWatcher>(-1));
    }));
    Recorder recorder = RunAll();
    harness.Release();
    ASSERT_EQ(IterationWatcher::reported.size(), 4u);
    if (keep) {
      EXPECT_EQ(StepTimes::Global().Take(harness.InstanceName(0)), IterationWatcher::reported[0]);
      EXPECT_EQ(StepTimes::Global().Take(harness.InstanceName(0)), IterationWatcher::reported[1]);
    }
    EXPECT_FALSE(StepTimes::Global().Take(harness.InstanceName(0)).has_value()) << keep;
    EXPECT_FALSE(StepTimes::Global().Take(harness.InstanceName(1)).has_value()) << keep;
    benchmark::ClearRegisteredBenchmarks();
  }
}

// --display_every: a progress line every N timed steps on stderr, with the
// rate over the steps so far and the workload's note, asked for only when
// a line is due; 0 prints nothing, and so does auto when stderr is not a
// terminal (here a file).
class ProgressWorkload : public IterationWatcher {
 public:
  ProgressWorkload() : IterationWatcher(-1) {}
  double items_per_iteration() const override { return 4; }
  std::string ProgressNote() override { return absl::StrCat("loss ", ++notes); }
  static inline int notes = 0;
};

TEST_F(HarnessTest, DisplaysProgressEveryNTimedSteps) {
  for (int every : {2, 0, TimingSettings::kDisplayAuto}) {
    ProgressWorkload::notes = 0;
    Harness harness(TimingSettings{.repetitions = 1, .display_every = every});
    harness.Register(Fixed("harness_test/progress", 5, [] {
      return absl::StatusOr<std::unique_ptr<Workload>>(std::make_unique<ProgressWorkload>());
    }));
    ::testing::internal::CaptureStderr();
    Recorder recorder = RunAll();
    const std::string err = ::testing::internal::GetCapturedStderr();
    harness.Release();
    benchmark::ClearRegisteredBenchmarks();
    if (every != 2) {
      EXPECT_FALSE(absl::StrContains(err, "images/sec")) << every << ": " << err;
      EXPECT_EQ(ProgressWorkload::notes, 0) << every;
      continue;
    }
    EXPECT_TRUE(absl::StrContains(err, "harness_test/progress step 2/5  images/sec: ")) << err;
    EXPECT_TRUE(absl::StrContains(err, "(jitter = ")) << err;
    EXPECT_TRUE(absl::StrContains(err, "  loss 1\n")) << err;
    EXPECT_TRUE(absl::StrContains(err, "step 4/5  images/sec: ")) << err;
    EXPECT_TRUE(absl::StrContains(err, "  loss 2\n")) << err;
    EXPECT_FALSE(absl::StrContains(err, "step 5/5")) << err;
    EXPECT_EQ(ProgressWorkload::notes, 2);
  }
}

// With several repetitions each progress line names its repetition (each
// restarts its steps at 1).
TEST_F(HarnessTest, ProgressLinesNameTheRepetition) {
  Harness harness(TimingSettings{.repetitions = 2, .display_every = 2});
  harness.Register(Fixed("harness_test/progress", 5, [] {
    return absl::StatusOr<std::unique_ptr<Workload>>(std::make_unique<ProgressWorkload>());
  }));
  ::testing::internal::CaptureStderr();
  RunAll();
  const std::string err = ::testing::internal::GetCapturedStderr();
  harness.Release();
  benchmark::ClearRegisteredBenchmarks();
  EXPECT_TRUE(absl::StrContains(err, "harness_test/progress repetition 1/2 step 2/5  images/sec: "))
      << err;
  EXPECT_TRUE(absl::StrContains(err, "harness_test/progress repetition 2/2 step 4/5  images/sec: "))
      << err;
}

TEST_F(HarnessTest, AnErrorBetweenIterationsSkipsTheCaseWithItsReason) {
  IterationWatcher::runs = IterationWatcher::between = 0;
  IterationWatcher::reported.clear();
  Harness harness(TimingSettings{.repetitions = 2});
  harness.Register(Fixed("harness_test/broken", 3, [] {
    return absl::StatusOr<std::unique_ptr<Workload>>(std::make_unique<IterationWatcher>(1));
  }));
  Recorder recorder = RunAll();
  harness.Release();
  const std::vector<BenchRun> runs = recorder.Of("harness_test/broken");
  ASSERT_EQ(runs.size(), 2u);
  for (const BenchRun& r : runs) {
    EXPECT_TRUE(r.error_occurred);
    EXPECT_TRUE(absl::StrContains(r.error_message, "the next batch could not be read"))
        << r.error_message;
  }
  EXPECT_TRUE(IterationWatcher::reported.empty());
}

TEST_F(HarnessTest, TimeBasedCasesGetTheMinTimeAndAreStillPreparedOnce) {
  Harness harness(TimingSettings{.repetitions = 2, .min_time = 0.002});
  Counts counts;
  harness.Register(
      TimeBased("harness_test/t", Counting(counts, {.sleep = std::chrono::microseconds(100)})));
  Recorder recorder = RunAll();
  harness.Release();

  // Google Benchmark calls the case several times to find its iteration
  // count; the workload is made once all the same.
  EXPECT_EQ(counts.prepared, 1);
  EXPECT_EQ(counts.live(), 0);
  const std::vector<BenchRun> runs = recorder.Of("harness_test/t");
  ASSERT_EQ(runs.size(), 2u);
  for (const BenchRun& r : runs) {
    EXPECT_FALSE(r.error_occurred) << r.error_message;
    EXPECT_EQ(r.repetitions, 2);
    EXPECT_NE(r.benchmark_name().find("/min_time:0.002"), std::string::npos) << r.benchmark_name();
  }
}

TEST_F(HarnessTest, EachIterationIsTimedAroundTheWork) {
  // Sleeping is a lower bound the OS guarantees: the manual time of an
  // iteration that sleeps 2 ms cannot be less, whatever the machine does.
  Harness harness(TimingSettings{.repetitions = 1});
  Counts counts;
  const auto sleep = std::chrono::milliseconds(2);
  harness.Register(Fixed("harness_test/s", 3, Counting(counts, {.sleep = sleep})));
  Recorder recorder = RunAll();
  harness.Release();
  const std::vector<BenchRun> runs = recorder.Of("harness_test/s");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_GE(runs[0].real_accumulated_time, 3 * std::chrono::duration<double>(sleep).count());
}

TEST_F(HarnessTest, SpanTimingRunsTheIterationsInOneGo) {
  Harness harness(TimingSettings{.repetitions = 2});
  Counts counts;
  const auto sleep = std::chrono::milliseconds(1);
  TimedCase c = Fixed("harness_test/span", 5, Counting(counts, {.sleep = sleep}));
  c.family = "allreduce";
  c.time_span = true;
  harness.Register(std::move(c));
  Recorder recorder = RunAll();
  harness.Release();
  EXPECT_EQ(counts.spans, 2);  // once per repetition
  EXPECT_EQ(counts.runs, 2 * 5);
  const std::vector<BenchRun> runs = recorder.Of("harness_test/span");
  ASSERT_EQ(runs.size(), 2u);
  for (const BenchRun& r : runs) {
    EXPECT_EQ(r.iterations, 5);
    EXPECT_GE(r.real_accumulated_time, 5 * std::chrono::duration<double>(sleep).count());
  }
}

TEST_F(HarnessTest, PrepareFailureSkipsEveryRepetitionWithItsReason) {
  Harness harness(TimingSettings{.repetitions = 3});
  int calls = 0;
  harness.Register(Fixed("harness_test/oom", 2, [&]() -> absl::StatusOr<std::unique_ptr<Workload>> {
    ++calls;
    return AnnotateStatus(OutOfMemoryError("1 TB arena"), "plan.cc", 7);
  }));
  Recorder recorder = RunAll();
  EXPECT_EQ(calls, 1) << "a case that failed to prepare is not prepared again";
  const std::vector<BenchRun> runs = recorder.Of("harness_test/oom");
  ASSERT_EQ(runs.size(), 3u);
  for (const BenchRun& r : runs) {
    EXPECT_TRUE(r.error_occurred);
    EXPECT_TRUE(absl::StartsWith(r.error_message, "OOM")) << r.error_message;
    EXPECT_NE(r.error_message.find("1 TB arena"), std::string::npos) << r.error_message;
  }
}

TEST_F(HarnessTest, RunFailureSkipsAndReleasesTheWorkload) {
  Harness harness(TimingSettings{.repetitions = 2});
  Counts counts;
  harness.Register(Fixed("harness_test/fail", 3, Counting(counts, {.fail_at_run = 1})));
  Recorder recorder = RunAll();
  EXPECT_EQ(counts.prepared, 1);
  EXPECT_EQ(counts.live(), 0) << "a failed workload is released at once";
  EXPECT_EQ(counts.runs, 2) << "the second repetition does not run again";
  const std::vector<BenchRun> runs = recorder.Of("harness_test/fail");
  ASSERT_EQ(runs.size(), 2u);
  for (const BenchRun& r : runs) {
    EXPECT_TRUE(r.error_occurred);
    EXPECT_EQ(r.error_message, "unsupported: the workload's own reason");
  }
}

TEST_F(HarnessTest, ReportErrorSkipsTheRepetition) {
  Harness harness(TimingSettings{.repetitions = 1});
  Counts counts;
  harness.Register(Fixed("harness_test/check", 2,
                         Counting(counts, {.report = absl::InternalError("result check failed")})));
  Recorder recorder = RunAll();
  harness.Release();
  const std::vector<BenchRun> runs = recorder.Of("harness_test/check");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].error_occurred);
  EXPECT_EQ(runs[0].error_message, "result check failed");
}

TEST_F(HarnessTest, OnlyErrorsThatAreNeitherUnsupportedNorOomAreFailures) {
  Harness harness(TimingSettings{.repetitions = 2});
  Counts unsupported, wrong, oom, fine;
  harness.Register(Fixed("harness_test/unsupported", 3, Counting(unsupported, {.fail_at_run = 0})));
  harness.Register(Fixed("harness_test/wrong", 2,
                         Counting(wrong, {.report = AnnotateStatus(
                                              absl::InternalError("result wrong at (3, 4)"),
                                              "bench/cases/peak/peak_cases.cc", 9)})));
  harness.Register(Fixed("harness_test/oom", 2, [&]() -> absl::StatusOr<std::unique_ptr<Workload>> {
    return AnnotateStatus(OutOfMemoryError("1 TB arena"), "plan.cc", 7);
  }));
  harness.Register(Fixed("harness_test/fine", 2, Counting(fine)));
  RunAll();
  harness.Release();
  // Named once although both repetitions failed; the others are not failures.
  EXPECT_EQ(harness.failed_cases(), std::vector<std::string>{"harness_test/wrong"});
  EXPECT_TRUE(IsCaseFailure(absl::InternalError("CUDNN_STATUS_INTERNAL_ERROR")));
  EXPECT_TRUE(IsCaseFailure(absl::DataLossError("corrupt record 3 in train-00000-of-00001")));
  EXPECT_FALSE(IsCaseFailure(AnnotateStatus(absl::UnimplementedError("unsupported: no GPU"),
                                            "bench/suite/suite.cc", 1)));
  EXPECT_FALSE(IsCaseFailure(OutOfMemoryError("device allocation of 80 GB")));
  EXPECT_FALSE(IsCaseFailure(absl::CancelledError(kInterruptedMessage)));
  EXPECT_FALSE(IsCaseFailure(absl::OkStatus()));
}

TEST_F(HarnessTest, StopCheckAbandonsTheRunningCaseAndSkipsTheRest) {
  Harness harness(TimingSettings{.repetitions = 2});
  Counts a, b;
  bool stop = false;
  harness.SetStopCheck([&] { return stop; });
  harness.Register(Fixed("harness_test/a", 3, [&]() -> absl::StatusOr<std::unique_ptr<Workload>> {
    // The signal arrives while a's second iteration runs.
    class Stopping : public CountingWorkload {
     public:
      Stopping(Counts& counts, bool& stop) : CountingWorkload(counts, {}), stop_(stop) {}
      absl::Status Run() override {
        if (++runs_ == 2) stop_ = true;
        return CountingWorkload::Run();
      }

     private:
      bool& stop_;
      int runs_ = 0;
    };
    return std::unique_ptr<Workload>(new Stopping(a, stop));
  }));
  harness.Register(Fixed("harness_test/b", 3, Counting(b)));
  Recorder recorder = RunAll();

  EXPECT_TRUE(harness.stopped());
  EXPECT_EQ(a.runs, 2) << "no iteration after the stop";
  EXPECT_EQ(a.live(), 0) << "the abandoned case is released";
  EXPECT_EQ(b.prepared, 0) << "no case prepares after the stop";
  for (const BenchRun& r : recorder.Of("harness_test/b")) {
    EXPECT_TRUE(r.error_occurred);
    EXPECT_EQ(r.error_message, kInterruptedMessage);
  }
}

TEST_F(HarnessTest, InstanceNamesAreGoogleBenchmarksNames) {
  Harness harness(TimingSettings{.repetitions = 2, .min_time = 0.001});
  Counts a, b;
  harness.Register(Fixed("harness_test/a", 3, Counting(a)));
  harness.Register(TimeBased("harness_test/b", Counting(b)));
  Recorder recorder = RunAll();
  ASSERT_EQ(harness.case_count(), 2);
  ASSERT_FALSE(recorder.Of("harness_test/a").empty());
  ASSERT_FALSE(recorder.Of("harness_test/b").empty());
  EXPECT_EQ(recorder.Of("harness_test/a")[0].run_name.str(), harness.InstanceName(0));
  EXPECT_EQ(recorder.Of("harness_test/b")[0].run_name.str(), harness.InstanceName(1));
}

TEST(SkipMessageTest, StartsWithTheReasonOnceWithoutSourceLocations) {
  const absl::Status oom = AnnotateStatus(
      AnnotateStatus(OutOfMemoryError("host allocation of 8 bytes"), "train/trainer.cc", 313),
      "bench/cases/train/train_cases.cc", 73);
  EXPECT_EQ(SkipMessage(AnnotateStatus(oom, "train/trainer.cc", 97)),
            "OOM: host allocation of 8 bytes");
  EXPECT_EQ(SkipMessage(AnnotateStatus(absl::UnimplementedError("unsupported: bf16 here"),
                                       "kernels/cuda/common.cc", 10)),
            "unsupported: bf16 here");
  EXPECT_EQ(SkipMessage(absl::InternalError("plain reason")), "plain reason");
}

TEST(ProgressTest, CountsAndNumbersOnlyTheSelectedCases) {
  Progress progress;
  for (const char* name : {"a", "b", "c"}) progress.Add(name);
  progress.Select({true, false, true});
  testing::internal::CaptureStderr();
  progress.Announce(2);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "[2/2] c\n");
}

TEST_F(HarnessTest, UserMinTimeIsNotedOnceForFamiliesThatCountIterations) {
  Harness harness(TimingSettings{.repetitions = 1, .min_time = 0.001, .min_time_from_user = true});
  Counts a, b, k;
  harness.Register(Fixed("harness_test/train_a", 1, Counting(a)));
  harness.Register(Fixed("harness_test/train_b", 1, Counting(b)));
  harness.Register(TimeBased("harness_test/kernel", Counting(k)));
  ::testing::internal::CaptureStderr();
  RunAll();
  const std::string err = ::testing::internal::GetCapturedStderr();
  harness.Release();
  const std::string note = "--benchmark_min_time does not apply to train cases";
  const size_t first = err.find(note);
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_EQ(err.find(note, first + 1), std::string::npos) << "noted twice:\n" << err;
  EXPECT_NE(err.find("--steps", first), std::string::npos) << err;
  EXPECT_EQ(err.find("gemm cases"), std::string::npos) << "min time applies to gemm:\n" << err;
}

TEST_F(HarnessTest, NoNoteWithoutTheUsersMinTime) {
  Harness harness(TimingSettings{.repetitions = 1});
  Counts a;
  harness.Register(Fixed("harness_test/train", 1, Counting(a)));
  ::testing::internal::CaptureStderr();
  RunAll();
  const std::string err = ::testing::internal::GetCapturedStderr();
  harness.Release();
  EXPECT_EQ(err.find("does not apply"), std::string::npos) << err;
}

// ---- Google Benchmark's flags, read as it reads them ----

absl::StatusOr<BenchmarkTimingFlags> Read(std::vector<const char*> args) {
  args.insert(args.begin(), "bench");
  return ReadBenchmarkTimingFlags(static_cast<int>(args.size()), args.data());
}

class TimingFlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("BENCHMARK_REPETITIONS");
    unsetenv("BENCHMARK_MIN_TIME");
  }
  void TearDown() override { SetUp(); }
};

TEST_F(TimingFlagsTest, AbsentFlagsAreUnset) {
  auto flags = Read({"--preset=tiny", "--benchmark_filter=gemm"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_FALSE(flags->repetitions.has_value());
  EXPECT_FALSE(flags->min_time.has_value());
}

TEST_F(TimingFlagsTest, TheLastOneGivenWins) {
  auto flags =
      Read({"--benchmark_repetitions=2", "--benchmark_min_time=0.25", "--benchmark_repetitions=7"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->repetitions, 7);
  EXPECT_EQ(flags->min_time, 0.25);
}

TEST_F(TimingFlagsTest, OnlyTheEqualsFormIsAFlag) {
  // Google Benchmark 1.7.1 reads `--name=value` only; "-name=" or a prefix of
  // another flag is not this flag.
  auto flags = Read({"-benchmark_repetitions=3", "--benchmark_repetitions", "4",
                     "--benchmark_repetitions_x=5", "--benchmark_min_time_s=1"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_FALSE(flags->repetitions.has_value());
  EXPECT_FALSE(flags->min_time.has_value());
}

TEST_F(TimingFlagsTest, EnvironmentWhenTheCommandLineIsSilent) {
  setenv("BENCHMARK_REPETITIONS", "4", 1);
  setenv("BENCHMARK_MIN_TIME", "0.125", 1);
  auto flags = Read({});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->repetitions, 4);
  EXPECT_EQ(flags->min_time, 0.125);
  flags = Read({"--benchmark_repetitions=9"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->repetitions, 9);  // the command line wins
}

TEST_F(TimingFlagsTest, MalformedValuesNameTheFlag) {
  auto flags = Read({"--benchmark_repetitions=many"});
  ASSERT_FALSE(flags.ok());
  EXPECT_NE(flags.status().message().find("--benchmark_repetitions=many"), absl::string_view::npos)
      << flags.status();
  flags = Read({"--benchmark_repetitions=0"});
  EXPECT_FALSE(flags.ok());
  flags = Read({"--benchmark_min_time=-1"});
  ASSERT_FALSE(flags.ok());
  EXPECT_NE(flags.status().message().find("--benchmark_min_time=-1"), absl::string_view::npos)
      << flags.status();
  setenv("BENCHMARK_MIN_TIME", "soon", 1);
  flags = Read({});
  ASSERT_FALSE(flags.ok());
  EXPECT_NE(flags.status().message().find("BENCHMARK_MIN_TIME=soon"), absl::string_view::npos)
      << flags.status();
}

}  // namespace
}  // namespace cnnbench::bench
