// Peers side by side: hand-made PyTorch and TensorFlow fixtures
// (peer_pytorch.json, peer_tensorflow.json, written by Google Benchmark from
// their specs) of the platform cpu_box.json measured with this suite. Each
// framework is reported apart and never averaged into another; "Frameworks
// side by side" compares them with ratios to --baseline_framework; a single
// framework keeps the usual layout (the golden tests check that).
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/report/framework_tables.h"
#include "tools/report/records.h"
#include "tools/report/report.h"
#include "tools/report/train_query.h"

namespace cnnbench::report {
namespace {

const std::string kData = "tests/tools/testdata/";
const std::vector<std::string> kPeers = {"cpu_box.json", "peer_pytorch.json",
                                         "peer_tensorflow.json"};

Results Load(const std::vector<std::string>& files) {
  std::vector<std::string> paths, warnings, errors;
  for (const std::string& f : files) paths.push_back(kData + f);
  Results results = LoadResults(paths, &warnings, &errors);
  EXPECT_TRUE(errors.empty()) << errors[0];
  EXPECT_TRUE(warnings.empty()) << warnings[0];  // frameworks apart is no surprise
  return results;
}

ReportOutput RunPeers(const std::vector<std::string>& files, const std::string& baseline = "",
                      const std::string& format = "markdown") {
  ReportOptions options;
  options.format = format;
  options.baseline_framework = baseline;
  for (const std::string& f : files) options.inputs.push_back(kData + f);
  return RunReport(options, nullptr);
}

const Section* FindSection(const Report& report, const std::string& platform,
                           const std::string& title) {
  for (const PlatformReport& p : report.platforms) {
    if (p.platform != platform) continue;
    for (const Section& s : p.sections) {
      if (s.title == title) return &s;
    }
  }
  return nullptr;
}

const Table* FindTable(const Section& section, const std::string& title) {
  for (const Table& t : section.tables) {
    if (t.title == title) return &t;
  }
  ADD_FAILURE() << "no table titled '" << title << "'";
  return nullptr;
}

std::string EnvironmentValue(const Report& report, const std::string& platform,
                             const std::string& item) {
  const Section* s = FindSection(report, platform, "Environment");
  if (s == nullptr) return "no such platform";
  for (const std::vector<std::string>& row : s->tables[0].rows) {
    if (row[0] == item) return row[1];
  }
  return "no such row";
}

RunFile FileWith(const std::string& path,
                 std::vector<std::pair<std::string, std::string>> context) {
  RunFile file;
  file.path = path;
  file.context = std::move(context);
  return file;
}

using Rows = std::vector<std::vector<std::string>>;
const char kFp32Table[] =
    "Frameworks side by side: training synthetic data, fp32, batch size 64 per GPU";

TEST(FrameworksTest, EachFrameworkIsReportedApartWithItsOwnFigures) {
  Results results = Load(kPeers);
  ASSERT_EQ(results.platforms.size(), 3u);
  EXPECT_EQ(results.platforms[0].name, "cpu-epyc-2c");
  EXPECT_EQ(results.platforms[0].framework, "cnnbench");
  EXPECT_EQ(results.platforms[1].name, "cpu-epyc-2c (framework=pytorch 2.15.0)");
  EXPECT_EQ(results.platforms[1].framework, "pytorch 2.15.0");
  EXPECT_EQ(results.platforms[2].name, "cpu-epyc-2c (framework=tensorflow 2.21.0)");
  EXPECT_EQ(results.platforms[2].framework, "tensorflow 2.21.0");
  const CaseName resnet = CaseName::Train("resnet50", "fp32", "synthetic", 64, 0);
  // One case, three frameworks: three values, none averaged with another.
  EXPECT_NEAR(*TrainThroughput(results.platforms[0], resnet), 16.69, 1e-9);
  EXPECT_NEAR(*TrainThroughput(results.platforms[1], resnet), 15.0, 1e-9);
  EXPECT_NEAR(*TrainThroughput(results.platforms[2], resnet), 12.5, 1e-9);
  EXPECT_EQ(results.platforms[1].train.size(), 4u);
  EXPECT_EQ(results.platforms[2].train.size(), 2u);
  EXPECT_EQ(Frameworks(results),
            (std::vector<std::string>{"cnnbench", "pytorch 2.15.0", "tensorflow 2.21.0"}));
}

TEST(FrameworksTest, AFileWithoutAFrameworkIsThisSuitesAndNeverMergesWithAPeer) {
  // An unrecorded setting matches any value, but an unrecorded framework is cnnbench.
  std::vector<RunFile> files = {
      FileWith("a.json", {{"platform", "p"}}),
      FileWith("b.json", {{"platform", "p"}, {"framework", "pytorch 2.15.0"}}),
      FileWith("c.json", {{"platform", "p"}, {"framework", "pytorch 2.15.0"}, {"steps", "5"}}),
      FileWith("d.json", {{"platform", "p"}, {"steps", "100"}}),
      FileWith("e.json", {{"platform", "p"}, {"framework", "pytorch 2.15.0"}, {"steps", "10"}}),
  };
  std::vector<std::string> warnings;
  EXPECT_EQ(ReportedPlatforms(files, &warnings),
            (std::vector<std::string>{"p (steps=100)", "p (framework=pytorch 2.15.0, steps=5)",
                                      "p (framework=pytorch 2.15.0, steps=5)", "p (steps=100)",
                                      "p (framework=pytorch 2.15.0, steps=10)"}));
  // Steps differ within one framework: that is worth a warning; the framework is not.
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("runs differ in steps,"), std::string::npos) << warnings[0];

