// The collectives' workload on the timing harness, in process, over a local
// group whose communicators count (and, when asked, spoil) what passes
// through them, for every collective: every rank makes the same fixed
// number of calls, warm-ups come before the first timed span, each rank
// keeps one thread for the whole case, the result is checked in every
// repetition against exact values in every type and reduction (a wrong
// element skips it, naming the variant, rank and element) and the counters
// follow nccl-tests.
#include "bench/cases/collective/collective_cases.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/cases/collective/definitions/definition.h"
#include "bench/cli/flag_values.h"
#include "bench/harness/harness.h"
#include "bench/suite/names.h"
#include "bench/suite/suite.h"
#include "benchmark/benchmark.h"
#include "gtest/gtest.h"
#include "kernels/collectives/communicator.h"
#include "kernels/collectives/local.h"
#include "tests/bench/logging_communicator.h"
#include "tests/bench/recorder.h"

namespace cnnbench::bench {
namespace {

using testing_comm::Log;
using testing_comm::LoggingCommunicator;
using testing_comm::Spoil;

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
  void SetStopCheck(std::function<bool()> check) override { inner_->SetStopCheck(check); }

 private:
  std::unique_ptr<Workload> inner_;
  Log& log_;
};

struct CaseSetup {
  Collective collective = Collective::kAllReduce;
  ReduceOp op = ReduceOp::kSum;
  int ranks = 3;
  int64_t bytes = 1200;  // a multiple of 3 ranks' fp32 elements
  int root = 0;
  int warmup = 2;
  int64_t iterations = 4;
  int repetitions = 3;
  int spoiled_rank = -1;
  Spoil spoil = Spoil::kNone;
  float delta = 1;  // what a spoiled call adds to element 3 of its result
  DType dtype = DType::kF32;
};

std::string What(const CaseSetup& s) {
  return absl::StrCat(CollectiveName(s.collective), " ", DTypeName(s.dtype), " ",
                      ReduceOpName(s.op), " ranks ", s.ranks, " root ", s.root);
}

class CollectiveCasesTest : public ::testing::Test {
 protected:
  void SetUp() override { benchmark::ClearRegisteredBenchmarks(); }
  void TearDown() override { benchmark::ClearRegisteredBenchmarks(); }

  // Runs one case as the suite registers it, over a logging group (with the
  // harness's stop check `stop`, when given).
  std::vector<BenchRun> RunCase(const CaseSetup& s, std::function<bool()> stop = nullptr) {
    log_.calls.assign(s.ranks, 0);
    log_.threads.assign(s.ranks, {});
    CollectiveCase spec;
    spec.collective = s.collective;
    spec.op = s.op;
    spec.dtype = s.dtype;
    spec.bytes = s.bytes;
    spec.root = s.root;
    spec.warmup = s.warmup;
    spec.iterations = s.iterations;
    TimedCase c = CollectiveTimedCase("collective_test/case", spec);
    c.prepare = [this, s, spec]() -> absl::StatusOr<std::unique_ptr<Workload>> {
      absl::StatusOr<std::vector<std::unique_ptr<Communicator>>> local = CreateLocalGroup(s.ranks);
      if (!local.ok()) return local.status();
      std::vector<std::unique_ptr<Communicator>> group;
      for (auto& comm : *local)
        group.push_back(std::make_unique<LoggingCommunicator>(std::move(comm), log_, s.spoiled_rank,
                                                              s.spoil, s.delta));
      absl::StatusOr<std::unique_ptr<Workload>> w =
          PrepareCollectiveWorkload(std::move(group), spec);
      if (!w.ok()) return w.status();
      return std::unique_ptr<Workload>(new SpanWatcher(*std::move(w), log_));
    };
    // The harness's release joins the rank threads before this returns.
    return RunOneCase(std::move(c), TimingSettings{.repetitions = s.repetitions},
                      std::move(stop));
  }

