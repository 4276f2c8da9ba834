// The all-reduce workload on the timing harness, in process, over a local
// group whose communicators count (and, when asked, spoil) what passes
// through them: every rank makes the same fixed number of calls, warm-ups
// come before the first timed span, each rank keeps one thread for the whole
// case, the result is checked in every repetition (a wrong element skips it,
// naming the variant, rank and element) and the counters follow nccl-tests.
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "bench/harness.h"
#include "bench/suite.h"
#include "benchmark/benchmark.h"
#include "gtest/gtest.h"
#include "kernels/collectives/communicator.h"
#include "kernels/collectives/local.h"
#include "tests/bench/recorder.h"

namespace cnnbench::bench {
namespace {

// Which calls a spoiling communicator corrupts (element 3 of its result).
enum class Spoil { kNone, kOutOfPlace, kInPlace };

// What every rank's communicator saw, shared by the group.
struct Log {
  std::mutex mutex;
  std::vector<int64_t> calls;                      // per rank
  std::vector<std::set<std::thread::id>> threads;  // per rank: who called
  int64_t calls_at_first_span = -1;                // rank 0's, when the first timed span began
};

class LoggingCommunicator : public Communicator {
 public:
  LoggingCommunicator(std::unique_ptr<Communicator> inner, Log& log, int spoiled_rank, Spoil spoil)
      : inner_(std::move(inner)), log_(log), spoiled_rank_(spoiled_rank), spoil_(spoil) {}
  absl::string_view name() const override { return inner_->name(); }
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  absl::Status AllReduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                         const Stream& stream) override {
    {
      std::lock_guard<std::mutex> lock(log_.mutex);
      ++log_.calls[rank()];
      log_.threads[rank()].insert(std::this_thread::get_id());
    }
    absl::Status status = inner_->AllReduce(send, recv, count, dtype, op, stream);
    const bool in_place = send == recv;
    if (rank() == spoiled_rank_ && count > 3 &&
        ((spoil_ == Spoil::kOutOfPlace && !in_place) || (spoil_ == Spoil::kInPlace && in_place)))
      static_cast<float*>(recv)[3] += 1;
    return status;
  }
  absl::Status Broadcast(const void* send, void* recv, size_t count, DType dtype, int root,
                         const Stream& stream) override {
    return inner_->Broadcast(send, recv, count, dtype, root, stream);
  }
  absl::Status AllGather(const void* send, void* recv, size_t count, DType dtype,
                         const Stream& stream) override {
    return inner_->AllGather(send, recv, count, dtype, stream);
  }
  absl::Status ReduceScatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                             const Stream& stream) override {
    return inner_->ReduceScatter(send, recv, count, dtype, op, stream);
  }
  absl::Status Reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                      int root, const Stream& stream) override {
    return inner_->Reduce(send, recv, count, dtype, op, root, stream);
  }

 private:
  std::unique_ptr<Communicator> inner_;
  Log& log_;
  int spoiled_rank_;
  Spoil spoil_;
};

// Passes the harness's calls on and notes rank 0's call count when the
// first timed span begins.
class SpanWatcher : public Workload {
 public:
  SpanWatcher(std::unique_ptr<Workload> inner, Log& log) : inner_(std::move(inner)), log_(log) {}
  const Stream& stream() const override { return inner_->stream(); }
  absl::Status Run() override { return inner_->Run(); }
  absl::Status RunIterations(int64_t count) override {
    {
      std::lock_guard<std::mutex> lock(log_.mutex);
      if (log_.calls_at_first_span < 0) log_.calls_at_first_span = log_.calls[0];
    }
    return inner_->RunIterations(count);
  }
  absl::Status Report(benchmark::State& state) override { return inner_->Report(state); }

 private:
  std::unique_ptr<Workload> inner_;
  Log& log_;
};

struct CaseSetup {
  int ranks = 3;
  int64_t bytes = 1024;
  int warmup = 2;
  int64_t iterations = 4;
  int repetitions = 3;
  int spoiled_rank = -1;
  Spoil spoil = Spoil::kNone;
  DType dtype = DType::kF32;
};

class AllReduceCasesTest : public ::testing::Test {
 protected:
  void SetUp() override { benchmark::ClearRegisteredBenchmarks(); }
  void TearDown() override { benchmark::ClearRegisteredBenchmarks(); }

