// The report's inference tables, from inference.json (written by fixture_gen
// from inference.spec, whose figures make every cell exact): one table per
// model, precision, data kind and device with rows = batch sizes, the
// latency percentiles, accuracy on real data, the training throughput at the
// same batch and the ratio; the charts against batch; and the training
// cases' batch accuracy.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tools/report/environment_tables.h"
#include "tools/report/infer_tables.h"
#include "tools/report/report.h"

namespace cnnbench::report {
namespace {

using Rows = std::vector<std::vector<std::string>>;

Results LoadFixture() {
  std::vector<std::string> warnings, errors;
  Results results = LoadResults({"tests/tools/testdata/inference.json"}, &warnings, &errors);
  EXPECT_TRUE(errors.empty()) << absl::StrJoin(errors, "\n");
  return results;
}

const Section* FindSection(const PlatformReport& p, const std::string& title) {
  for (const Section& s : p.sections)
    if (s.title == title) return &s;
  return nullptr;
}

TEST(InferTableTest, OneTablePerModelPrecisionDataAndDeviceWithRowsByBatch) {
  const Results results = LoadFixture();
  ASSERT_EQ(results.platforms.size(), 1u);
  const Report report = BuildReport(results, "t", 0.05);
  const Section* s = FindSection(report.platforms[0], "Inference");
  ASSERT_NE(s, nullptr);
  std::vector<std::string> titles;
  for (const Table& t : s->tables) titles.push_back(t.title);
  EXPECT_EQ(titles, (std::vector<std::string>{
                        "Inference, MobileNetV2, fp32, real data, CPU",
                        "Inference, ResNet-50 v1.5, bf16, synthetic data, CPU",
                        "Inference, ResNet-50 v1.5, fp32, synthetic data, CPU",
                    }));
  const Table& mobilenet = s->tables[0];
  EXPECT_EQ(mobilenet.header,
            (std::vector<std::string>{"batch", "images/sec", "latency mean (ms)", "p90", "p95",
                                      "p99", "max", "top-1", "top-5", "training images/sec",
                                      "inference/training"}));
  EXPECT_EQ(
      mobilenet.rows,
      (Rows{{"8", "400", "20.0", "21.0", "21.0", "22.0", "22.0", "12.5%", "50.0%", "-", "-"}}));
  const Table& fp32 = s->tables[2];
  EXPECT_EQ(fp32.header.size(), 9u);  // no accuracy columns on synthetic data
  EXPECT_EQ(fp32.rows, (Rows{
                           {"1", "50.0", "20.0", "21.0", "22.0", "25.0", "25.0", "-", "-"},
                           {"16", "80.0", "200", "205", "210", "230", "230", "20.0", "4.00"},
                           {"64", "OOM", "-", "-", "-", "-", "-", "-", "-"},
                       }));
  const std::string notes = absl::StrJoin(s->tables.front().notes, "\n");
  EXPECT_TRUE(absl::StrContains(notes, "nearest-rank")) << notes;
  EXPECT_TRUE(absl::StrContains(notes, "untrained weights")) << notes;
  EXPECT_TRUE(absl::StrContains(absl::StrJoin(fp32.notes, "\n"), "Only 30 timed batches"));
  // Throughput and p99 against batch for the model with several batches,
  // one line per precision.
  ASSERT_EQ(s->charts.size(), 2u);
  EXPECT_EQ(s->charts[0].x, (std::vector<std::string>{"1", "16", "64"}));
  EXPECT_EQ(s->charts[0].series, (std::vector<std::string>{"bf16", "fp32"}));
  EXPECT_EQ(s->charts[0].values[1][1], 80.0);
  EXPECT_FALSE(s->charts[0].values[1][2].has_value());  // OOM
  EXPECT_FALSE(s->charts[0].values[0][0].has_value());  // bf16 not run at batch 1
  EXPECT_EQ(s->charts[1].y_label, "p99 latency (ms)");
  EXPECT_EQ(s->charts[1].values[1][0], 25.0);
}

// Issue 46 item 10: one fast repetition (3000 images/s) beside a slow one
// (40) at batch 2, 30 batches each: 120 images in 0.02 + 1.5 s, so the row
// reads 78.9 images/s beside its 25.3 ms mean latency (2 images / 25.3 ms),
// not the mean of the two rates, 1520.
Results FastAndSlowRepetitions() {
  const char* text = R"({"context": {"platform": "p"}, "benchmarks": [
      {"name": "infer/resnet50/fp32/synthetic/batch:2/gpus:0/iterations:30/manual_time",
       "run_name": "infer/resnet50/fp32/synthetic/batch:2/gpus:0/iterations:30/manual_time",
       "run_type": "iteration", "iterations": 30, "images_per_second": 3000,
       "latency_ms": 0.6666666666666666, "latency_ms_p99": 1},
      {"name": "infer/resnet50/fp32/synthetic/batch:2/gpus:0/iterations:30/manual_time",
       "run_name": "infer/resnet50/fp32/synthetic/batch:2/gpus:0/iterations:30/manual_time",
       "run_type": "iteration", "iterations": 30, "images_per_second": 40, "latency_ms": 50,
       "latency_ms_p99": 1.01}]})";
  std::vector<std::string> warnings;
  absl::StatusOr<RunFile> file = ParseRunFile("r.json", text, &warnings);
  EXPECT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  Results results;
  if (file.ok()) AddRunFile(*file, results, &warnings);
  return results;
}