  Log log_;
};

TEST_F(CollectiveCasesTest, EveryRankMakesTheSameFixedCallsWarmUpFirst) {
  for (Collective collective : kCollectives) {
    CaseSetup s;
    s.collective = collective;
    const std::vector<BenchRun> runs = RunCase(s);
    benchmark::ClearRegisteredBenchmarks();
    ASSERT_EQ(runs.size(), static_cast<size_t>(s.repetitions)) << What(s);
    for (const BenchRun& r : runs) {
      EXPECT_FALSE(r.error_occurred) << What(s) << ": " << r.error_message;
      EXPECT_EQ(r.iterations, s.iterations);
    }
    // At prepare: the warm-ups of both variants. Each repetition: the timed
    // out-of-place span, the in-place one, one checked call of each variant
    // (all-to-all: out of place only).
    const int variants = HasInPlace(collective) ? 2 : 1;
    const int64_t calls = variants * (s.warmup + s.repetitions * (s.iterations + 1));
    for (int r = 0; r < s.ranks; ++r) EXPECT_EQ(log_.calls[r], calls) << What(s) << " rank " << r;
    EXPECT_EQ(log_.calls_at_first_span, variants * s.warmup)
        << What(s) << ": warm-ups run before the first timed span";
    log_.calls_at_first_span = -1;
  }
}

TEST_F(CollectiveCasesTest, EachRankKeepsOneThreadAndRankZeroIsTheHarnesss) {
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

TEST_F(CollectiveCasesTest, CountersFollowNcclTests) {
  // nccl-tests' factors at 4 ranks (its doc/PERFORMANCE.md).
  const std::map<Collective, double> factor = {
      {Collective::kAllReduce, 1.5},      {Collective::kAllGather, 0.75},
      {Collective::kReduceScatter, 0.75}, {Collective::kBroadcast, 1.0},
      {Collective::kReduce, 1.0},         {Collective::kAllToAll, 0.75},
      {Collective::kGather, 0.75},        {Collective::kScatter, 0.75}};
  for (Collective collective : kCollectives) {
    CaseSetup s;
    s.collective = collective;
    s.ranks = 4;
    s.bytes = 1024;
    const std::vector<BenchRun> runs = RunCase(s);
    benchmark::ClearRegisteredBenchmarks();
    ASSERT_EQ(runs.size(), static_cast<size_t>(s.repetitions)) << What(s);
    for (const BenchRun& r : runs) {
      ASSERT_FALSE(r.error_occurred) << What(s) << ": " << r.error_message;
      for (const char* name : {"algbw", "busbw", "algbw_inplace", "busbw_inplace"}) {
        const bool in_place = absl::EndsWith(name, "_inplace");
        if (in_place && !HasInPlace(collective)) {
          EXPECT_FALSE(r.counters.count(name)) << What(s) << ": " << name;
          continue;
        }
        ASSERT_TRUE(r.counters.count(name)) << name;
        EXPECT_GT(r.counters.at(name).value, 0) << name;
      }
      // algbw is nccl-tests' size of one call over its time (the harness's
      // manual time per iteration); busbw = algbw * the collective's factor.
      const double seconds_per_call = r.real_accumulated_time / r.iterations;
      EXPECT_NEAR(r.counters.at("algbw").value * seconds_per_call / s.bytes, 1.0, 1e-9);
      EXPECT_DOUBLE_EQ(r.counters.at("busbw").value / r.counters.at("algbw").value,
                       factor.at(collective))
          << What(s);
      if (HasInPlace(collective)) {
        EXPECT_DOUBLE_EQ(
            r.counters.at("busbw_inplace").value / r.counters.at("algbw_inplace").value,
            factor.at(collective))
            << What(s);
      }
      EXPECT_NE(r.report_label.find("result checked"), std::string::npos) << r.report_label;
      EXPECT_NE(r.report_label.find("0 wrong elements"), std::string::npos) << r.report_label;
    }
  }
}

// Every collective in every element type and reduction gives exact results
// (floating averages within 2 units in the last place), checked in every
// repetition, at an odd rank count, with a root that is not rank 0, and a
// size that is not a multiple of the local group's chunks.
TEST_F(CollectiveCasesTest, EveryCollectiveDTypeAndOpIsCheckedExactly) {
  for (Collective collective : kCollectives)
    for (DType dtype :
         {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI32, DType::kI64})
      for (ReduceOp op : kReduceOps) {
        if (!Reduces(collective) && op != ReduceOp::kSum) continue;  // the copies have no op
        benchmark::ClearRegisteredBenchmarks();                      // one case at a time
        CaseSetup s;
        s.collective = collective;
        s.op = op;
        s.dtype = dtype;
        s.root = 2;
        // 999 elements; an all-gather's, reduce-scatter's or all-to-all's
        // parts rounded to whole 16 bytes, as nccl-tests sizes them.
        s.bytes = ShapeOf(collective, SizeOf(dtype), 999 * static_cast<int64_t>(SizeOf(dtype)), 3)
                      .bytes;
        s.repetitions = 1;
        s.warmup = 1;
        s.iterations = 1;
        const std::vector<BenchRun> runs = RunCase(s);
        ASSERT_EQ(runs.size(), 1u) << What(s);
        EXPECT_FALSE(runs[0].error_occurred) << What(s) << ": " << runs[0].error_message;
        EXPECT_NE(runs[0].report_label.find("0 wrong elements"), std::string::npos) << What(s);
        if (collective == Collective::kBroadcast || collective == Collective::kReduce) {
          EXPECT_NE(runs[0].report_label.find("root 2"), std::string::npos) << runs[0].report_label;
        }
      }
}

TEST(CollectiveDTypesTest, TheFlagWinsOverThePresetAndUnknownTypesAreNamed) {
  auto preset = CollectiveDTypes("", {"fp32"});
  ASSERT_TRUE(preset.ok()) << preset.status();
  ASSERT_EQ(preset->size(), 1u);
  EXPECT_EQ((*preset)[0].second, DType::kF32);
  auto flag = CollectiveDTypes("bf16,int64", {"fp32"});
  ASSERT_TRUE(flag.ok()) << flag.status();
  ASSERT_EQ(flag->size(), 2u);
  EXPECT_EQ((*flag)[0].first, "bf16");
  EXPECT_EQ((*flag)[1].second, DType::kI64);
  // A type named twice is refused, as every list flag refuses a repeat,
  // under either spelling, in words that name both spellings.
  auto repeated = CollectiveDTypes("bf16,int64,bf16", {"fp32"});
  ASSERT_FALSE(repeated.ok());
  EXPECT_TRUE(absl::StrContains(repeated.status().message(), "'bf16' is given twice"))
      << repeated.status();
  auto respelled = CollectiveDTypes("float,fp32", {"fp32"});
  ASSERT_FALSE(respelled.ok());
  EXPECT_TRUE(absl::StrContains(respelled.status().message(),
                                "'float' and 'fp32' are the same type (fp32;"))
      << respelled.status();
  // nccl-tests' spellings are read as the canonical ones, which name the case.
  auto alias = CollectiveDTypes("float,double", {});
  ASSERT_TRUE(alias.ok()) << alias.status();
  ASSERT_EQ(alias->size(), 2u);
  EXPECT_EQ((*alias)[0].first, "fp32");
  EXPECT_EQ((*alias)[1].first, "fp64");
  auto bad = CollectiveDTypes("fp32,uint8", {"fp32"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "--collective_dtypes: 'uint8'"))
      << bad.status();
}

// nccl-tests' -b/-e sizes: K, M, G in either case; what does not parse is
// named, and what overflows says the most there is (in its own unit).
TEST(ByteCountTest, DigitsWithNcclTestsSuffixes) {
  EXPECT_EQ(*ParseByteCount("64"), 64);
  EXPECT_EQ(*ParseByteCount("1K"), 1024);
  EXPECT_EQ(*ParseByteCount("8m"), 8 << 20);
  EXPECT_EQ(*ParseByteCount("2G"), int64_t{2} << 30);
  for (const char* bad : {"", "K", "-1K", "1.5M", "1KB", "x", "+4", "0x10"}) {
    const absl::StatusOr<int64_t> parsed = ParseByteCount(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    if (!parsed.ok()) {
      EXPECT_TRUE(absl::StrContains(parsed.status().message(), "byte count")) << parsed.status();
    }
  }
  EXPECT_EQ(ParseByteCount("99999999999G").status().message(),
            "'99999999999G' is too large (at most 8589934591G)");
}

TEST(CollectiveOpsTest, AllIsNcclTestsOrderAndUnknownOpsAreNamed) {
  auto preset = CollectiveOps("", {"sum"});
  ASSERT_TRUE(preset.ok()) << preset.status();
  EXPECT_EQ(*preset, std::vector<ReduceOp>{ReduceOp::kSum});
  auto all = CollectiveOps("all", {"sum"});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, (std::vector<ReduceOp>{ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax,
                                         ReduceOp::kMin, ReduceOp::kAvg}));
  auto some = CollectiveOps("min,max", {"sum"});
  ASSERT_TRUE(some.ok()) << some.status();
  EXPECT_EQ(*some, (std::vector<ReduceOp>{ReduceOp::kMin, ReduceOp::kMax}));
  auto repeated = CollectiveOps("min,max,min", {"sum"});
  ASSERT_FALSE(repeated.ok());
  EXPECT_TRUE(absl::StrContains(repeated.status().message(), "'min' is given twice"))
      << repeated.status();
  auto mixed = CollectiveOps("all,sum", {"sum"});
  ASSERT_FALSE(mixed.ok());
  EXPECT_TRUE(absl::StrContains(mixed.status().message(), "'all' stands alone")) << mixed.status();
  auto bad = CollectiveOps("sum,mean", {"sum"});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "--collective_ops: 'mean'"))
      << bad.status();
}

