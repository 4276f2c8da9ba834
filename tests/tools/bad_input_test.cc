// Bad input: a clear error or warning naming the file and entry, while the
// other files still report.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tools/report/report.h"

namespace cnnbench::report {
namespace {

const std::string kData = "tests/tools/testdata/";

bool Contains(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& line : lines) {
    if (line.find(part) != std::string::npos) return true;
  }
  return false;
}

ReportOutput RunAll() {
  ReportOptions options;
  options.inputs = {kData + "not_json.json",  kData + "not_benchmark.json", kData + "no_train.json",
                    kData + "bad_names.json", kData + "missing.json",       kData + "cpu_box.json"};
  return RunReport(options, nullptr);
}

TEST(BadInputTest, UnusableFilesAreErrorsNamingTheFile) {
  ReportOutput out = RunAll();
  EXPECT_EQ(out.exit_code, kExitBadInput);
  ASSERT_EQ(out.errors.size(), 3u);
  EXPECT_TRUE(Contains(out.errors, kData + "not_json.json: not JSON: "));
  EXPECT_TRUE(Contains(out.errors, kData + "not_benchmark.json: not Google Benchmark JSON output"));
  EXPECT_TRUE(Contains(out.errors, kData + "missing.json: cannot open"));
}

TEST(BadInputTest, EntriesOffTheGrammarAreWarningsNamingFileAndEntry) {
  ReportOutput out = RunAll();
  const std::string bad = kData + "bad_names.json: entry '";
  for (const std::string& expected : {
           bad + "train/resnet50/fp64/synthetic/batch:64/gpus:1/iterations:1/manual_time': "
                 "precision 'fp64' is not one of fp32, tf32, fp16, bf16; skipped",
           bad + "train/resnet50/fp32/synthetic/batch:64/iterations:1/manual_time': "
                 "'iterations:1' where gpus:<G> belongs; skipped",
           bad + "train/resnet50/fp32/imagenet/batch:64/gpus:1/iterations:1/manual_time': "
                 "data 'imagenet' is neither synthetic nor real; skipped",
           bad + "BM_MemcpyLarge/iterations:1/manual_time': not a cnnbench case name",
           bad + "conv/sideways/fp32/cpu/conv:mb1/iterations:1/manual_time': does not match conv/",
           bad + "train/resnet5/fp32/synthetic/batch:64/gpus:1/iterations:1/manual_time': "
                 "model 'resnet5' is not in tf_cnn_benchmarks' zoo",
           bad + "train/resnet50/fp32/synthetic/batch:64/gpus:1/iterations:1/manual_time': "
                 "has no images_per_second counter; skipped",
           kData + "no_train.json: no train or infer cases",
       }) {
    EXPECT_TRUE(Contains(out.warnings, expected)) << "no warning: " << expected;
  }
}

TEST(BadInputTest, TheOtherFilesStillReport) {
  ReportOutput out = RunAll();
  EXPECT_NE(out.text.find("## cpu-epyc-2c"), std::string::npos);
  EXPECT_NE(out.text.find("## kernels-only"), std::string::npos);
  EXPECT_NE(out.text.find("## badnames"), std::string::npos);
  // bad_names.json's good case and its unknown model are both shown.
  EXPECT_NE(out.text.find("| GPUs | ResNet-50 | resnet5 |\n| --- | --- | --- |\n| 1 | 190 | 100 |"),
            std::string::npos)
      << out.text;
}

TEST(BadInputTest, NoInputOrUnknownFormat) {
  ReportOptions options;
  EXPECT_EQ(RunReport(options, nullptr).exit_code, kExitBadInput);
  options.inputs = {kData + "cpu_box.json"};
  options.format = "pdf";
  ReportOutput out = RunReport(options, nullptr);
  EXPECT_EQ(out.exit_code, kExitBadInput);
  EXPECT_TRUE(Contains(out.errors, "unknown --format=pdf"));
}

// An input that cannot be used says why (the system's reason; a folder is
// named as one), and when no input can be used no report is written, not
// even its title; the nccl-tests layout of a file without collectives is
// an error, not an empty success.
TEST(BadInputTest, UnusableInputsSayWhyAndWriteNoReport) {
  ReportOptions options;
  options.inputs = {kData + "missing.json"};
  ReportOutput out = RunReport(options, nullptr);
  EXPECT_EQ(out.exit_code, kExitBadInput);
  EXPECT_TRUE(Contains(out.errors, "missing.json: cannot open: No such file or directory"));
  EXPECT_EQ(out.text, "");
  options.inputs = {"tests/tools/testdata"};
  out = RunReport(options, nullptr);
  EXPECT_EQ(out.exit_code, kExitBadInput);
  EXPECT_TRUE(Contains(out.errors, "testdata: a folder, not a JSON file"));
  EXPECT_EQ(out.text, "");
  options.inputs = {kData + "cpu_box.json"};
  options.format = "nccl-tests";
  out = RunReport(options, nullptr);
  EXPECT_EQ(out.exit_code, kExitBadInput);
  EXPECT_TRUE(Contains(out.errors, "--format=nccl-tests: the inputs hold no collective case"));
}

// A regression threshold outside [0, 1) (below 0 flags a file compared with
// itself, NaN nothing) and a --max_cv that is not a number are refused.
TEST(BadInputTest, ThresholdsOutsideTheirRangeAreRefused) {
  for (double threshold : {-1.0, 1.0, 2.0, std::nan("")}) {
    ReportOptions options;
    options.inputs = {kData + "cpu_box.json"};
    options.compare = {kData + "cpu_box.json"};
    options.regression_threshold = threshold;
    ReportOutput out = RunReport(options, nullptr);
    EXPECT_EQ(out.exit_code, kExitBadInput) << threshold;
    EXPECT_TRUE(Contains(out.errors, "--regression_threshold=")) << threshold;
    EXPECT_TRUE(out.regressions.empty()) << threshold;
  }
  ReportOptions options;
  options.inputs = {kData + "cpu_box.json"};
  options.max_cv = std::nan("");
  EXPECT_EQ(RunReport(options, nullptr).exit_code, kExitBadInput);
  options.max_cv = 0.05;
  options.compare = {kData + "cpu_box.json"};
  options.regression_threshold = 0;
  EXPECT_EQ(RunReport(options, nullptr).exit_code, kExitOk) << "0 is a threshold";
}

}  // namespace
}  // namespace cnnbench::report
