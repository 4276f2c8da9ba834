// Every family's cases reach the report's records: the JSON lines that
// dashboards ingest and the regression gate (--compare) that reads them.
// The test iterates the family enum, so a family added without a sample
// here, or without records in tools/report/records.cc, fails it.
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/suite/names.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/report/report.h"

namespace cnnbench::report {
namespace {

using bench::Family;

// One case of a family and its counters (its headline counter among them).
struct Sample {
  std::string name;
  std::map<std::string, double> counters;
};

// One sample per family, from the suite's own names.
const std::map<Family, Sample>& Samples() {
  static const auto* samples = new std::map<Family, Sample>{
      {Family::kTrain, {"train/resnet50/fp32/synthetic/batch:64/gpus:0", {{"images_per_second", 100}}}},
      {Family::kConv,
       {"conv/fwd/fp32/cpu/conv:mb2_ic64oc64_ih56oh56kh3sh1ph1_iw56ow56kw3sw1pw1", {{"flops", 1e12}}}},
      {Family::kFc, {"fc/fwd/fp32/cpu/fc:mb2ic3136oc512", {{"flops", 1e11}}}},
      {Family::kPool,
       {"pool/max/fwd/fp32/cpu/pool:max_mb2ic64_ih112oh56kh3sh2ph1_iw112ow56kw3sw2pw1",
        {{"bytes_per_second", 1e10}}}},
      {Family::kBatchNorm,
       {"batchnorm/fwd/fp32/cpu/bn:mb32ic64ih56iw56_eps0.001mom0.997", {{"bytes_per_second", 1e10}}}},
      {Family::kRelu, {"relu/fwd/fp32/cpu/relu:mb2ic32ih28iw28", {{"bytes_per_second", 1e10}}}},
      {Family::kGemm, {"gemm/fp32/cpu/gemm:m1024n1024k1024", {{"flops", 1e12}}}},
      {Family::kAllReduce,
       {"allreduce/local/fp32/sum/bytes:1024/ranks:2", {{"algbw", 1e9}, {"busbw", 1e9}}}},
      {Family::kAllGather,
       {"allgather/local/fp32/none/bytes:1024/ranks:2", {{"algbw", 1e9}, {"busbw", 5e8}}}},
      {Family::kReduceScatter,
       {"reducescatter/local/fp32/sum/bytes:1024/ranks:2", {{"algbw", 1e9}, {"busbw", 5e8}}}},
      {Family::kBroadcast,
       {"broadcast/local/fp32/none/bytes:1024/ranks:2", {{"algbw", 1e9}, {"busbw", 1e9}}}},
      {Family::kReduce,
       {"reduce/local/fp32/sum/bytes:1024/ranks:2", {{"algbw", 1e9}, {"busbw", 1e9}}}},
      {Family::kAllToAll,
       {"alltoall/local/fp32/none/bytes:1024/ranks:2", {{"algbw", 1e9}, {"busbw", 5e8}}}},
      {Family::kGather,
       {"gather/local/fp32/none/bytes:1024/ranks:2", {{"algbw", 1e9}, {"busbw", 5e8}}}},
      {Family::kScatter,
       {"scatter/local/fp32/none/bytes:1024/ranks:2", {{"algbw", 1e9}, {"busbw", 5e8}}}},
      {Family::kGrads,
       {"grads/trivial/local/bucket_mb:25/ranks:2",
        {{"algbw", 2e9}, {"busbw", 2e9}, {"buckets", 1}, {"gradient_bytes", 17432448}}}},
      {Family::kInput, {"input/tfrecord/train_preprocess/threads:1", {{"images_per_second", 400}}}},
      {Family::kPeak, {"peak/fp32/cpu/threads:1", {{"flops", 1.5e11}}}},
      {Family::kBandwidth,
       {"bandwidth/copy/cpu/bytes:67108864/threads:1", {{"bytes_per_second", 1e10}}}},
      {Family::kInfer,
       {"infer/resnet50_v1.5/fp32/synthetic/batch:1/gpus:0",
        {{"images_per_second", 50}, {"latency_ms", 20}, {"latency_ms_p99", 25}}}},  };
  return *samples;
}

// A run file of every family's sample (or `only` its), each counter times
// `scale`, two repetitions each (as the suite writes them).
std::string RunFile(const std::string& name, double scale,
                    std::optional<Family> only = std::nullopt) {
  nlohmann::ordered_json run;
  run["context"] = {{"date", "2026-12-04T00:00:00+00:00"},
                    {"platform", "family-box"},
                    {"git_commit", "abc123"},
                    {"library_build_type", "release"}};
  run["benchmarks"] = nlohmann::ordered_json::array();
  for (const auto& [family, sample] : Samples()) {
    if (only && family != *only) continue;
    const std::string full = absl::StrCat(sample.name, "/iterations:1/manual_time");
    for (int repetition = 0; repetition < 2; ++repetition) {
      nlohmann::ordered_json b = {{"name", full},
                                  {"run_name", full},
                                  {"run_type", "iteration"},
                                  {"repetitions", 2},
                                  {"repetition_index", repetition},
                                  {"threads", 1},
                                  {"iterations", 1},
                                  {"real_time", 1e6 / scale},
                                  {"cpu_time", 1e3},
                                  {"time_unit", "ns"}};
      for (const auto& [counter, value] : sample.counters)
        b[counter] = counter == "buckets" || counter == "gradient_bytes" ? value : value * scale;
      run["benchmarks"].push_back(b);
    }
  }
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", name);
  std::ofstream(path) << run.dump(2);
  return path;
}

TEST(FamilyRecordsTest, EveryFamilyHasASample) {
  for (const bench::CaseFamily& f : bench::CaseFamilies()) {
    auto it = Samples().find(f.id);
    ASSERT_NE(it, Samples().end()) << "no sample for family " << f.name << ": add one here";
    auto parsed = bench::ParseCaseName(it->second.name);
    ASSERT_TRUE(parsed.ok()) << it->second.name << ": " << parsed.status();
    EXPECT_TRUE(parsed->Is(f.id)) << it->second.name;
    EXPECT_EQ(parsed->ToString(), it->second.name);
  }
}

// --format=jsonl writes a line for every family's case, of its kind.
TEST(FamilyRecordsTest, EveryFamilysCasesAreJsonLines) {
  ReportOptions options;
  options.inputs = {RunFile("families.json", 1.0)};
  options.format = "jsonl";
  const ReportOutput out = RunReport(options, nullptr);
  ASSERT_EQ(out.exit_code, kExitOk) << absl::StrJoin(out.errors, "\n");
  std::set<std::string> kinds;
  for (absl::string_view line : absl::StrSplit(out.text, '\n', absl::SkipEmpty())) {
    const auto record = nlohmann::json::parse(line);
    kinds.insert(record.at("kind").get<std::string>());
    EXPECT_EQ(record.value("status", ""), "ok") << line;
  }
  for (const bench::CaseFamily& f : bench::CaseFamilies())
    EXPECT_TRUE(kinds.count(f.name)) << "no JSON line of family " << f.name << "\n" << out.text;
}

// A run at half the speed of its base is flagged, in every family.
TEST(FamilyRecordsTest, ASlowerRunIsARegressionInEveryFamily) {
  ReportOptions options;
  options.inputs = {RunFile("slower.json", 0.5)};
  options.compare = {RunFile("base.json", 1.0)};
  options.fail_on_regression = true;
  const ReportOutput out = RunReport(options, nullptr);
  EXPECT_EQ(out.exit_code, kExitRegression) << absl::StrJoin(out.errors, "\n");
  const std::string regressions = absl::StrJoin(out.regressions, "\n");
  for (const auto& [family, sample] : Samples())
    EXPECT_TRUE(absl::StrContains(regressions, sample.name))
        << bench::FamilyName(family) << " not flagged:\n"
        << regressions;
  // The base against itself: nothing.
  options.inputs = options.compare;
  EXPECT_EQ(RunReport(options, nullptr).exit_code, kExitOk);
}

// The markdown report has a table of its own for every family: a run of
// one family's case shows a section that not every family's run shows (the
// platform's environment is in all of them).
TEST(FamilyRecordsTest, EveryFamilysCasesHaveATableOfTheirOwn) {
  std::map<Family, std::set<std::string>> titles;
  for (const auto& [family, sample] : Samples()) {
    std::vector<std::string> warnings, errors;
    const Results results = LoadResults(
        {RunFile(absl::StrCat(bench::FamilyName(family), ".json"), 1.0, family)}, &warnings,
        &errors);
    ASSERT_TRUE(errors.empty()) << absl::StrJoin(errors, "\n");
    const Report report = BuildReport(results, "families", 0.05);
    for (const PlatformReport& p : report.platforms)
      for (const Section& section : p.sections)
        if (!section.tables.empty()) titles[family].insert(section.title);
  }
  std::set<std::string> everywhere = titles.begin()->second;
  for (const auto& [family, set] : titles) {
    std::set<std::string> common;
    for (const std::string& t : set)
      if (everywhere.count(t)) common.insert(t);
    everywhere = common;
  }
  for (const bench::CaseFamily& f : bench::CaseFamilies()) {
    std::set<std::string> own;
    for (const std::string& t : titles[f.id])
      if (!everywhere.count(t)) own.insert(t);
    EXPECT_FALSE(own.empty()) << "no table of family " << f.name << " in the report (sections: "
                              << absl::StrJoin(titles[f.id], "; ") << ")";
  }
}

}  // namespace
}  // namespace cnnbench::report
