// Spread over repetitions (pooled across files, from repetitions or from
// Google Benchmark's aggregates), non-finite counters, and the settings that
// keep runs apart.
#include "tools/report/spread.h"

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tools/report/context_keys.h"
#include "tools/report/report.h"
#include "tools/report/results.h"
#include "tools/report/run_file.h"

namespace cnnbench::report {
namespace {

const CaseName kVgg = CaseName::Train("vgg16", "fp32", "synthetic", 64, 1);

TEST(QuoteNonFiniteNumbersTest, QuotesBareWordsOnly) {
  EXPECT_EQ(
      QuoteNonFiniteNumbers(
          R"({"a": NaN, "b": [Infinity,-Infinity, -NaN], "s": "NaN: Infinity", "t": "\"NaN"})"),
      R"({"a": "NaN", "b": ["Infinity","-Infinity", "-NaN"], "s": "NaN: Infinity", "t": "\"NaN"})");
  EXPECT_EQ(QuoteNonFiniteNumbers(R"({"a": NaNa, "b": 1.5})"), R"({"a": NaNa, "b": 1.5})");
}

TEST(SpreadTest, NonFiniteCountersAreKeptAndMakeNoMean) {
  const char* text = R"({"context": {"platform": "p"}, "benchmarks": [
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:1", "images_per_second": NaN},
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:1", "images_per_second": 110,
       "real_time": Infinity, "time_unit": "ms"}]})";
  std::vector<std::string> warnings;
  auto file = ParseRunFile("n.json", text, &warnings);
  ASSERT_TRUE(file.ok()) << file.status();
  Results results;
  AddRunFile(*file, results, &warnings);
  const Measurement& m = results.platforms[0].train.at(kVgg);
  EXPECT_TRUE(m.ok());
  EXPECT_FALSE(m.Mean("images_per_second"));
  EXPECT_EQ(m.NotFiniteText("images_per_second"),
            "images_per_second was NaN in 1 of 2 repetitions");
  EXPECT_EQ(m.NotFiniteText("seconds"), "seconds was Infinity in 1 of 1 repetition");
}

TEST(SpreadTest, PoolsRepetitionsAndAggregatesAcrossFiles) {
  // File one: repetitions 100 and 110; file two: aggregates only, mean 130
  // and stddev 10 over 3. Together: mean 120 and sum of squares 73000 over
  // 5 samples, so a variance of (73000 - 5 * 120^2) / 4 = 250.
  const char* one = R"({"context": {"platform": "p"}, "benchmarks": [
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:1", "images_per_second": 100},
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:1", "images_per_second": 110}]})";
  const char* two = R"({"context": {"platform": "p"}, "benchmarks": [
      {"name": "x_mean", "run_name": "train/vgg16/fp32/synthetic/batch:64/gpus:1",
       "run_type": "aggregate", "aggregate_name": "mean", "repetitions": 3,
       "images_per_second": 130},
      {"name": "x_stddev", "run_name": "train/vgg16/fp32/synthetic/batch:64/gpus:1",
       "run_type": "aggregate", "aggregate_name": "stddev", "repetitions": 3,
       "images_per_second": 10}]})";
  std::vector<std::string> warnings;
  Results results;
  AddRunFile(*ParseRunFile("one.json", one, &warnings), results, &warnings);
  AddRunFile(*ParseRunFile("two.json", two, &warnings), results, &warnings);
  const Measurement& m = results.platforms[0].train.at(kVgg);
  EXPECT_DOUBLE_EQ(*m.Mean("images_per_second"), 120);
  EXPECT_NEAR(*m.Stddev("images_per_second"), std::sqrt(250.0), 1e-9);
  EXPECT_NEAR(*m.Cv("images_per_second"), std::sqrt(250.0) / 120, 1e-12);
  EXPECT_EQ(SpreadCell(&m, "images_per_second"), "13% (5)");
}

