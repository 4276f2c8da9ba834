// Data-parallel replicas on the CPU (train/.../gpus:0/replicas:R) beside the
// one-replica CPU run and GPU runs (cpu_replicas.json, written by Google
// Benchmark from cpu_replicas.spec): every table keeps them apart, labels
// them, and the scaling tables cover CPU replicas; JSON lines carry
// `replicas` and `ranks`; files written before the `ranks` counter still read.
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/tools/report_testing.h"
#include "tools/report/records.h"
#include "tools/report/report.h"
#include "tools/report/run_file.h"
#include "tools/report/train_charts.h"
#include "tools/report/train_query.h"

namespace cnnbench::report {
namespace {

using testing::RateNear;
using testing::RatesNear;

const std::string kData = "tests/tools/testdata/";

Results Load(const std::vector<std::string>& files) {
  std::vector<std::string> paths, warnings, errors;
  for (const std::string& f : files) paths.push_back(kData + f);
  Results results = LoadResults(paths, &warnings, &errors);
  EXPECT_TRUE(errors.empty()) << errors[0];
  EXPECT_TRUE(warnings.empty()) << warnings[0];  // every replicas:R name parses
  return results;
}

const Table* FindTable(const Report& report, const std::string& title) {
  for (const PlatformReport& p : report.platforms) {
    for (const Section& s : p.sections) {
      for (const Table& t : s.tables) {
        if (t.title == title) return &t;
      }
    }
  }
  ADD_FAILURE() << "no table titled '" << title << "'";
  return nullptr;
}

using Rows = std::vector<std::vector<std::string>>;

TEST(ReplicasTest, LabelsTellCpuReplicasFromTheCpuAndFromGpus) {
  EXPECT_EQ(GpuLabel(Placement::Cpu()), "CPU");
  EXPECT_EQ(GpuLabel(Placement::Cpu(2)), "CPU, 2 replicas");
  EXPECT_EQ(GpuLabel(Placement{1, 1}), "1");
  EXPECT_EQ(GpuLabel(Placement{8, 1}), "8");
  EXPECT_EQ(CellPlace("resnet50", Placement::Cpu()), "ResNet-50, CPU");
  EXPECT_EQ(CellPlace("resnet50", Placement::Cpu(4)), "ResNet-50, CPU, 4 replicas");
  EXPECT_EQ(CellPlace("resnet50", Placement{1, 1}), "ResNet-50, 1 GPU");
  EXPECT_EQ(CellPlace("resnet50", Placement{8, 1}), "ResNet-50, 8 GPUs");
  // The row of a case name: replicas count only on the CPU.
  EXPECT_EQ(Placement::Of(CaseName::Train("alexnet", "fp32", "synthetic", 32, 0, 2)),
            Placement::Cpu(2));
  EXPECT_EQ(Placement::Of(CaseName::Train("alexnet", "fp32", "synthetic", 32, 2)),
            (Placement{2, 1}));
  EXPECT_LT(Placement::Cpu(), Placement::Cpu(2));
  EXPECT_LT(Placement::Cpu(4), (Placement{1, 1}));
}

TEST(ReplicasTest, ResultsTableHasOneRowPerPlacement) {
  Results results = Load({"cpu_replicas.json"});
  ASSERT_EQ(results.platforms.size(), 1u);
  // Five distinct ResNet-50 cases, none merged into another.
  EXPECT_EQ(results.platforms[0].train.size(), 7u);
  Report report = BuildReport(results, "t", 0.05);
  const Table* t = FindTable(report, "Training synthetic data, fp32, batch size 32 per GPU");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->header, (std::vector<std::string>{"GPUs", "ResNet-50", "AlexNet"}));
  EXPECT_EQ(t->rows, (Rows{{"CPU", "20.0", "N/A[1]"},
                           {"CPU, 2 replicas", "36.0", "150"},
                           {"CPU, 4 replicas", "64.0", "OOM"},
                           {"1", "400", "N/A[1]"},
                           {"2", "760", "N/A[1]"}}));
  EXPECT_EQ(
      t->notes,
      (std::vector<std::string>{"[1] not run (AlexNet, CPU; AlexNet, 1 GPU; AlexNet, 2 GPUs)"}));
  // The spread table mirrors the rows.
  const Table* spread =
      FindTable(report, "Spread: Training synthetic data, fp32, batch size 32 per GPU");
  ASSERT_NE(spread, nullptr);
  ASSERT_EQ(spread->rows.size(), 5u);
  EXPECT_EQ(spread->rows[1][0], "CPU, 2 replicas");
  EXPECT_EQ(spread->rows[1][2], "0% (3)");  // AlexNet's three equal values
}

TEST(ReplicasTest, ScalingEfficiencyCoversCpuReplicas) {
  Report report = BuildReport(Load({"cpu_replicas.json"}), "t", 0.05);
  const Table* t =
      FindTable(report, "Scaling efficiency: training synthetic data, fp32, batch size 32 per GPU");
  ASSERT_NE(t, nullptr);
  // 36 / (2 x 20), 64 / (4 x 20), 760 / (2 x 400); AlexNet has no 1-replica CPU run.
  EXPECT_EQ(t->rows, (Rows{{"CPU, 2 replicas", "90.0%", "N/A[1]"},
                           {"CPU, 4 replicas", "80.0%", "OOM"},
                           {"2", "95.0%", "N/A[2]"}}));
  EXPECT_EQ(t->notes, (std::vector<std::string>{
                          "Throughput at N GPUs / (N x throughput at 1 GPU).",
                          "Throughput at R replicas on the CPU / (R x throughput of one replica "
                          "on the CPU).",
                          "[1] no 1-replica CPU result (AlexNet, CPU, 2 replicas)",
                          "[2] not run (AlexNet, 2 GPUs)"}));
}

TEST(ReplicasTest, ConfigurationSaysHowReplicasReduce) {
  Report report = BuildReport(Load({"cpu_replicas.json"}), "t", 0.05);
  const Table* t = FindTable(report, "Configuration");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->rows, (Rows{{"ResNet-50", "replicated", "nccl (GPUs), local (CPU)"},
                           {"AlexNet", "replicated", "local"}}));
}