TEST(InferTableTest, ImagesPerSecondIsTotalImagesOverTotalTime) {
  const Results results = FastAndSlowRepetitions();
  // (A cv of 138%: no noise mark wanted here.)
  std::optional<Section> s = InferSection(results.platforms[0], /*max_cv=*/10);
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->tables.size(), 1u);
  ASSERT_EQ(s->tables[0].rows.size(), 1u);
  const std::vector<std::string>& row = s->tables[0].rows[0];
  EXPECT_EQ(std::vector<std::string>(row.begin(), row.begin() + 3),
            (std::vector<std::string>{"2", "78.9", "25.3"}));
}

// Issue 46 item 20: the cv footnote names each noisy cell's column as well
// as its row (it read "batch 2: 138%; batch 2: 138%").
TEST(InferTableTest, TheCvFootnoteNamesTheColumn) {
  const Results results = FastAndSlowRepetitions();
  std::optional<Section> s = InferSection(results.platforms[0], 0.05);
  ASSERT_TRUE(s.has_value());
  const Table& t = s->tables.at(0);
  EXPECT_EQ(t.rows.at(0).at(1), "78.9[1]");
  EXPECT_EQ(t.rows.at(0).at(2), "25.3[1]");
  EXPECT_EQ(t.rows.at(0).at(5), "1.00");  // p99: 1 and 1.01, cv 0.7%
  EXPECT_EQ(t.notes.at(0),
            "[1] cv over repetitions above 5% (--max_cv; see Spread over repetitions) "
            "(batch 2, images/sec: 138%; batch 2, latency mean: 138%)");
}

// Issue 46 item 20: a synthetic inference-only run's dataset is synthetic,
// as a training run's is, not n/a.
TEST(InferTableTest, AnInferenceOnlyRunSaysItsDataKind) {
  const Results results = FastAndSlowRepetitions();
  ASSERT_TRUE(results.platforms.at(0).train.empty());
  const Table t = EnvironmentTable(results.platforms[0]);
  bool found = false;
  for (const std::vector<std::string>& row : t.rows) {
    if (row.at(0) != "Dataset") continue;
    EXPECT_EQ(row.at(1), "synthetic");
    found = true;
  }
  EXPECT_TRUE(found);
}

TEST(InferTableTest, TrainingCasesShowTheirBatchAccuracy) {
  const Results results = LoadFixture();
  std::optional<Table> t = TrainAccuracyTable(results.platforms[0]);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(
      t->rows,
      (Rows{{"train/resnet50_v1.5/fp32/synthetic/batch:16/gpus:0", "6.2%", "25.0%", "6.50"}}));
}

TEST(InferTableTest, APlatformWithoutInferenceHasNoSection) {
  std::vector<std::string> warnings, errors;
  const Results results = LoadResults({"tests/tools/testdata/cpu_box.json"}, &warnings, &errors);
  ASSERT_FALSE(results.platforms.empty());
  EXPECT_FALSE(InferSection(results.platforms[0], 0.05).has_value());
  EXPECT_FALSE(TrainAccuracyTable(results.platforms[0]).has_value());
}

}  // namespace
}  // namespace cnnbench::report
