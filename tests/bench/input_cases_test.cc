// The input cases on the timing harness: they register under their names,
// run a few iterations over the generated data set when no --data_dir is
// given, report images per second and per-stage counters; a bad --data_dir
// or flag is an error before any case runs; a bad record fails the case
// naming its file, or is counted under --on_bad_record=skip.
#include "bench/cases/input/input_cases.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bench/harness/harness.h"
#include "bench/suite/suite.h"
#include "benchmark/benchmark.h"
#include "gtest/gtest.h"
#include "input/pipeline/dataset_maker.h"
#include "tests/bench/recorder.h"


namespace cnnbench::bench {
namespace {

std::string TempDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return tmp != nullptr ? tmp : "/tmp";
}

class InputCasesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    benchmark::ClearRegisteredBenchmarks();
    options_.input.threads = {1, 2};
    options_.input.batch = 4;
    options_.input.on_bad_record = input::BadRecordPolicy::kFail;
    options_.train.steps = 3;
    options_.train.warmup_steps = 1;
    options_.repetitions = 2;
    options_.image_size = 32;
  }
  void TearDown() override { benchmark::ClearRegisteredBenchmarks(); }

  // Registers the cases and runs those matching `filter`.
  std::vector<BenchRun> RunCases(const std::string& filter, absl::Status* registered = nullptr) {
    Harness harness(TimingSettings{.repetitions = options_.repetitions});
    const absl::Status s = RegisterInputCases(options_, harness);
    if (registered != nullptr) *registered = s;
    if (!s.ok()) return {};
    names_ = harness.progress().names();
    Recorder recorder;
    benchmark::RunSpecifiedBenchmarks(&recorder, filter);
    harness.Release();
    return recorder.iterations;
  }

  SuiteOptions options_;
  std::vector<std::string> names_;
};

TEST_F(InputCasesTest, RegistersEveryFormatPreprocessingAndThreadCount) {
  RunCases("^$");
  std::vector<std::string> expected;
  for (const char* format : {"tfrecord", "folder"})
    for (const char* preprocess : {"train", "eval"})
      for (int threads : {1, 2})
        expected.push_back(absl::StrCat("input/", format, "/", preprocess, "/threads:", threads));
  EXPECT_EQ(names_, expected);
}

TEST_F(InputCasesTest, RunsOnTheGeneratedDataSetAndReportsEachStage) {
  const std::vector<BenchRun> runs =
      RunCases("^input/(tfrecord/train/threads:2|folder/eval/threads:1)/");
  ASSERT_EQ(runs.size(), 4u);  // two cases, two repetitions
  for (const BenchRun& r : runs) {
    SCOPED_TRACE(r.benchmark_name());
    ASSERT_FALSE(r.error_occurred) << r.error_message;
    EXPECT_EQ(r.iterations, 3);
    for (const char* counter : {"images_per_second", "decode_capacity_images_per_second",
                                "read_capacity_images_per_second"}) {
      ASSERT_TRUE(r.counters.count(counter)) << counter;
      EXPECT_GT(r.counters.at(counter).value, 0) << counter;
    }
    // Left out when zero (a repetition served from records already
    // buffered; nothing skipped), as a NaN variation would not be JSON.
    if (r.counters.count("bytes_read_per_second")) {
      EXPECT_GT(r.counters.at("bytes_read_per_second").value, 0);
    }
    EXPECT_EQ(r.counters.count("skipped_records"), 0u);
    // Batches of 4, three per repetition, over the repetition's manual time.
    EXPECT_NEAR(r.counters.at("images_per_second").value * r.real_accumulated_time / 12, 1.0, 1e-6);
  }
  EXPECT_TRUE(absl::StrContains(runs[0].report_label,
                                "tfrecord train, 1 reader + 2 decode threads, batch 4 32x32"))
      << runs[0].report_label;
  EXPECT_TRUE(absl::StrContains(runs[2].report_label, "folder validation")) << runs[2].report_label;
}

TEST_F(InputCasesTest, ABadDataDirIsAnErrorBeforeAnyCaseRuns) {
  for (const auto& [dir, message] : {std::pair{TempDir() + "/no_such_data", "no such folder"},
                                     std::pair{TempDir() + "/empty_data", "the folder is empty"}}) {
    ASSERT_EQ(std::system(absl::StrCat("mkdir -p '", TempDir(), "/empty_data'").c_str()), 0);
    options_.data_dir = dir;
    absl::Status registered;
    RunCases("", &registered);
    EXPECT_FALSE(registered.ok());
    EXPECT_TRUE(absl::StrContains(registered.message(), "--data_dir=" + dir)) << registered;
    EXPECT_TRUE(absl::StrContains(registered.message(), message)) << registered;
  }
  // A folder of other files: neither shards nor class folders.
  const std::string other = TempDir() + "/other_data";
  ASSERT_EQ(std::system(
                absl::StrCat("mkdir -p '", other, "' && echo x > '", other, "/notes.txt'").c_str()),
            0);
  options_.data_dir = other;
  absl::Status registered;
  RunCases("", &registered);
  EXPECT_TRUE(absl::StrContains(registered.message(), "shard")) << registered;
  EXPECT_TRUE(absl::StrContains(registered.message(), "class folders")) << registered;
}

// The input flags' bad values: tests/bench/suite_flags_test.cc.

TEST_F(InputCasesTest, ABadRecordFailsTheCaseNamingItOrIsCountedUnderSkip) {
  const std::string dir = TempDir() + "/bad_records";
  ASSERT_EQ(std::system(absl::StrCat("rm -rf '", dir, "'").c_str()), 0);
  input::DatasetSpec spec;
  spec.out = dir;
  spec.images = 12;
  spec.classes = 3;
  spec.format = input::DataFormat::kFolder;
  spec.min_side = 40;
  spec.max_side = 60;
  ASSERT_TRUE(input::MakeDataset(spec).ok());
  const std::string bad = dir + "/train/n00000001/broken.JPEG";
  std::ofstream(bad) << "not a jpeg";
  options_.data_dir = dir;
  options_.input.threads = {1};

  std::vector<BenchRun> runs = RunCases("^input/folder/train/");
  ASSERT_FALSE(runs.empty());
  EXPECT_TRUE(runs[0].error_occurred);
  EXPECT_TRUE(absl::StrContains(runs[0].error_message, bad)) << runs[0].error_message;

  benchmark::ClearRegisteredBenchmarks();
  options_.input.on_bad_record = input::BadRecordPolicy::kSkip;
  runs = RunCases("^input/folder/train/");
  ASSERT_EQ(runs.size(), 2u);
  for (const BenchRun& r : runs) {
    ASSERT_FALSE(r.error_occurred) << r.error_message;
    EXPECT_GE(r.counters.at("skipped_records").value, 1);
    EXPECT_TRUE(absl::StrContains(r.report_label, "bad records (decode ")) << r.report_label;
  }
}

}  // namespace
}  // namespace cnnbench::bench