// nccl-tests' sizes: the buffer of all-reduce, broadcast and reduce, the
// gathered one of all-gather, the scattered one of reduce-scatter, rounded
// down to whole elements, and each rank's part of an all-gather,
// reduce-scatter or all-to-all to whole 16 bytes.
TEST(CollectiveShapeTest, SizesFollowNcclTestsAndRoundToAWholeCountPerRank) {
  CollectiveShape s = ShapeOf(Collective::kAllGather, 4, 100, 3);  // 25 elements
  EXPECT_EQ(s.count, 8u);
  EXPECT_EQ(s.send_elements, 8u);
  EXPECT_EQ(s.recv_elements, 24u);
  EXPECT_EQ(s.bytes, 96);
  s = ShapeOf(Collective::kReduceScatter, 2, 100, 4);  // 50 fp16: 12 a rank, 16 bytes: 8
  EXPECT_EQ(s.count, 8u);
  EXPECT_EQ(s.send_elements, 32u);
  EXPECT_EQ(s.recv_elements, 8u);
  EXPECT_EQ(s.bytes, 64);
  s = ShapeOf(Collective::kAllToAll, 1, 100, 3);  // 33 int8 a rank, 16 bytes: 32
  EXPECT_EQ(s.count, 32u);
  EXPECT_EQ(s.send_elements, 96u);
  EXPECT_EQ(s.recv_elements, 96u);
  EXPECT_EQ(s.bytes, 96);
  s = ShapeOf(Collective::kAllGather, 8, 100, 2);  // 6 fp64 a rank, already whole 16 bytes
  EXPECT_EQ(s.count, 6u);
  EXPECT_EQ(s.bytes, 96);
  s = ShapeOf(Collective::kAllGather, 8, 104, 2);  // 6.5 fp64: 6
  EXPECT_EQ(s.count, 6u);
  s = ShapeOf(Collective::kAllGather, 4, 28, 1);  // 7 fp32 on one rank: 4
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.bytes, 16);
  for (Collective c : {Collective::kAllReduce, Collective::kBroadcast, Collective::kReduce}) {
    s = ShapeOf(c, 8, 100, 3);
    EXPECT_EQ(s.count, 12u);
    EXPECT_EQ(s.send_elements, 12u);
    EXPECT_EQ(s.recv_elements, 12u);
    EXPECT_EQ(s.bytes, 96);
  }
  EXPECT_EQ(ShapeOf(Collective::kAllGather, 4, 8, 3).count, 0u) << "under an element per rank";
  EXPECT_EQ(ShapeOf(Collective::kAllGather, 4, 24, 2).count, 0u) << "under 16 bytes per rank";
  EXPECT_EQ(ShapeOf(Collective::kAllReduce, 4, 8, 2).count, 2u) << "an all-reduce is not split";
}