TEST(SpreadTest, AMeanWithoutItsStddevLeavesTheSpreadUnknown) {
  const char* text = R"({"context": {"platform": "p"}, "benchmarks": [
      {"name": "x_mean", "run_name": "train/vgg16/fp32/synthetic/batch:64/gpus:1",
       "run_type": "aggregate", "aggregate_name": "mean", "repetitions": 3,
       "images_per_second": 130}]})";
  std::vector<std::string> warnings;
  Results results;
  AddRunFile(*ParseRunFile("m.json", text, &warnings), results, &warnings);
  const Measurement& m = results.platforms[0].train.at(kVgg);
  EXPECT_FALSE(m.Stddev("images_per_second"));
  EXPECT_EQ(SpreadCell(&m, "images_per_second"), "? (3)");
  EXPECT_EQ(SpreadCell(nullptr, "images_per_second"), "-");
}

TEST(SpreadTest, FormatCv) {
  EXPECT_EQ(FormatCv(0.0034), "0.34%");
  EXPECT_EQ(FormatCv(0.005), "0.5%");
  EXPECT_EQ(FormatCv(0.0512), "5.1%");
  EXPECT_EQ(FormatCv(0.05), "5%");
  EXPECT_EQ(FormatCv(0.1234), "12%");
  EXPECT_EQ(FormatCv(1.5e-8), "0%");
}