  warnings.clear();
  EXPECT_EQ(ReportedPlatforms({files[0], files[1]}, &warnings),
            (std::vector<std::string>{"p", "p (framework=pytorch 2.15.0)"}));
  EXPECT_TRUE(warnings.empty());
}

TEST(FrameworksTest, SettingsOfDifferentFrameworksAreNotMerged) {
  Report report = BuildReport(Load(kPeers), "t", 0.05);
  EXPECT_EQ(EnvironmentValue(report, "cpu-epyc-2c (framework=pytorch 2.15.0)", "Framework"),
            "pytorch 2.15.0");
  EXPECT_EQ(
      EnvironmentValue(report, "cpu-epyc-2c (framework=pytorch 2.15.0)", "Framework settings"),
      "channels_last, torch.compile off, SGD momentum 0.9");
  EXPECT_EQ(
      EnvironmentValue(report, "cpu-epyc-2c (framework=tensorflow 2.21.0)", "Framework settings"),
      "XLA off, NHWC, intra_op_parallelism_threads 2");
  // This suite's run records no framework: its environment table is as before.
  EXPECT_EQ(EnvironmentValue(report, "cpu-epyc-2c", "Framework"), "no such row");

  // Two runs of one framework with other settings are not merged either.
  std::vector<RunFile> files = {
      FileWith("a.json", {{"platform", "p"},
                          {"framework", "pytorch 2.15.0"},
                          {"framework_settings", "channels_last"}}),
      FileWith("b.json", {{"platform", "p"},
                          {"framework", "pytorch 2.15.0"},
                          {"framework_settings", "channels_first"}}),
  };
  std::vector<std::string> warnings;
  EXPECT_EQ(ReportedPlatforms(files, &warnings),
            (std::vector<std::string>{
                "p (framework=pytorch 2.15.0, framework_settings=channels_last)",
                "p (framework=pytorch 2.15.0, framework_settings=channels_first)"}));
}

TEST(FrameworksTest, SideBySideWithRatiosToCnnbench) {
  Report report = BuildReport(Load(kPeers), "t", 0.05);
  // The section belongs to the baseline's report of the platform, once.
  EXPECT_EQ(
      FindSection(report, "cpu-epyc-2c (framework=pytorch 2.15.0)", "Frameworks side by side"),
      nullptr);
  const Section* s = FindSection(report, "cpu-epyc-2c", "Frameworks side by side");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->tables.size(), 2u);  // fp32 and bf16 at batch 64; batch 32 only cnnbench ran
  const Table* t = FindTable(*s, kFp32Table);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->header, (std::vector<std::string>{"Model", "GPUs", "cnnbench", "pytorch 2.15.0",
                                                 "tensorflow 2.21.0", "pytorch 2.15.0 / cnnbench",
                                                 "tensorflow 2.21.0 / cnnbench"}));
  // 15.0 / 16.69, 12.5 / 16.69; 151 / 142; 41 / 61.5. VGG16: only PyTorch ran it.
  EXPECT_EQ(t->rows, (Rows{{"ResNet-50", "CPU", "16.7", "15.0", "12.5", "0.90", "0.75"},
                           {"AlexNet", "CPU", "142", "151", "N/A[1]", "1.06", "-"},
                           {"GoogLeNet", "CPU", "61.5", "N/A[1]", "41.0", "-", "0.67"}}));
  auto has_note = [&](const std::string& note) {
    return std::find(t->notes.begin(), t->notes.end(), note) != t->notes.end();
  };
  EXPECT_TRUE(
      has_note("pytorch 2.15.0 settings: channels_last, torch.compile off, SGD "
               "momentum 0.9"));
  EXPECT_TRUE(
      has_note("tensorflow 2.21.0 settings: XLA off, NHWC, intra_op_parallelism_threads 2"));
  EXPECT_TRUE(
      has_note("[1] not run (AlexNet, CPU, tensorflow 2.21.0; GoogLeNet, CPU, pytorch 2.15.0)"));
  const Table* bf16 = FindTable(
      *s, "Frameworks side by side: training synthetic data, bf16, batch size 64 per GPU");
  ASSERT_NE(bf16, nullptr);
  EXPECT_EQ(bf16->rows, (Rows{{"ResNet-50", "CPU", "31.5", "OOM", "N/A[1]", "-", "-"}}));

  // A bar chart per table, one series per framework.
  ASSERT_EQ(s->charts.size(), 2u);
  const Chart& chart = s->charts[0];
  EXPECT_EQ(chart.kind, Chart::Kind::kBars);
  EXPECT_EQ(chart.series,
            (std::vector<std::string>{"cnnbench", "pytorch 2.15.0", "tensorflow 2.21.0"}));
  EXPECT_EQ(chart.x,
            (std::vector<std::string>{"ResNet-50, CPU", "AlexNet, CPU", "GoogLeNet, CPU"}));
  EXPECT_EQ(chart.values[2][0], 12.5);
  EXPECT_FALSE(chart.values[2][1].has_value());
}

