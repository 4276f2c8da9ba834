// Fixtures written by Google Benchmark itself with NaN and Infinity counters
// (nonfinite.json), noisy repetitions and messages carrying source locations
// (noisy.json), and that platform measured with other settings: the report takes them all, shows
// what is not finite or noisy, says why a case failed in a reader's words,
// and never merges runs of different settings.
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
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

ReportOutput RunFiles(const std::vector<std::string>& files,
                      const std::string& format = "markdown") {
  ReportOptions options;
  options.format = format;
  for (const std::string& f : files) options.inputs.push_back(kData + f);
  return RunReport(options, nullptr);
}

// The JSON line of one train case.
nlohmann::json TrainRecord(const std::string& jsonl, const std::string& model, int gpus) {
  std::istringstream lines(jsonl);
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json r = nlohmann::json::parse(line);
    if (r["kind"] == "train" && r["model"] == model && r["gpus"] == gpus) return r;
  }
  ADD_FAILURE() << "no record for " << model << " on " << gpus << " GPUs in\n" << jsonl;
  return {};
}

TEST(NoiseTest, NonFiniteCountersAreReadAndShownAsNotApplicable) {
  ReportOutput out = RunFiles({"nonfinite.json"});
  ASSERT_EQ(out.exit_code, kExitOk) << (out.errors.empty() ? "" : out.errors[0]);
  EXPECT_TRUE(out.errors.empty());
  EXPECT_NE(out.text.find("| 1 | 100 | N/A[1] |"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("[1] not finite: images_per_second was NaN in 1 of 3 repetitions "
                          "(AlexNet, 1 GPU)"),
            std::string::npos)
      << out.text;
  EXPECT_NE(out.text.find("not finite: images_per_second was Infinity in 2 of 3 repetitions "
                          "(AlexNet, 2 GPUs)"),
            std::string::npos)
      << out.text;
  EXPECT_NE(out.text.find("| gemm:m1024n1024k1024 | 10.0 | N/A[1] |"), std::string::npos)
      << out.text;
  EXPECT_NE(out.text.find("[1] not finite: flops was NaN in 3 of 3 repetitions "
                          "(gemm:m1024n1024k1024, fp16)"),
            std::string::npos)
      << out.text;

  const std::string jsonl = RunFiles({"nonfinite.json"}, "jsonl").text;
  nlohmann::json nan = TrainRecord(jsonl, "alexnet", 1);
  EXPECT_EQ(nan["status"], "not_finite");
  EXPECT_TRUE(nan["images_per_second"].is_null());
  EXPECT_EQ(nan["error"], "images_per_second was NaN in 1 of 3 repetitions");
}

// A case the suite flagged for drift (a repetition's last tenth of steps
// slower than its first tenth) is marked with its mean drift; one that
// drifted within the threshold is not.
TEST(NoiseTest, DriftedCellsAreMarkedWithTheirDrift) {
  ReportOutput out = RunFiles({"drift.json"});
  ASSERT_EQ(out.exit_code, kExitOk) << (out.errors.empty() ? "" : out.errors[0]);
  EXPECT_NE(out.text.find("| 1 | 100[1][2] |\n| 2 | 200 |"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("[1] slowed during the run: a repetition's last tenth of steps took "
                          "longer than its first tenth by more than --drift_threshold"),
            std::string::npos)
      << out.text;
  EXPECT_NE(out.text.find("(ResNet-50, 1 GPU: mean drift 1.11)"), std::string::npos) << out.text;
}

// Power: a case that throttled in some samples is marked, and the Energy
// table gives its power, images per joule, energy per step and clocks; a
// case without power is not in it.
TEST(NoiseTest, ThrottledCellsAreMarkedAndTheEnergyTableHasThePoweredCases) {
  ReportOutput out = RunFiles({"drift.json"});
  ASSERT_EQ(out.exit_code, kExitOk);
  EXPECT_NE(out.text.find("| 1 | 100[1][2] |"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("[2] throttled during the timed span (power cap, thermal or other "
                          "clock slowdown; see Energy and the case's label) (ResNet-50, 1 GPU: "
                          "10.0% of samples)"),
            std::string::npos)
      << out.text;
  EXPECT_NE(out.text.find("| train/resnet50/fp32/synthetic/batch:64/gpus:1 | 100 | 500.0 | 0.2 | "
                          "320 | 1800 (min 1650) | 10.0% |"),
            std::string::npos)
      << out.text;
  EXPECT_EQ(out.text.find("| train/resnet50/fp32/synthetic/batch:64/gpus:2 |"), std::string::npos)
      << out.text;
  // A run without power has no Energy section.
  EXPECT_EQ(RunFiles({"noisy.json"}).text.find("### Energy"), std::string::npos);
}

TEST(NoiseTest, NoisyCellsAreMarkedAndEveryCellsSpreadIsShown) {
  ReportOutput out = RunFiles({"noisy.json"});
  ASSERT_EQ(out.exit_code, kExitOk);
  // 83.3, 100 and 125 images/sec (100 images/sec over the total time): cv
  // 20%, above the default 5%; 200 +- 1 is not.
  EXPECT_NE(out.text.find("| 1 | 100[1] | N/A[2] |\n| 2 | 200 | OOM |"), std::string::npos)
      << out.text;
  EXPECT_NE(out.text.find("[1] cv over repetitions above 5% (--max_cv; see Spread over "
                          "repetitions) (ResNet-50, 1 GPU: 20%)"),
            std::string::npos)
      << out.text;
  // 10, 15 and 7 TFLOP/s: 9.69 over the total time (the mean of rates, 10.7, is not it).
  EXPECT_NE(out.text.find("| gemm:m1024n1024k1024 | 9.69[1] |"), std::string::npos) << out.text;
  // The spread section mirrors each results table: cv, then the repetitions.
  const size_t spread = out.text.find("### Spread over repetitions");
  ASSERT_NE(spread, std::string::npos) << out.text;
  EXPECT_NE(out.text.find("#### Spread: Training synthetic data, fp32, batch size 64 per GPU\n\n"
                          "| GPUs | ResNet-50 | VGG16 |\n"
                          "| --- | --- | --- |\n"
                          "| 1 | 20% (3) | - |\n"
                          "| 2 | 0.5% (3) | - |\n",
                          spread),
            std::string::npos)
      << out.text.substr(spread);
  EXPECT_NE(out.text.find("| gemm:m1024n1024k1024 | 38% (3) |", spread), std::string::npos)
      << out.text.substr(spread);

  const std::string jsonl = RunFiles({"noisy.json"}, "jsonl").text;
  nlohmann::json noisy = TrainRecord(jsonl, "resnet50", 1);
  EXPECT_EQ(noisy["repetitions"], 3);
  EXPECT_NEAR(noisy["cv"].get<double>(), 0.20405, 1e-5);  // the repetitions' sample cv
}

TEST(NoiseTest, FootnotesStartWithTheReasonOnce) {
  ReportOutput out = RunFiles({"noisy.json"});
  // "bench/train_cases.cc:56: train/trainer.cc:75: unsupported: ..." in the JSON.
  EXPECT_NE(out.text.find("[2] unsupported: vgg16 needs the cuda backend, not in this build "
                          "(VGG16, 1 GPU)"),
            std::string::npos)
      << out.text;
  EXPECT_EQ(out.text.find(".cc:"), std::string::npos) << out.text;
  // "bench/train_cases.cc:56: OOM: train/executor.cc:90: OOM: needs ...": still an OOM cell.
  EXPECT_NE(out.text.find("| 2 | 200 | OOM |"), std::string::npos) << out.text;

  // JSON lines: the reader's message, and the message as written for debugging.
  const std::string jsonl = RunFiles({"noisy.json"}, "jsonl").text;
  nlohmann::json oom = TrainRecord(jsonl, "vgg16", 2);
  EXPECT_EQ(oom["status"], "oom");
  EXPECT_EQ(oom["error"], "OOM: needs 32.0 GB, 24.0 GB available");
  EXPECT_EQ(oom["error_full"],
            "bench/train_cases.cc:56: OOM: train/executor.cc:90: OOM: needs 32.0 GB, 24.0 GB "
            "available");
  nlohmann::json unsupported = TrainRecord(jsonl, "vgg16", 1);
  EXPECT_EQ(unsupported["error"], "unsupported: vgg16 needs the cuda backend, not in this build");
}

TEST(NoiseTest, RunsWithOtherSettingsAreNeverMergedIntoOneCell) {
  // The same platform with 100 and with 5 steps: two platforms, named so.
  ReportOutput out = RunFiles({"noisy.json", "noisy_steps5.json"});
  ASSERT_EQ(out.exit_code, kExitOk);
  EXPECT_TRUE(Contains(out.warnings,
                       "platform 'noisy-box': runs differ in steps, which change the figures; "
                       "reported apart as 'noisy-box (steps=100)'"))
      << (out.warnings.empty() ? "no warnings" : out.warnings[0]);
  const size_t a = out.text.find("\n## noisy-box (steps=100)\n");
  const size_t b = out.text.find("\n## noisy-box (steps=5)\n");
  ASSERT_NE(a, std::string::npos) << out.text;
  ASSERT_NE(b, std::string::npos) << out.text;
  EXPECT_EQ(out.text.find("\n## noisy-box\n"), std::string::npos);
  // 100 with 100 steps, 91.0 with 5; merged they would read 95.3.
  EXPECT_NE(out.text.find("| 1 | 100[1] |", a), std::string::npos);
  EXPECT_NE(out.text.find("| 1 | 91.0 |", b), std::string::npos);
  EXPECT_EQ(out.text.find("95.3"), std::string::npos);

  const std::string jsonl = RunFiles({"noisy.json", "noisy_steps5.json"}, "jsonl").text;
  EXPECT_NE(jsonl.find("\"platform\":\"noisy-box (steps=5)\""), std::string::npos) << jsonl;

  // Compared with a base of the same platform and other settings: a warning says so.
  ReportOptions options;
  options.inputs = {kData + "noisy_steps5.json"};
  options.compare = {kData + "noisy.json"};
  out = RunReport(options, nullptr);
  EXPECT_TRUE(Contains(out.warnings,
                       "comparing platform 'noisy-box' with base 'noisy-box' measured with other "
                       "settings: steps 5 vs 100"));
}

TEST(NoiseTest, FailOnRegressionFailsWhenNothingWasCompared) {
  ReportOptions options;
  options.inputs = {kData + "noisy.json"};
  options.compare = {kData + "cpu_box.json"};  // cpu-epyc-2c: no platform or case in common
  options.fail_on_regression = true;
  ReportOutput out = RunReport(options, nullptr);
  EXPECT_NE(out.exit_code, kExitOk);
  EXPECT_TRUE(Contains(out.errors, "nothing compared")) << out.exit_code;
  // Without the gate it is a warning, and the platforms' difference is one too.
  options.fail_on_regression = false;
  out = RunReport(options, nullptr);
  EXPECT_EQ(out.exit_code, kExitOk);
  EXPECT_TRUE(Contains(out.warnings, "nothing compared"));
  EXPECT_TRUE(Contains(out.warnings,
                       "comparing platform 'noisy-box' with base platform 'cpu-epyc-2c': a "
                       "different platform"));
}

}  // namespace
}  // namespace cnnbench::report
