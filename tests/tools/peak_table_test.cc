// The CPU's peak in the report: the peak table of the Kernels section, and
// each CPU training step's FLOP/s against the peak of its precision.
// cpu_peak.json and cpu_peak_no_bf16.json were written by fixture_gen from
// the .spec files beside them, whose figures make every fraction exact (and
// different from what a wrong peak would give).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/tools/report_testing.h"
#include "tools/report/peak_tables.h"
#include "tools/report/records.h"
#include "tools/report/report.h"

namespace cnnbench::report {
namespace {

using Rows = std::vector<std::vector<std::string>>;
using testing::RateNear;

Results Load(const std::vector<std::string>& files) {
  std::vector<std::string> paths, warnings, errors;
  for (const std::string& f : files) paths.push_back("tests/tools/testdata/" + f);
  Results results = LoadResults(paths, &warnings, &errors);
  EXPECT_TRUE(errors.empty()) << absl::StrJoin(errors, "\n");
  return results;
}

// The first table whose title starts with `prefix`, in the section `section`.
const Table* FindTable(const PlatformReport& p, const std::string& section,
                       const std::string& prefix) {
  for (const Section& s : p.sections)
    if (s.title == section)
      for (const Table& t : s.tables)
        if (absl::StartsWith(t.title, prefix)) return &t;
  return nullptr;
}

std::string Notes(const Table& t) { return absl::StrJoin(t.notes, "\n"); }

TEST(PeakTableTest, EachCpuStepAgainstThePeakOfItsPrecision) {
  const Results results = Load({"cpu_peak.json"});
  ASSERT_EQ(results.platforms.size(), 1u);
  const Report report = BuildReport(results, "t", 0.05);
  const Table* t = FindTable(report.platforms[0], "Training step vs the CPU's peak",
                             "Training step vs the CPU's peak");
  ASSERT_NE(t, nullptr);
  // The fp32 peak with the most threads, measured in the same run.
  EXPECT_EQ(t->title, "Training step vs the CPU's peak (peak/fp32/cpu/threads:2, same run)");
  EXPECT_EQ(t->header,
            (std::vector<std::string>{"Model", "Precision", "Data", "Batch", "Images/sec",
                                      "Step GFLOP/s", "Peak GFLOP/s", "% of peak"}));
  // 80 / 320 and 144 / 320 (not / 160, the 1-thread peak); the bf16 step
  // against the bf16 peak, 128 / 1280 (not / 320); AlexNet's run has no
  // flops counter; the GPU step is no row.
  const Rows expected = {
      {"ResNet-50", "fp32", "synthetic", "16", "10.0", "80.0", "320", "25.0%"},
      {"ResNet-50", "fp32", "synthetic", "16 x 2 replicas", "18.0", "144", "320", "45.0%"},
      {"ResNet-50", "bf16", "synthetic", "16", "16.0", "128", "1280", "10.0%"},
      {"AlexNet", "fp32", "synthetic", "16", "40.0", "-[1]", "320", "-"},
  };
  EXPECT_EQ(t->rows, expected);
  EXPECT_TRUE(absl::StrContains(Notes(*t), "[1] no flops counter")) << Notes(*t);
  EXPECT_TRUE(absl::StrContains(Notes(*t), "3 x the model's forward FLOPs per image")) << Notes(*t);

  const PlatformResults& p = results.platforms[0];
  ASSERT_NE(ReferencePeak(p, "fp32"), nullptr);
  EXPECT_EQ(ReferencePeak(p, "fp32")->first.ToString(), "peak/fp32/cpu/threads:2");
  ASSERT_NE(ReferencePeak(p, "bf16"), nullptr);
  EXPECT_EQ(ReferencePeak(p, "bf16")->first.ToString(), "peak/bf16/cpu/threads:2");
  EXPECT_EQ(ReferencePeak(p, "fp16"), nullptr);
}

TEST(PeakTableTest, ThePeakIsListedWithTheKernels) {
  const Results results = Load({"cpu_peak.json"});
  const Report report = BuildReport(results, "t", 0.05);
  const Table* t = FindTable(report.platforms[0], "Kernels", "peak on cpu");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->title, "peak on cpu, TFLOP/s");  // the bf16 peak reaches one TFLOP/s
  EXPECT_EQ(t->header, (std::vector<std::string>{"Threads", "fp32", "bf16"}));
  EXPECT_EQ(t->rows, (Rows{{"1", "0.160", "N/A[1]"}, {"2", "0.320", "1.28"}}));
  EXPECT_TRUE(absl::StrContains(Notes(*t), "[1] not run (bf16, 1 thread)")) << Notes(*t);
  const Table* spread =
      FindTable(report.platforms[0], "Spread over repetitions", "Spread: peak on cpu");
  ASSERT_NE(spread, nullptr);
  EXPECT_EQ(spread->rows.size(), 2u);