  // Runs one case as the suite registers it, over a logging group.
  std::vector<BenchRun> RunCase(const CaseSetup& s) {
    log_.calls.assign(s.ranks, 0);
    log_.threads.assign(s.ranks, {});
    Harness harness(TimingSettings{.repetitions = s.repetitions});
    TimedCase c;
    c.name = "allreduce_test/case";
    c.family = "allreduce";
    c.iterations = s.iterations;
    c.iterations_flag = "--allreduce_iters";
    c.time_span = true;
    c.unit = benchmark::kMicrosecond;
    c.prepare = [this, s]() -> absl::StatusOr<std::unique_ptr<Workload>> {
      absl::StatusOr<std::vector<std::unique_ptr<Communicator>>> local = CreateLocalGroup(s.ranks);
      if (!local.ok()) return local.status();
      std::vector<std::unique_ptr<Communicator>> group;
      for (auto& comm : *local)
        group.push_back(
            std::make_unique<LoggingCommunicator>(std::move(comm), log_, s.spoiled_rank, s.spoil));
      absl::StatusOr<std::unique_ptr<Workload>> w =
          PrepareAllReduceWorkload(std::move(group), s.bytes, s.warmup, s.dtype);
      if (!w.ok()) return w.status();
      return std::unique_ptr<Workload>(new SpanWatcher(*std::move(w), log_));
    };
    harness.Register(std::move(c));
    Recorder recorder;
    benchmark::RunSpecifiedBenchmarks(&recorder, "^allreduce_test/");
    harness.Release();  // joins the rank threads
    return recorder.iterations;
  }

  Log log_;
};

TEST_F(AllReduceCasesTest, EveryRankMakesTheSameFixedCallsWarmUpFirst) {
  const CaseSetup s;
  const std::vector<BenchRun> runs = RunCase(s);
  ASSERT_EQ(runs.size(), static_cast<size_t>(s.repetitions));
  for (const BenchRun& r : runs) {
    EXPECT_FALSE(r.error_occurred) << r.error_message;
    EXPECT_EQ(r.iterations, s.iterations);
  }
  // At prepare: the warm-ups of both variants. Each repetition: the timed
  // out-of-place span, the in-place one, one checked call of each variant.
  const int64_t calls = 2 * s.warmup + s.repetitions * (2 * s.iterations + 2);
  for (int r = 0; r < s.ranks; ++r) EXPECT_EQ(log_.calls[r], calls) << "rank " << r;
  EXPECT_EQ(log_.calls_at_first_span, 2 * s.warmup) << "warm-ups run before the first timed span";
}

TEST_F(AllReduceCasesTest, EachRankKeepsOneThreadAndRankZeroIsTheHarnesss) {
  const CaseSetup s;
  RunCase(s);
  std::set<std::thread::id> all;
  for (int r = 0; r < s.ranks; ++r) {
    EXPECT_EQ(log_.threads[r].size(), 1u) << "rank " << r << " called from several threads";
    all.insert(log_.threads[r].begin(), log_.threads[r].end());
  }
  EXPECT_EQ(all.size(), static_cast<size_t>(s.ranks)) << "two ranks share a thread";
  EXPECT_EQ(log_.threads[0].count(std::this_thread::get_id()), 1u);
}

TEST_F(AllReduceCasesTest, CountersFollowNcclTests) {
  CaseSetup s;
  s.ranks = 4;
  const std::vector<BenchRun> runs = RunCase(s);
  ASSERT_EQ(runs.size(), static_cast<size_t>(s.repetitions));
  for (const BenchRun& r : runs) {
    ASSERT_FALSE(r.error_occurred) << r.error_message;
    for (const char* name : {"algbw", "busbw", "algbw_inplace", "busbw_inplace"}) {
      ASSERT_TRUE(r.counters.count(name)) << name;
      EXPECT_GT(r.counters.at(name).value, 0) << name;
    }
    // algbw is the bytes of one call over its time (the harness's manual
    // time per iteration); busbw = algbw * 2(n-1)/n.
    const double seconds_per_call = r.real_accumulated_time / r.iterations;
    EXPECT_NEAR(r.counters.at("algbw").value * seconds_per_call / s.bytes, 1.0, 1e-9);
    EXPECT_DOUBLE_EQ(r.counters.at("busbw").value / r.counters.at("algbw").value, 1.5);
    EXPECT_DOUBLE_EQ(r.counters.at("busbw_inplace").value / r.counters.at("algbw_inplace").value,
                     1.5);
    EXPECT_NE(r.report_label.find("result checked"), std::string::npos) << r.report_label;
    EXPECT_NE(r.report_label.find("0 wrong elements"), std::string::npos) << r.report_label;
  }
}