// The engines' inference beside the suite's (inference.json, platform
// infer-box): an images/s table per precision and batch with ratios, and a
// latency table after each with the p50 and p99 per framework and the
// ratios of the p50s. Figures from the fixtures' specs.
TEST(FrameworksTest, InferenceSideBySideWithLatencies) {
  Report report = BuildReport(
      Load({"inference.json", "peer_onnxruntime.json", "peer_openvino.json"}), "t", 0.05);
  const Section* s = FindSection(report, "infer-box", "Frameworks side by side");
  ASSERT_NE(s, nullptr);
  // fp32 at batch 1 and 16, bf16 at 16; fp32 at 64 and the real-data case
  // only the suite ran; no training case is shared.
  ASSERT_EQ(s->tables.size(), 6u);
  EXPECT_EQ(s->charts.size(), 3u);
  const std::string ort = "onnxruntime 1.32.0", ov = "openvino 2026.4.1";
  const Table* rate =
      FindTable(*s, "Frameworks side by side: inference synthetic data, fp32, batch size 1");
  ASSERT_NE(rate, nullptr);
  EXPECT_EQ(rate->header, (std::vector<std::string>{"Model", "Device", "cnnbench", ort, ov,
                                                    ort + " / cnnbench", ov + " / cnnbench"}));
  // 40 / 50, 62.5 / 50.
  EXPECT_EQ(rate->rows, (Rows{{"ResNet-50 v1.5", "CPU", "50.0", "40.0", "62.5", "0.80", "1.25"}}));
  const Table* latency = FindTable(
      *s, "Frameworks side by side: inference synthetic data, fp32, batch size 1, latency (ms)");
  ASSERT_NE(latency, nullptr);
  EXPECT_EQ(latency->header,
            (std::vector<std::string>{"Model", "Device", "cnnbench p50", "cnnbench p99",
                                      ort + " p50", ort + " p99", ov + " p50", ov + " p99",
                                      ort + " p50 / cnnbench p50", ov + " p50 / cnnbench p50"}));
  // p50 24 / 19, 15.5 / 19.
  EXPECT_EQ(latency->rows, (Rows{{"ResNet-50 v1.5", "CPU", "19.0", "25.0", "24.0", "30.0", "15.5",
                                  "18.0", "1.26", "0.82"}}));
  const Table* b16 =
      FindTable(*s, "Frameworks side by side: inference synthetic data, fp32, batch size 16");
  ASSERT_NE(b16, nullptr);
  EXPECT_EQ(b16->rows, (Rows{{"ResNet-50 v1.5", "CPU", "80.0", "100", "N/A[1]", "1.25", "-"}}));
  const Table* bf16 =
      FindTable(*s, "Frameworks side by side: inference synthetic data, bf16, batch size 16");
  ASSERT_NE(bf16, nullptr);
  ASSERT_EQ(bf16->rows.size(), 1u);
  EXPECT_EQ(bf16->rows[0][2], "160");
  EXPECT_EQ(bf16->rows[0][3].substr(0, 4), "N/A[");  // unsupported, with its footnote
  EXPECT_EQ(bf16->rows[0][4], "200");
  EXPECT_EQ(bf16->rows[0][5], "-");
  EXPECT_EQ(bf16->rows[0][6], "1.25");
  std::string notes;
  for (const std::string& n : bf16->notes) notes += n + "\n";
  EXPECT_NE(notes.find("no bf16 kernel"), std::string::npos) << notes;
  const Table* bf16_latency = FindTable(
      *s, "Frameworks side by side: inference synthetic data, bf16, batch size 16, latency (ms)");
  ASSERT_NE(bf16_latency, nullptr);
  EXPECT_EQ(
      bf16_latency->rows,
      (Rows{{"ResNet-50 v1.5", "CPU", "99.0", "105", "-", "-", "79.0", "85.0", "-", "0.80"}}));
  // The chart of the first table: a bar per framework.
  EXPECT_EQ(s->charts[0].series, (std::vector<std::string>{"cnnbench", ort, ov}));
  EXPECT_EQ(s->charts[0].x, (std::vector<std::string>{"ResNet-50 v1.5, CPU"}));
  EXPECT_EQ(s->charts[0].values[2][0], 62.5);
}