TEST(ReplicasTest, ChartsPlotCpuReplicasApartFromGpus) {
  Results results = Load({"cpu_replicas.json"});
  const PlatformResults& p = results.platforms[0];
  std::optional<Chart> cpu = ScalingChart(p, "resnet50", "fp32", 32, /*cpu=*/true);
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(cpu->x_label, "CPU replicas");
  EXPECT_EQ(cpu->x, (std::vector<std::string>{"1", "2", "4"}));
  ASSERT_EQ(cpu->series, (std::vector<std::string>{"synthetic", "linear scaling"}));
  EXPECT_TRUE(RatesNear(cpu->values[0], {20.0, 36.0, 64.0}));
  EXPECT_TRUE(RatesNear(cpu->values[1], {20.0, 40.0, 80.0}));
  std::optional<Chart> gpu = ScalingChart(p, "resnet50", "fp32", 32, /*cpu=*/false);
  ASSERT_TRUE(gpu.has_value());
  EXPECT_EQ(gpu->x, (std::vector<std::string>{"1", "2"}));
  EXPECT_TRUE(RatesNear(gpu->values[0], {400.0, 760.0}));
  // AlexNet: 2 replicas, and 4 that ran out of memory; no 1-replica run to scale from.
  std::optional<Chart> alexnet = ScalingChart(p, "alexnet", "fp32", 32, /*cpu=*/true);
  ASSERT_TRUE(alexnet.has_value());
  EXPECT_EQ(alexnet->x, (std::vector<std::string>{"2", "4"}));
  ASSERT_EQ(alexnet->series, (std::vector<std::string>{"synthetic"}));
  EXPECT_EQ(alexnet->values[0], (std::vector<std::optional<double>>{150.0, std::nullopt}));
  // No GPU runs of AlexNet: no GPU chart.
  EXPECT_FALSE(ScalingChart(p, "alexnet", "fp32", 32, /*cpu=*/false).has_value());
}