  // Dashboards get the peak cases and each step's rate too.
  int peaks = 0, steps = 0;
  for (const Record& r : MakeRecords(results)) {
    if (r.kind == "peak") {
      ++peaks;
      if (r.key == "peak/bf16/cpu/threads:2") {
        EXPECT_TRUE(RateNear(r.json.at("tflops").get<double>(), 1.28));
      }
    }
    if (r.kind == "train" && r.json.contains("step_tflops")) ++steps;
  }
  EXPECT_EQ(peaks, 3);
  EXPECT_EQ(steps, 4);  // three CPU steps and the GPU one; not AlexNet's
}

TEST(PeakTableTest, AStepWithoutAPeakOfItsPrecisionSaysNoneAndWhy) {
  const Results results = Load({"cpu_peak_no_bf16.json"});
  const Report report = BuildReport(results, "t", 0.05);
  const Table* t = FindTable(report.platforms[0], "Training step vs the CPU's peak",
                             "Training step vs the CPU's peak");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->rows,
            (Rows{{"ResNet-50", "fp32", "synthetic", "16", "6.00", "50.0", "200", "25.0%"},
                  {"ResNet-50", "bf16", "synthetic", "16", "2.00", "16.0", "none[1]", "-"}}));
  EXPECT_TRUE(absl::StrContains(
      Notes(*t), "[1] peak/bf16/cpu/threads:2: unsupported: the bf16 peak loop needs avx512_bf16"))
      << Notes(*t);
}

Measurement Sample(const std::map<std::string, double>& counters, const std::string& date) {
  Measurement m;
  for (const auto& [counter, value] : counters) {
    m.sum[counter] = value;
    m.sum_squares[counter] = value * value;
    m.count[counter] = 1;
  }
  m.samples = 1;
  m.dates = {date};
  return m;
}

TEST(PeakTableTest, PeakFromAnotherRunOrNoneAtAll) {
  PlatformResults p;
  p.name = "merged";
  p.peak[CaseName::Peak("fp32", 4)] = Sample({{"flops", 400e9}}, "2026-12-01T10:00:00+00:00");
  p.train[CaseName::Train("resnet50", "fp32", "synthetic", 32, 0)] =
      Sample({{"images_per_second", 20}, {"flops", 100e9}}, "2026-12-01T12:00:00+00:00");
  p.train[CaseName::Train("resnet50", "bf16", "synthetic", 32, 0)] =
      Sample({{"images_per_second", 30}, {"flops", 150e9}}, "2026-12-01T12:00:00+00:00");
  std::optional<Table> t = TrainVsPeakTable(p, 0.05);
  ASSERT_TRUE(t.has_value());
  // Another run's peak: said in the title and a note.
  EXPECT_EQ(t->title, "Training step vs the CPU's peak (peak/fp32/cpu/threads:4, same platform)");
  EXPECT_TRUE(absl::StrContains(Notes(*t), "different runs")) << Notes(*t);
  EXPECT_EQ(t->rows,
            (Rows{{"ResNet-50", "fp32", "synthetic", "32", "20.0", "100", "400", "25.0%"},
                  {"ResNet-50", "bf16", "synthetic", "32", "30.0", "150", "none[1]", "-"}}));
  EXPECT_TRUE(absl::StrContains(Notes(*t), "[1] no peak/bf16/cpu case on this platform"))
      << Notes(*t);

  // A bf16-only run: its bf16 peak names the table and reads the bf16 step.
  PlatformResults bf16_only;
  bf16_only.name = "bf16 only";
  bf16_only.peak[CaseName::Peak("bf16", 2)] = Sample({{"flops", 200e9}}, "d");
  bf16_only.train[CaseName::Train("resnet50", "bf16", "synthetic", 32, 0)] =
      Sample({{"images_per_second", 30}, {"flops", 150e9}}, "d");
  std::optional<Table> b = TrainVsPeakTable(bf16_only, 0.05);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->title, "Training step vs the CPU's peak (peak/bf16/cpu/threads:2, same run)");
  EXPECT_EQ(b->rows, (Rows{{"ResNet-50", "bf16", "synthetic", "32", "30.0", "150", "200", "75.0%"}}));

  // Without a peak case, or without CPU steps, there is no table.
  PlatformResults no_peak = p;
  no_peak.peak.clear();
  EXPECT_FALSE(TrainVsPeakTable(no_peak, 0.05).has_value());
  PlatformResults gpu_only = p;
  gpu_only.train.clear();
  gpu_only.train[CaseName::Train("resnet50", "fp32", "synthetic", 32, 1)] =
      Sample({{"images_per_second", 200}}, "d");
  EXPECT_FALSE(TrainVsPeakTable(gpu_only, 0.05).has_value());
  // And the report of a run without peak cases has none.
  const Report report = BuildReport(Load({"cpu_box.json"}), "t", 0.05);
  for (const PlatformReport& platform : report.platforms) {
    EXPECT_EQ(FindTable(platform, "Training step vs the CPU's peak", ""), nullptr);
    EXPECT_EQ(FindTable(platform, "Kernels", "peak on cpu"), nullptr);
  }
}

}  // namespace
}  // namespace cnnbench::report