TEST(SpreadTest, MaxCvSetsWhichCellsAreMarked) {
  ReportOptions options;
  options.inputs = {"tests/tools/testdata/noisy.json"};
  ReportOutput out = RunReport(options, nullptr);
  EXPECT_NE(out.text.find("| 1 | 100[1] |"), std::string::npos) << out.text;
  options.max_cv = 0.25;  // the 20% cell is within, the 38% GEMM is not
  out = RunReport(options, nullptr);
  EXPECT_NE(out.text.find("| 1 | 100 |"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("[1] cv over repetitions above 25% (--max_cv; see Spread over "
                          "repetitions) (gemm:m1024n1024k1024, fp32: 38%)"),
            std::string::npos)
      << out.text;
  options.max_cv = 0.001;  // now 200 +- 1 (0.5%) is noisy too
  out = RunReport(options, nullptr);
  EXPECT_NE(out.text.find("| 2 | 200[1] |"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("(ResNet-50, 1 GPU: 20%; ResNet-50, 2 GPUs: 0.5%)"), std::string::npos)
      << out.text;
  options.max_cv = -1;
  EXPECT_EQ(RunReport(options, nullptr).exit_code, kExitBadInput);
}

RunFile FileWith(const std::string& path,
                 std::vector<std::pair<std::string, std::string>> context) {
  RunFile file;
  file.path = path;
  file.context = std::move(context);
  return file;
}

TEST(SettingsTest, AnUnrecordedSettingMatchesAnyValue) {
  std::vector<RunFile> files = {
      FileWith("a.json", {{"platform", "p"}, {"steps", "100"}, {"image_size", "224"}}),
      FileWith("b.json", {{"platform", "p"}}),  // older: records no settings
      FileWith("c.json", {{"platform", "p"}, {"steps", "5"}, {"image_size", "224"}}),
      FileWith("d.json", {{"platform", "q"}, {"steps", "5"}}),
      FileWith("e.json", {{"platform", "p"}, {"steps", "100"}, {"date", "other"}}),
  };
  std::vector<std::string> warnings;
  EXPECT_EQ(ReportedPlatforms(files, &warnings),
            (std::vector<std::string>{"p (steps=100)", "p (steps=100)", "p (steps=5)", "q",
                                      "p (steps=100)"}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "platform 'p': runs differ in steps, which change the figures; reported apart as "
            "'p (steps=100)' (a.json, b.json, e.json), 'p (steps=5)' (c.json)");
}

// A run under ONEDNN_MAX_CPU_ISA=AVX2 on an AVX-512 machine is another
// setting: its fp32 cells are never averaged with an uncapped run's.
TEST(SettingsTest, AnIsaCappedRunIsReportedApart) {
  std::vector<RunFile> files = {
      FileWith("bf_def.json", {{"platform", "p"},
                               {"onednn_cpu_isa", "avx512_core_bf16"},
                               {"onednn_max_cpu_isa", "none"}}),
      FileWith("bf_AVX2.json", {{"platform", "p"},
                                {"onednn_cpu_isa", "avx2"},
                                {"onednn_max_cpu_isa", "ONEDNN_MAX_CPU_ISA=AVX2"}}),
  };
  std::vector<std::string> warnings;
  const std::vector<std::string> platforms = ReportedPlatforms(files, &warnings);
  ASSERT_EQ(platforms.size(), 2u);
  EXPECT_NE(platforms[0], platforms[1]) << "merged: " << platforms[0];
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("onednn_cpu_isa"), std::string::npos) << warnings[0];
}

// One classification: no key is in two classes (tools/report/context_keys.h).
TEST(SettingsTest, EveryClassifiedKeyIsInExactlyOneClass) {
  std::map<std::string, int> seen;
  for (const auto* keys : {&MachineKeys(), &MeasurementSettingKeys(), &EnvironmentKeys(),
                           &RunRecordKeys()})
    for (const std::string& key : *keys) ++seen[key];
  for (const auto& [key, count] : seen) EXPECT_EQ(count, 1) << key;
  EXPECT_EQ(ClassOfKey("driver_version"), KeyClass::kEnvironment);
  EXPECT_EQ(ClassOfKey("gpu_model"), KeyClass::kMachine);
  EXPECT_EQ(ClassOfKey("steps"), KeyClass::kSetting);
  EXPECT_EQ(ClassOfKey("date"), KeyClass::kRunRecord);
  EXPECT_EQ(ClassOfKey("no_such_key"), std::nullopt);
}

// The report merges only runs that agree on the machine, the settings and
// the environment: a driver update or another memory size splits a
// platform's runs; when they were made and on which host does not.
TEST(SettingsTest, RunsApartByMachineOrEnvironmentTogetherByTheirRecord) {
  std::vector<RunFile> files = {
      FileWith("a.json", {{"platform", "p"}, {"driver_version", "580.1"}}),
      FileWith("b.json", {{"platform", "p"}, {"driver_version", "590.2"}}),
      FileWith("c.json", {{"platform", "q"}, {"memory_bytes", "1000"}}),
      FileWith("d.json", {{"platform", "q"}, {"memory_bytes", "2000"}}),
      FileWith("e.json", {{"platform", "r"}, {"date", "monday"}, {"host_name", "h1"}}),
      FileWith("f.json", {{"platform", "r"}, {"date", "tuesday"}, {"host_name", "h2"}}),
  };
  std::vector<std::string> warnings;
  const std::vector<std::string> platforms = ReportedPlatforms(files, &warnings);
  ASSERT_EQ(platforms.size(), 6u);
  EXPECT_NE(platforms[0], platforms[1]);
  EXPECT_NE(platforms[2], platforms[3]);
  EXPECT_EQ(platforms[4], "r");
  EXPECT_EQ(platforms[5], "r");
}

TEST(SettingsTest, TheKeysThatCount) {
  const std::vector<std::string>& keys = SettingKeys();
  for (const char* key : {"preset", "steps", "warmup_steps", "image_size", "cpu_backend",
                          "framework", "build_config", "cpu_isa", "onednn_version"}) {
    EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end()) << key;
  }
  // What differs between any two runs never splits them.
  for (const char* key : {"date", "git_commit", "host_name", "repetitions", "data_dir"}) {
    EXPECT_EQ(std::find(keys.begin(), keys.end(), key), keys.end()) << key;
  }
}

}  // namespace
}  // namespace cnnbench::report