// A span far too long to finish (2^40 calls) ends once the run is to stop:
// the ranks agree on it every CallsBetweenStopChecks calls, so every rank
// leaves at the same call, and the case and its later repetition are
// skipped as interrupted.
TEST_F(CollectiveCasesTest, ALongSpanStopsOnEveryRankAtTheSameCall) {
  CaseSetup s;
  s.ranks = 2;
  s.bytes = 256 << 10;
  s.warmup = 0;
  s.iterations = int64_t{1} << 40;
  s.repetitions = 2;
  const int64_t chunk = CallsBetweenStopChecks(s.bytes);
  ASSERT_GT(chunk, 1);
  ASSERT_LT(chunk, 1000);
  // Asked on every rank's thread: true once rank 0 has made 1.5 chunks of
  // calls, so the ranks agree at the second check.
  auto stop = [this, chunk] {
    std::lock_guard<std::mutex> lock(log_.mutex);
    return log_.calls[0] >= chunk + chunk / 2;
  };
  const std::vector<BenchRun> runs = RunCase(s, stop);
  ASSERT_EQ(runs.size(), 2u);
  for (const BenchRun& r : runs) {
    EXPECT_TRUE(r.error_occurred);
    EXPECT_EQ(r.error_message, kInterruptedMessage);
  }
  // Two stretches of calls, each followed by the one-value agreement.
  for (int r = 0; r < s.ranks; ++r) EXPECT_EQ(log_.calls[r], 2 * chunk + 2) << "rank " << r;
}

