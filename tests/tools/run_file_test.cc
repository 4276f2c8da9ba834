#include "tools/report/run_file.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tools/report/results.h"

namespace cnnbench::report {
namespace {

bool Contains(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& line : lines) {
    if (line.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(RunFileTest, NotJsonIsAnErrorNamingTheFile) {
  std::vector<std::string> warnings;
  auto file = ParseRunFile("runs/a.json", "{\"context\": {", &warnings);
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("runs/a.json: not JSON"), absl::string_view::npos)
      << file.status();
}

TEST(RunFileTest, JsonWithoutBenchmarksIsAnError) {
  std::vector<std::string> warnings;
  for (const char* text : {"[1, 2]", "{\"context\": {}}", "{\"benchmarks\": 3}"}) {
    auto file = ParseRunFile("b.json", text, &warnings);
    ASSERT_FALSE(file.ok()) << text;
    EXPECT_NE(file.status().message().find("b.json: not Google Benchmark JSON output"),
              absl::string_view::npos)
        << file.status();
  }
}

TEST(RunFileTest, KeepsIterationsAndTheMeanIgnoresOtherAggregates) {
  const char* text = R"({
    "context": {"date": "2026-01-01T00:00:00+00:00", "platform": "p", "num_cpus": 2,
                "date": "2017-05-01T00:00:00+00:00"},
    "benchmarks": [
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:1/real_time", "run_type": "iteration",
       "real_time": 2.0, "time_unit": "ms", "images_per_second": 100},
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:1/real_time", "run_type": "iteration",
       "real_time": 4.0, "time_unit": "ms", "images_per_second": 110},
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:1/real_time_mean",
       "run_name": "train/vgg16/fp32/synthetic/batch:64/gpus:1/real_time",
       "run_type": "aggregate", "aggregate_name": "mean", "repetitions": 2,
       "images_per_second": 105},
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:1/real_time_stddev",
       "run_name": "train/vgg16/fp32/synthetic/batch:64/gpus:1/real_time",
       "run_type": "aggregate", "aggregate_name": "stddev", "images_per_second": 7}
    ]})";
  std::vector<std::string> warnings;
  auto file = ParseRunFile("f.json", text, &warnings);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  // A key written twice (Google Benchmark's date, then a custom one): the later counts.
  EXPECT_EQ(file->Context("date"), "2017-05-01T00:00:00+00:00");
  EXPECT_EQ(file->Context("num_cpus"), "2");
  ASSERT_EQ(file->cases.size(), 1u);
  ASSERT_EQ(file->cases[0].iterations.size(), 2u);
  EXPECT_DOUBLE_EQ(file->cases[0].iterations[1].at("images_per_second"), 110);
  EXPECT_DOUBLE_EQ(file->cases[0].iterations[1].at("seconds"), 0.004);
  EXPECT_DOUBLE_EQ(file->cases[0].mean.at("images_per_second"), 105);
}

// The one reduction every reader of results uses: the repetitions when the
// file has them (here 100 and 110, though its mean aggregate says 999), else
// the mean aggregate; nothing when neither has the counter.
TEST(RunFileTest, CaseMeanTakesTheRepetitionsFirstThenTheMeanAggregate) {
  const char* text = R"({
    "context": {"platform": "p"},
    "benchmarks": [
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:1", "run_type": "iteration",
       "real_time": 2.0, "time_unit": "ms", "images_per_second": 100},
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:1", "run_type": "iteration",
       "real_time": 4.0, "time_unit": "ms", "images_per_second": 110},
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:1_mean",
       "run_name": "train/vgg16/fp32/synthetic/batch:64/gpus:1",
       "run_type": "aggregate", "aggregate_name": "mean", "repetitions": 2,
       "images_per_second": 999},
      {"name": "train/vgg16/fp32/synthetic/batch:32/gpus:1_mean",
       "run_name": "train/vgg16/fp32/synthetic/batch:32/gpus:1",
       "run_type": "aggregate", "aggregate_name": "mean", "repetitions": 3,
       "real_time": 5.0, "time_unit": "ms", "images_per_second": 50}
    ]})";
  std::vector<std::string> warnings;
  auto file = ParseRunFile("m.json", text, &warnings);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->cases.size(), 2u);
  EXPECT_EQ(CaseMean(file->cases[0], "images_per_second"), 105.0);
  EXPECT_DOUBLE_EQ(CaseMean(file->cases[0], "seconds").value_or(0), 0.003);
  EXPECT_EQ(CaseMean(file->cases[1], "images_per_second"), 50.0);
  EXPECT_DOUBLE_EQ(CaseMean(file->cases[1], "seconds").value_or(0), 0.005);
  EXPECT_EQ(CaseMean(file->cases[0], "busbw"), std::nullopt);
}