TEST(FrameworksTest, BaselineFrameworkByNameOrFullName) {
  for (const char* name : {"pytorch", "pytorch 2.15.0"}) {
    ReportOutput out = RunPeers(kPeers, name);
    ASSERT_EQ(out.exit_code, kExitOk) << (out.errors.empty() ? "" : out.errors[0]);
    EXPECT_NE(out.text.find("| Model | GPUs | pytorch 2.15.0 | cnnbench | tensorflow 2.21.0 | "
                            "cnnbench / pytorch 2.15.0 | tensorflow 2.21.0 / pytorch 2.15.0 |"),
              std::string::npos)
        << out.text;
    // 16.69 / 15.0, 12.5 / 15.0.
    EXPECT_NE(out.text.find("| ResNet-50 | CPU | 15.0 | 16.7 | 12.5 | 1.11 | 0.83 |"),
              std::string::npos)
        << out.text;
  }
  EXPECT_TRUE(FrameworkMatches("pytorch", "pytorch 2.15.0"));
  EXPECT_FALSE(FrameworkMatches("py", "pytorch 2.15.0"));
  EXPECT_FALSE(FrameworkMatches("pytorch 2.15", "pytorch 2.15.0"));
}

TEST(FrameworksTest, NoRatiosWithoutTheBaselineOnThePlatform) {
  ReportOutput out = RunPeers({"peer_pytorch.json", "peer_tensorflow.json"});
  ASSERT_EQ(out.exit_code, kExitOk);  // the default baseline need not be present
  EXPECT_NE(out.text.find("| Model | GPUs | pytorch 2.15.0 | tensorflow 2.21.0 |\n"),
            std::string::npos)
      << out.text;
  EXPECT_NE(out.text.find("No ratios: the baseline framework (cnnbench, --baseline_framework) "
                          "did not run on this platform."),
            std::string::npos);
}