TEST_F(CollectiveCasesTest, AWrongOutOfPlaceResultSkipsEveryRepetitionOfEveryCollective) {
  for (Collective collective : kCollectives) {
    CaseSetup s;
    s.collective = collective;
    s.spoiled_rank = 1;
    s.root = 1;  // a reduce's result is the root's only
    s.spoil = Spoil::kOutOfPlace;
    const std::vector<BenchRun> runs = RunCase(s);
    benchmark::ClearRegisteredBenchmarks();
    ASSERT_EQ(runs.size(), static_cast<size_t>(s.repetitions)) << What(s);
    for (const BenchRun& r : runs) {
      EXPECT_TRUE(r.error_occurred) << What(s);
      EXPECT_TRUE(
          absl::StartsWith(r.error_message, "out-of-place result wrong at rank 1 element 3"))
          << What(s) << ": " << r.error_message;
      EXPECT_TRUE(absl::StrContains(r.error_message, "wrong elements: 1 out of place, 0 in place"))
          << What(s) << ": " << r.error_message;
    }
  }
}

TEST_F(CollectiveCasesTest, AWrongInPlaceResultSkipsEveryRepetitionOfEveryCollective) {
  for (Collective collective : kCollectives) {
    if (!HasInPlace(collective)) continue;  // all-to-all
    CaseSetup s;
    s.collective = collective;
    s.spoiled_rank = 2;
    s.root = 2;
    s.spoil = Spoil::kInPlace;
    const std::vector<BenchRun> runs = RunCase(s);
    benchmark::ClearRegisteredBenchmarks();
    ASSERT_EQ(runs.size(), static_cast<size_t>(s.repetitions)) << What(s);
    for (const BenchRun& r : runs) {
      EXPECT_TRUE(r.error_occurred) << What(s);
      EXPECT_TRUE(absl::StartsWith(r.error_message, "in-place result wrong at rank 2 element 3"))
          << What(s) << ": " << r.error_message;
      EXPECT_TRUE(absl::StrContains(r.error_message, "wrong elements: 0 out of place, 1 in place"))
          << What(s) << ": " << r.error_message;
    }
  }
}

// A floating average may be off by 2 units in the last place (a transport
// may sum inputs each scaled by 1/n, as NCCL does): element 3's average over
// 3 ranks is 1, whose unit in fp32 is 2^-23.
TEST_F(CollectiveCasesTest, AFloatingAverageMayBeOffByTwoUnitsInTheLastPlaceNoMore) {
  for (const auto& [delta, fails] : {std::pair<float, bool>{std::ldexp(1.0f, -23), false},
                                     std::pair<float, bool>{std::ldexp(1.0f, -22), false},
                                     std::pair<float, bool>{std::ldexp(1.0f, -21), true}}) {
    CaseSetup s;
    s.op = ReduceOp::kAvg;
    s.spoiled_rank = 0;
    s.spoil = Spoil::kOutOfPlace;
    s.delta = delta;
    s.repetitions = 1;
    const std::vector<BenchRun> runs = RunCase(s);
    benchmark::ClearRegisteredBenchmarks();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].error_occurred, fails) << delta << ": " << runs[0].error_message;
  }
  // A sum is exact: one unit off fails.
  CaseSetup s;
  s.spoiled_rank = 0;
  s.spoil = Spoil::kOutOfPlace;
  s.delta = std::ldexp(1.0f, -23) * 2;  // element 3's sum is 3: its unit is 2^-22
  s.repetitions = 1;
  const std::vector<BenchRun> runs = RunCase(s);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].error_occurred);
}