// Every element type the collectives reduce gives exact sums, checked in
// every repetition, at an odd rank count and a size that is not a multiple
// of the ranks' chunks.
TEST_F(AllReduceCasesTest, EveryDTypeIsCheckedExactly) {
  for (DType dtype :
       {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI32, DType::kI64}) {
    benchmark::ClearRegisteredBenchmarks();  // one case per type
    CaseSetup s;
    s.dtype = dtype;
    s.bytes = 1000 * static_cast<int64_t>(SizeOf(dtype));
    s.repetitions = 1;
    const std::vector<BenchRun> runs = RunCase(s);
    ASSERT_EQ(runs.size(), 1u) << DTypeName(dtype);
    EXPECT_FALSE(runs[0].error_occurred) << DTypeName(dtype) << ": " << runs[0].error_message;
    EXPECT_NE(runs[0].report_label.find("0 wrong elements"), std::string::npos) << DTypeName(dtype);
  }
}

TEST(CollectiveDTypesTest, TheFlagWinsOverThePresetAndUnknownTypesAreNamed) {
  auto preset = CollectiveDTypes("", {"fp32"});
  ASSERT_TRUE(preset.ok()) << preset.status();
  ASSERT_EQ(preset->size(), 1u);
  EXPECT_EQ((*preset)[0].second, DType::kF32);
  auto flag = CollectiveDTypes("bf16,int64,bf16", {"fp32"});
  ASSERT_TRUE(flag.ok()) << flag.status();
  ASSERT_EQ(flag->size(), 2u) << "a type named twice runs once";
  EXPECT_EQ((*flag)[0].first, "bf16");
  EXPECT_EQ((*flag)[1].second, DType::kI64);
  // nccl-tests' spelling is read as the canonical one, which names the case.
  auto alias = CollectiveDTypes("float,fp32", {});
  ASSERT_TRUE(alias.ok()) << alias.status();
  ASSERT_EQ(alias->size(), 1u);
  EXPECT_EQ((*alias)[0].first, "fp32");
  auto bad = CollectiveDTypes("fp32,uint8", {"fp32"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "--collective_dtypes: 'uint8'"))
      << bad.status();
}

TEST_F(AllReduceCasesTest, AWrongOutOfPlaceResultSkipsEveryRepetition) {
  CaseSetup s;
  s.spoiled_rank = 1;
  s.spoil = Spoil::kOutOfPlace;
  const std::vector<BenchRun> runs = RunCase(s);
  ASSERT_EQ(runs.size(), static_cast<size_t>(s.repetitions));
  for (const BenchRun& r : runs) {
    EXPECT_TRUE(r.error_occurred);
    EXPECT_TRUE(absl::StartsWith(r.error_message, "out-of-place result wrong at rank 1 element 3"))
        << r.error_message;
    EXPECT_TRUE(absl::StrContains(r.error_message, "wrong elements: 1 out of place, 0 in place"))
        << r.error_message;
  }
}

TEST_F(AllReduceCasesTest, AWrongInPlaceResultSkipsEveryRepetition) {
  CaseSetup s;
  s.spoiled_rank = 2;
  s.spoil = Spoil::kInPlace;
  const std::vector<BenchRun> runs = RunCase(s);
  ASSERT_EQ(runs.size(), static_cast<size_t>(s.repetitions));
  for (const BenchRun& r : runs) {
    EXPECT_TRUE(r.error_occurred);
    EXPECT_TRUE(absl::StartsWith(r.error_message, "in-place result wrong at rank 2 element 3"))
        << r.error_message;
    EXPECT_TRUE(absl::StrContains(r.error_message, "wrong elements: 0 out of place, 1 in place"))
        << r.error_message;
  }
}

TEST_F(AllReduceCasesTest, AGroupThatIsNotOneIsRejectedBeforeAnyThreadStarts) {
  auto group = CreateLocalGroup(2);
  ASSERT_TRUE(group.ok()) << group.status();
  std::swap((*group)[0], (*group)[1]);
  auto w = PrepareAllReduceWorkload(*std::move(group), 1024, 1);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("is not rank 0"), absl::string_view::npos) << w.status();
}

}  // namespace
}  // namespace cnnbench::bench