TEST(FrameworksTest, UnknownBaselineFrameworkIsAnError) {
  ReportOutput out = RunPeers(kPeers, "jax");
  EXPECT_EQ(out.exit_code, kExitBadInput);
  EXPECT_TRUE(out.text.empty());
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_EQ(out.errors[0],
            "--baseline_framework=jax: no input has that framework (the inputs have: cnnbench, "
            "pytorch 2.15.0, tensorflow 2.21.0; a file without a \"framework\" context key is "
            "cnnbench's)");
  // Named explicitly, even the default must be there.
  out = RunPeers({"peer_pytorch.json"}, "cnnbench");
  EXPECT_EQ(out.exit_code, kExitBadInput);

  // A name that fits two versions is ambiguous.
  Results two;
  two.platforms.resize(2);
  two.platforms[0].framework = "pytorch 2.15.0";
  two.platforms[1].framework = "pytorch 2.16.0";
  absl::StatusOr<std::string> resolved = ResolveBaselineFramework(two, "pytorch");
  ASSERT_FALSE(resolved.ok());
  EXPECT_EQ(resolved.status().message(),
            "--baseline_framework=pytorch matches several frameworks (pytorch 2.15.0, "
            "pytorch 2.16.0); give one in full");
  EXPECT_EQ(*ResolveBaselineFramework(two, "pytorch 2.16.0"), "pytorch 2.16.0");
}

TEST(FrameworksTest, OneFrameworkKeepsTheUsualLayout) {
  ReportOutput out = RunPeers({"cpu_box.json"});
  EXPECT_EQ(out.text.find("Frameworks side by side"), std::string::npos);
  EXPECT_EQ(out.text.find("| Framework"), std::string::npos);
  out = RunPeers({"peer_pytorch.json"});
  EXPECT_EQ(out.text.find("Frameworks side by side"), std::string::npos);
  EXPECT_NE(out.text.find("## cpu-epyc-2c (framework=pytorch 2.15.0)"), std::string::npos);
}

TEST(FrameworksTest, JsonLinesNameTheFramework) {
  std::istringstream lines(RunPeers(kPeers, "", "jsonl").text);
  int pytorch = 0, tensorflow = 0, cnnbench = 0;
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json r = nlohmann::json::parse(line);
    if (r["kind"] != "train") continue;
    if (r["framework"] == "pytorch 2.15.0") {
      ++pytorch;
      EXPECT_EQ(r["platform"], "cpu-epyc-2c (framework=pytorch 2.15.0)");
    } else if (r["framework"] == "tensorflow 2.21.0") {
      ++tensorflow;
    } else {
      EXPECT_EQ(r["framework"], "cnnbench") << line;
      ++cnnbench;
    }
  }
  EXPECT_EQ(pytorch, 4);
  EXPECT_EQ(tensorflow, 2);
  EXPECT_EQ(cnnbench, 5);
}

}  // namespace
}  // namespace cnnbench::report