TEST_F(CollectiveCasesTest, ARootOutsideTheGroupIsSkippedAsUnsupported) {
  CaseSetup s;
  s.collective = Collective::kBroadcast;
  s.root = 3;
  s.repetitions = 1;
  const std::vector<BenchRun> runs = RunCase(s);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].error_occurred);
  EXPECT_TRUE(absl::StartsWith(runs[0].error_message, "unsupported: root 3 is not a rank of 3"))
      << runs[0].error_message;
}

TEST_F(CollectiveCasesTest, AGroupThatIsNotOneIsRejectedBeforeAnyThreadStarts) {
  auto group = CreateLocalGroup(2);
  ASSERT_TRUE(group.ok()) << group.status();
  std::swap((*group)[0], (*group)[1]);
  CollectiveCase spec;
  spec.bytes = 1024;
  auto w = PrepareCollectiveWorkload(*std::move(group), spec);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("is not rank 0"), absl::string_view::npos) << w.status();
}

// The sweep's plan, without a GPU: which transports and rank counts, which
// buffers each rank holds, which sizes fit memory.
SuiteOptions PlanOptions() {
  SuiteOptions o;
  o.collectives.min_bytes = 1024;
  o.collectives.max_bytes = 4096;
  o.collectives.ranks = {2};
  o.gpus = {0, 1, 2, 4, 2};
  return o;
}

TEST(CollectivePlanTest, NcclRanksComeFromTheGpuCountsAndOnlyWithAGpu) {
  SuiteOptions o = PlanOptions();
  auto cpu_only = PlanCollectiveCases(Collective::kAllReduce, o, 1e12, 0);
  ASSERT_TRUE(cpu_only.ok()) << cpu_only.status();
  ASSERT_EQ(cpu_only->size(), 3u);  // local, ranks:2, 1024..4096
  for (const PlannedCollectiveCase& c : *cpu_only) EXPECT_EQ(c.transport, "local") << c.name;

  o.gpu_count = 2;
  o.collectives.graph = true;
  auto with_gpu = PlanCollectiveCases(Collective::kAllReduce, o, 1e12, 1e12);
  ASSERT_TRUE(with_gpu.ok()) << with_gpu.status();
  std::vector<std::string> names;
  for (const PlannedCollectiveCase& c : *with_gpu) {
    names.push_back(c.name);
    // The graph is the GPU's: host transports enqueue nothing to capture.
    EXPECT_EQ(c.spec.graph, c.transport == "nccl") << c.name;
    EXPECT_EQ(c.spec.iterations, o.collectives.iters) << c.name;
  }
  // gpus:0 is the CPU, a count given twice runs once; ranks:4 is planned
  // (above the GPUs present it is skipped when prepared, with the reason).
  EXPECT_EQ(names, (std::vector<std::string>{
                       "allreduce/local/fp32/sum/bytes:1024/ranks:2",
                       "allreduce/local/fp32/sum/bytes:2048/ranks:2",
                       "allreduce/local/fp32/sum/bytes:4096/ranks:2",
                       "allreduce/nccl/fp32/sum/bytes:1024/ranks:1",
                       "allreduce/nccl/fp32/sum/bytes:2048/ranks:1",
                       "allreduce/nccl/fp32/sum/bytes:4096/ranks:1",
                       "allreduce/nccl/fp32/sum/bytes:1024/ranks:2",
                       "allreduce/nccl/fp32/sum/bytes:2048/ranks:2",
                       "allreduce/nccl/fp32/sum/bytes:4096/ranks:2",
                       "allreduce/nccl/fp32/sum/bytes:1024/ranks:4",
                       "allreduce/nccl/fp32/sum/bytes:2048/ranks:4",
                       "allreduce/nccl/fp32/sum/bytes:4096/ranks:4",
                   }));

  // Under MPI: the job's ranks, one per process, on the host and on GPUs.
  MpiRanks mpi;
  mpi.size = 3;
  o.mpi = &mpi;
  auto job = PlanCollectiveCases(Collective::kBroadcast, o, 1e12, 1e12);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(job->size(), 6u);
  EXPECT_EQ((*job)[0].name, "broadcast/mpi/fp32/none/bytes:1024/ranks:3");
  EXPECT_EQ((*job)[3].name, "broadcast/nccl/fp32/none/bytes:1024/ranks:3");
}