// Issue 46 item 10: an inference case whose repetitions ran at 3000 and 40
// images/s (30 batches of 2 each: 0.02 s and 1.5 s) did 120 images in
// 1.52 s, 78.9 images/s; the mean of the two rates, 1520, is what one fast
// repetition makes of it. Latency is no rate: its mean stays the mean.
TEST(RunFileTest, RatesOverRepetitionsAreTotalWorkOverTotalTime) {
  const char* text = R"({"context": {"platform": "p"}, "benchmarks": [
      {"name": "infer/resnet50/fp32/synthetic/batch:2/gpus:0", "run_type": "iteration",
       "iterations": 30, "images_per_second": 3000, "latency_ms": 0.5, "flops": 3e12},
      {"name": "infer/resnet50/fp32/synthetic/batch:2/gpus:0", "run_type": "iteration",
       "iterations": 30, "images_per_second": 40, "latency_ms": 50, "flops": 4e10}]})";
  std::vector<std::string> warnings;
  auto file = ParseRunFile("r.json", text, &warnings);
  ASSERT_TRUE(file.ok()) << file.status();
  // An infer-only run has its tables: no "no train or infer cases" warning.
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  const double pooled = 2 / (1 / 3000.0 + 1 / 40.0);  // 78.947...
  EXPECT_NEAR(*CaseMean(file->cases[0], "images_per_second"), pooled, 1e-9);
  EXPECT_NEAR(*CaseMean(file->cases[0], "flops"), 2 / (1 / 3e12 + 1 / 4e10), 1e-3);
  EXPECT_DOUBLE_EQ(*CaseMean(file->cases[0], "latency_ms"), 25.25);

  // The report's tables read the same figure; the spread is still around
  // the repetitions' mean rate.
  Results results;
  AddRunFile(*file, results, &warnings);
  const Measurement& m =
      results.platforms[0].infer.at(CaseName::Infer("resnet50", "fp32", "synthetic", 2, 0));
  EXPECT_NEAR(*m.Mean("images_per_second"), pooled, 1e-9);
  EXPECT_DOUBLE_EQ(*m.SampleMean("images_per_second"), 1520);
  EXPECT_NEAR(*m.Cv("images_per_second"), std::sqrt(2.0) * 1480 / 1520, 1e-12);
  EXPECT_DOUBLE_EQ(*m.Mean("latency_ms"), 25.25);
}

// Repetitions of different lengths weigh by their iterations: 30 at 100/s
// (0.3 s) and 10 at 50/s (0.2 s) are 40 in 0.5 s, 80/s (not the unweighted
// 66.7, nor the mean of rates, 75). Equal rates give exactly that rate.
TEST(RunFileTest, RatesWeighRepetitionsByTheirIterations) {
  const char* text = R"({"context": {"platform": "p"}, "benchmarks": [
      {"name": "train/vgg16/fp32/synthetic/batch:1/gpus:1", "iterations": 30,
       "images_per_second": 100},
      {"name": "train/vgg16/fp32/synthetic/batch:1/gpus:1", "iterations": 10,
       "images_per_second": 50},
      {"name": "gemm/fp32/cpu/gemm:m512n512k512", "iterations": 7, "flops": 0.1},
      {"name": "gemm/fp32/cpu/gemm:m512n512k512", "iterations": 3, "flops": 0.1},
      {"name": "gemm/fp32/cpu/gemm:m512n512k512", "iterations": 11, "flops": 0.1}]})";
  std::vector<std::string> warnings;
  auto file = ParseRunFile("w.json", text, &warnings);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->cases.size(), 2u);
  EXPECT_DOUBLE_EQ(*CaseMean(file->cases[0], "images_per_second"), 80);
  EXPECT_EQ(*CaseMean(file->cases[1], "flops"), 0.1);
  Results results;
  AddRunFile(*file, results, &warnings);
  const PlatformResults& p = results.platforms[0];
  EXPECT_DOUBLE_EQ(
      *p.train.at(CaseName::Train("vgg16", "fp32", "synthetic", 1, 1)).Mean("images_per_second"),
      80);
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(*p.kernels.begin()->second.Mean("flops"), 0.1);
}