// The JSON line of one train case.
nlohmann::json TrainRecord(const std::vector<Record>& records, const std::string& model, int gpus,
                           int replicas) {
  for (const Record& r : records) {
    if (r.kind == "train" && r.json["model"] == model && r.json["gpus"] == gpus &&
        r.json["replicas"] == replicas)
      return nlohmann::json::parse(r.json.dump());
  }
  ADD_FAILURE() << "no record for " << model << " gpus " << gpus << " replicas " << replicas;
  return {};
}

TEST(ReplicasTest, JsonLinesCarryReplicasAndRanks) {
  const std::vector<Record> records = MakeRecords(Load({"cpu_replicas.json"}));
  ASSERT_EQ(records.size(), 7u);
  nlohmann::json cpu = TrainRecord(records, "resnet50", 0, 1);
  EXPECT_EQ(cpu["ranks"], 1);
  EXPECT_TRUE(RateNear(cpu["images_per_second"].get<double>(), 20.0));
  nlohmann::json two = TrainRecord(records, "resnet50", 0, 2);
  EXPECT_EQ(two["ranks"], 2);
  EXPECT_TRUE(RateNear(two["images_per_second"].get<double>(), 36.0));
  EXPECT_EQ(TrainRecord(records, "resnet50", 0, 4)["ranks"], 4);
  nlohmann::json gpus = TrainRecord(records, "resnet50", 2, 1);
  EXPECT_EQ(gpus["ranks"], 2);
  // A failed case has no counters: its ranks come from the name.
  nlohmann::json oom = TrainRecord(records, "alexnet", 0, 4);
  EXPECT_EQ(oom["status"], "oom");
  EXPECT_EQ(oom["ranks"], 4);
  // Keys differ, so a comparison never pairs a replicated run with a single one.
  EXPECT_EQ(records[0].key, "train/resnet50/fp32/synthetic/batch:32/gpus:0");
  EXPECT_EQ(records[1].key, "train/resnet50/fp32/synthetic/batch:32/gpus:0/replicas:2");
}

TEST(ReplicasTest, FilesWithoutTheRanksCounterStillRead) {
  // cpu_box.json was written before train cases had a `ranks` counter.
  const std::vector<Record> records = MakeRecords(Load({"cpu_box.json"}));
  int train = 0;
  for (const Record& r : records) {
    if (r.kind != "train") continue;
    ++train;
    EXPECT_EQ(r.json["status"], "ok");
    EXPECT_EQ(r.json["gpus"], 0);
    EXPECT_EQ(r.json["replicas"], 1);
    EXPECT_EQ(r.json["ranks"], 1);
  }
  EXPECT_EQ(train, 5);
}

TEST(ReplicasTest, ARanksCounterThatContradictsTheNameIsReported) {
  const char* text = R"({"context": {"platform": "p"}, "benchmarks": [
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:0/replicas:2",
       "images_per_second": 10, "ranks": 4},
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:0/replicas:4",
       "images_per_second": 18, "ranks": 4},
      {"name": "train/vgg16/fp32/synthetic/batch:64/gpus:2", "images_per_second": 90}]})";
  std::vector<std::string> warnings;
  absl::StatusOr<RunFile> file = ParseRunFile("r.json", text, &warnings);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->cases.size(), 3u);  // reported, and kept: the name counts
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "r.json: entry 'train/vgg16/fp32/synthetic/batch:64/gpus:0/replicas:2': its ranks "
            "counter is 4 but the name says 2; the name counts");
}

}  // namespace
}  // namespace cnnbench::report