TEST(CollectivePlanTest, BuffersFollowNcclTestsSizesAndSizesStopAtHalfTheMemory) {
  SuiteOptions o = PlanOptions();
  o.gpu_count = 4;
  o.gpus = {4};
  o.collectives.ranks = {4};
  o.collectives.max_bytes = 1 << 20;
  // Half of one GPU's 64 KiB holds a rank's all-gather buffers (send: size /
  // 4, receive: size) up to size 16 KiB (20 KiB); 32 KiB would need 40.
  auto plan = PlanCollectiveCases(Collective::kAllGather, o, 1e12, 64 << 10);
  ASSERT_TRUE(plan.ok()) << plan.status();
  int64_t largest_nccl = 0, largest_local = 0;
  for (const PlannedCollectiveCase& c : *plan) {
    EXPECT_EQ(c.shape.recv_elements, c.shape.send_elements * 4) << c.name;
    EXPECT_DOUBLE_EQ(c.bytes_per_rank, 1.25 * static_cast<double>(c.spec.bytes)) << c.name;
    if (c.transport == "nccl") {
      EXPECT_LE(c.bytes_per_rank, 32 << 10) << c.name;
      largest_nccl = std::max(largest_nccl, c.spec.bytes);
    } else {
      largest_local = std::max(largest_local, c.spec.bytes);
    }
  }
  EXPECT_EQ(largest_nccl, 16 << 10);
  EXPECT_EQ(largest_local, 1 << 20) << "the host's memory is not the GPU's";
  // Host memory holds every rank's buffers: 4 ranks x 1.25 x size <= half of 1 MiB.
  std::vector<std::string> notes;
  auto host = PlanCollectiveCases(Collective::kAllGather, o, 1 << 20, 0, &notes);
  ASSERT_TRUE(host.ok()) << host.status();
  // The cap is said, as nccl-tests says it reduces maxBytes; the GPU's sweep
  // (no cap) says nothing.
  ASSERT_EQ(notes.size(), 1u) << absl::StrJoin(notes, "\n");
  EXPECT_TRUE(absl::StrContains(notes[0], "allgather/local ranks 4: sizes from ")) << notes[0];
  EXPECT_TRUE(absl::StrContains(notes[0], "half of the host's memory (1048576 bytes)")) << notes[0];
  for (const PlannedCollectiveCase& c : *host) {
    if (c.transport == "local") {
      EXPECT_LE(c.bytes_per_rank * 4, 512 << 10) << c.name;
    }
  }
  EXPECT_EQ(host->back().transport, "nccl") << "gpu memory 0: no cap";
  EXPECT_EQ(host->back().spec.bytes, 1 << 20);
}

// Sizes under 16 bytes per rank (nccl-tests' rounding of an all-gather's
// part), and a sweep with nothing left, are said.
TEST(CollectivePlanTest, SizesLeftOutAreSaid) {
  SuiteOptions o = PlanOptions();
  o.gpu_count = 0;
  o.collectives.ranks = {4};
  o.collectives.min_bytes = 4;
  o.collectives.max_bytes = 64;
  std::vector<std::string> notes;
  auto plan = PlanCollectiveCases(Collective::kAllGather, o, 1e12, 0, &notes);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->empty());
  ASSERT_EQ(notes.size(), 1u) << absl::StrJoin(notes, "\n");
  EXPECT_TRUE(absl::StrContains(notes[0], "under 16 bytes per rank")) << notes[0];
  EXPECT_TRUE(absl::StrContains(notes[0], "sizes up to 32 bytes")) << notes[0];
  ASSERT_EQ(plan->size(), 1u);  // 64 bytes: 16 a rank
  EXPECT_EQ(plan->front().spec.bytes, 64);
  o.collectives.max_bytes = 8;  // 4 and 8 bytes: under one fp32 element for each of 4 ranks
  notes.clear();
  plan = PlanCollectiveCases(Collective::kAllGather, o, 1e12, 0, &notes);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->empty());
  ASSERT_EQ(notes.size(), 2u) << absl::StrJoin(notes, "\n");
  EXPECT_TRUE(absl::StrContains(notes[1], "is left: no case")) << notes[1];
}