// A file of aggregates only (--benchmark_report_aggregates_only) has only
// Google Benchmark's mean of the repetitions' rates: the report takes it
// and says so, once per file; merged with repetitions of another file,
// its repetitions count at that mean rate, each as long as the others.
TEST(RunFileTest, AggregatesOnlyRatesAreTheMeanOfRatesAndSaySo) {
  const char* aggregates = R"({"context": {"platform": "p"}, "benchmarks": [
      {"name": "infer/resnet50/fp32/synthetic/batch:2/gpus:0_mean",
       "run_name": "infer/resnet50/fp32/synthetic/batch:2/gpus:0", "run_type": "aggregate",
       "aggregate_name": "mean", "repetitions": 2, "iterations": 2, "images_per_second": 80,
       "latency_ms": 25},
      {"name": "infer/resnet50/fp32/synthetic/batch:4/gpus:0_mean",
       "run_name": "infer/resnet50/fp32/synthetic/batch:4/gpus:0", "run_type": "aggregate",
       "aggregate_name": "mean", "repetitions": 2, "iterations": 2, "images_per_second": 90,
       "latency_ms": 44}]})";
  std::vector<std::string> warnings;
  auto file = ParseRunFile("agg.json", aggregates, &warnings);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "agg.json: only the repetitions' aggregates were written "
            "(--benchmark_report_aggregates_only): its rates (images/s, FLOP/s, bytes/s, busbw) "
            "are Google Benchmark's mean of the repetitions' rates, which one fast repetition "
            "pulls up, not total work over total time; write the repetitions (the default) for "
            "that");
  EXPECT_EQ(CaseMean(file->cases[0], "images_per_second"), 80.0);
  // An aggregate's iterations count its repetitions: not read as a repetition's.
  EXPECT_EQ(file->cases[0].mean.count(kIterationsCounter), 0u);

  const char* repetitions = R"({"context": {"platform": "p"}, "benchmarks": [
      {"name": "infer/resnet50/fp32/synthetic/batch:2/gpus:0", "iterations": 10,
       "images_per_second": 100},
      {"name": "infer/resnet50/fp32/synthetic/batch:2/gpus:0", "iterations": 10,
       "images_per_second": 50}]})";
  warnings.clear();
  auto other = ParseRunFile("reps.json", repetitions, &warnings);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  Results results;
  AddRunFile(*other, results, &warnings);
  AddRunFile(*file, results, &warnings);
  const Measurement& m =
      results.platforms[0].infer.at(CaseName::Infer("resnet50", "fp32", "synthetic", 2, 0));
  // 10 at 100/s, 10 at 50/s, and two of 10 at 80/s: 40 in 0.1 + 0.2 + 0.25 s.
  EXPECT_DOUBLE_EQ(*m.Mean("images_per_second"), 40 / 0.55);
  EXPECT_DOUBLE_EQ(*m.SampleMean("images_per_second"), (100 + 50 + 2 * 80) / 4.0);
}

TEST(ResultsTest, MergesFilesOfOnePlatformWeightingAggregateOnlyMeans) {
  // File 1: two repetitions (100, 110); file 2: aggregates only, mean 130 over 3.
  const char* one = R"({"context": {"platform": "p", "git_commit": "a"}, "benchmarks": [
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:1", "images_per_second": 100},
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:1", "images_per_second": 110}]})";
  const char* two = R"({"context": {"platform": "p", "git_commit": "b"}, "benchmarks": [
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:1_mean",
       "run_name": "train/vgg16/fp32/synthetic/batch:64/gpus:1", "run_type": "aggregate",
       "aggregate_name": "mean", "repetitions": 3, "images_per_second": 130}]})";
  std::vector<std::string> warnings;
  Results results;
  AddRunFile(*ParseRunFile("one.json", one, &warnings), results, &warnings);
  AddRunFile(*ParseRunFile("two.json", two, &warnings), results, &warnings);
  ASSERT_EQ(results.platforms.size(), 1u);
  const Measurement& m =
      results.platforms[0].train.at(CaseName::Train("vgg16", "fp32", "synthetic", 64, 1));
  EXPECT_EQ(m.samples, 5);
  EXPECT_DOUBLE_EQ(*m.Mean("images_per_second"), (100 + 110 + 3 * 130) / 5.0);
  EXPECT_EQ(m.commits, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(results.platforms[0].files, (std::vector<std::string>{"one.json", "two.json"}));
}