// More ranks than GPUs: registered, and skipped when prepared with how many
// GPUs there are, before any communicator is made.
TEST(CollectivePlanTest, MoreNcclRanksThanGpusIsSkippedNamingTheGpusVisible) {
  benchmark::ClearRegisteredBenchmarks();
  SuiteOptions o = PlanOptions();
  o.gpu_count = 1;
  o.gpus = {2};
  o.collectives.max_bytes = 1024;
  o.collectives.iters = 2;
  o.collectives.warmup = 0;
  Harness harness(TimingSettings{.repetitions = 1});
  o.families = {"reduce"};
  ASSERT_TRUE(RegisterCollectiveCases(o, harness).ok());
  Recorder recorder;
  benchmark::RunSpecifiedBenchmarks(&recorder, "^reduce/nccl/");
  harness.Release();
  benchmark::ClearRegisteredBenchmarks();
  ASSERT_EQ(recorder.iterations.size(), 1u);
  EXPECT_TRUE(recorder.iterations[0].error_occurred);
  EXPECT_EQ(recorder.iterations[0].error_message, "unsupported: ranks:2 needs 2 GPUs, 1 visible");
}

// The collectives and their case families name each other: a collective
// without its family (never registered) or a collective family without its
// collective (registers nothing) fails here.
TEST(CollectiveDefinitionTest, EveryCollectiveIsACaseFamilyAndBack) {
  for (Collective c : kCollectives) {
    const CaseFamily* family = FindCaseFamily(CollectiveName(c));
    ASSERT_NE(family, nullptr) << CollectiveName(c) << " has no case family";
    EXPECT_TRUE(IsCollectiveFamily(family->id)) << family->name;
  }
  for (const CaseFamily& f : CaseFamilies()) {
    Collective c;
    EXPECT_EQ(IsCollectiveFamily(f.id), FindCollective(f.name, &c)) << f.name;
  }
}

// Every collective has its definition, in kCollectives' order, and each
// definition's inputs and result lie inside the buffers ShapeOf gives it,
// on every rank of 1-4, in both variants.
TEST(CollectiveDefinitionTest, EveryCollectiveHasOneWithinItsBuffers) {
  for (Collective c : kCollectives) {
    const CollectiveDefinition& d = DefinitionOf(c);
    EXPECT_EQ(d.collective, c) << CollectiveName(c);
    for (int ranks = 1; ranks <= 4; ++ranks)
      for (int rank = 0; rank < ranks; ++rank)
        for (bool in_place : {false, true}) {
          if (in_place && !HasInPlace(c)) continue;
          SCOPED_TRACE(absl::StrCat(CollectiveName(c), " rank ", rank, " of ", ranks,
                                    in_place ? " in place" : " out of place"));
          const CollectiveShape shape = ShapeOf(c, 4, 4096, ranks);
          ASSERT_GT(shape.count, 0u);
          const RankCase side{c, ReduceOp::kSum, DType::kF32, /*root=*/ranks - 1, rank, ranks,
                              shape};
          auto size = [&](const BufferRange& r) {
            return r.send ? shape.send_elements : shape.recv_elements;
          };
          const BufferRange inputs = d.inputs(side, in_place);
          EXPECT_GT(inputs.elements, 0u);
          EXPECT_LE(inputs.first + inputs.elements, size(inputs));
          const BufferRange result = d.result(side, in_place);
          EXPECT_LE(result.first + result.elements, size(result));
          // Only a reduce or a gather off its root holds no result.
          EXPECT_EQ(result.elements == 0,
                    (c == Collective::kReduce || c == Collective::kGather) && rank != side.root);
        }
  }
}

}  // namespace
}  // namespace cnnbench::bench