TEST(RunFileTest, FailedCasesKeepTheirMessage) {
  const char* text = R"({"context": {"platform": "p"}, "benchmarks": [
      {"name": "train/vgg16/fp32/synthetic/batch:512/gpus:1", "error_occurred": true,
       "error_message": "OOM: cudaMalloc failed"},
      {"name": "train/vgg16/fp32/real/batch:64/gpus:1", "error_occurred": true,
       "error_message": "no shards"}]})";
  std::vector<std::string> warnings;
  Results results;
  AddRunFile(*ParseRunFile("f.json", text, &warnings), results, &warnings);
  const auto& train = results.platforms[0].train;
  EXPECT_TRUE(train.at(CaseName::Train("vgg16", "fp32", "synthetic", 512, 1)).oom());
  const Measurement& failed = train.at(CaseName::Train("vgg16", "fp32", "real", 64, 1));
  EXPECT_FALSE(failed.ok());
  EXPECT_FALSE(failed.oom());
  EXPECT_EQ(failed.errors, std::vector<std::string>{"no shards"});
}

TEST(RunFileTest, WarnsOncePerEntryNamingFileAndEntry) {
  const char* text = R"({"context": {"platform": "p"}, "benchmarks": [
      {"name": "train/vgg16/fp64/synthetic/batch:64/gpus:1", "images_per_second": 1},
      {"name": "train/vgg16/fp64/synthetic/batch:64/gpus:1", "images_per_second": 1},
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:1", "flops": 1},
      {"name": "allreduce/nccl/fp32/bytes:1000/ranks:4", "real_time": 1, "time_unit": "s"},
      {"no_name": 1}]})";
  std::vector<std::string> warnings;
  auto file = ParseRunFile("w.json", text, &warnings);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(Contains(warnings,
                       "w.json: entry 'train/vgg16/fp64/synthetic/batch:64/gpus:1': "
                       "precision 'fp64'"));
  EXPECT_TRUE(Contains(warnings,
                       "w.json: entry 'train/vgg16/fp32/synthetic/batch:64/gpus:1': "
                       "has no images_per_second counter"));
  EXPECT_TRUE(Contains(warnings, "w.json: entry '#4': has no \"name\""));
  EXPECT_TRUE(Contains(warnings, "w.json: no train or infer cases"));
  EXPECT_EQ(warnings.size(), 4u);
  // The all-reduce case gave only a time: bandwidths follow nccl-tests' definitions.
  ASSERT_EQ(file->cases.size(), 1u);
  const Counters& c = file->cases[0].iterations[0];
  EXPECT_DOUBLE_EQ(c.at("algbw"), 1000);
  EXPECT_DOUBLE_EQ(c.at("busbw"), 1000 * 2.0 * 3 / 4);
}

// Each collective's busbw is completed with its own nccl-tests factor (the
// one table, BusFactor), and in-place bandwidths are read.
TEST(RunFileTest, EachCollectiveCompletesBusbwWithItsOwnFactor) {
  const char* text = R"({"context": {"platform": "p"}, "benchmarks": [
      {"name": "allgather/nccl/fp32/none/bytes:1000/ranks:4", "real_time": 1, "time_unit": "s"},
      {"name": "reducescatter/mpi/bf16/max/bytes:1000/ranks:4", "real_time": 1, "time_unit": "s"},
      {"name": "broadcast/local/int32/none/bytes:1000/ranks:4", "real_time": 1, "time_unit": "s"},
      {"name": "reduce/local/fp64/avg/bytes:1000/ranks:4", "real_time": 1, "time_unit": "s",
       "algbw_inplace": 7, "busbw_inplace": 7}]})";
  std::vector<std::string> warnings;
  auto file = ParseRunFile("c.json", text, &warnings);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->cases.size(), 4u);
  const double factors[] = {0.75, 0.75, 1, 1};
  for (size_t i = 0; i < 4; ++i) {
    const Counters& c = file->cases[i].iterations[0];
    EXPECT_DOUBLE_EQ(c.at("algbw"), 1000) << file->cases[i].entry;
    EXPECT_DOUBLE_EQ(c.at("busbw"), 1000 * factors[i]) << file->cases[i].entry;
  }
  EXPECT_DOUBLE_EQ(file->cases[3].iterations[0].at("busbw_inplace"), 7);
}

TEST(ResultsTest, PlatformFallsBackToHostNameWithAWarning) {
  const char* text = R"({"context": {"host_name": "node7"}, "benchmarks": []})";
  std::vector<std::string> warnings;
  auto file = ParseRunFile("h.json", text, &warnings);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(PlatformOf(*file, &warnings), "node7");
  EXPECT_TRUE(Contains(warnings, "h.json: context has no \"platform\""));
}

}  // namespace
}  // namespace cnnbench::report
