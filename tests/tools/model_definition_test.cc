// A model's definition version (context key model_definition.<model>) in
// the report: a run of the old `mobilenet` (MobileNet v1; its file has no
// key, so definition 1) and one of the new (MobileNetV2, definition 2) on
// one platform never share a cell, while their other models' cases still
// merge; the key is a measurement setting of that model only.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tools/report/context_keys.h"
#include "tools/report/model_definition.h"
#include "tools/report/model_names.h"
#include "tools/report/records.h"
#include "tools/report/results.h"
#include "tools/report/run_file.h"

namespace cnnbench::report {
namespace {

constexpr const char* kResnet = "train/resnet50/fp32/synthetic/batch:32/gpus:0";
constexpr const char* kMobileNet = "train/mobilenet/fp32/synthetic/batch:32/gpus:0";

// One repetition of each case at `images_per_second`; `context` as JSON members.
RunFile File(const std::string& path, const std::string& context, double images_per_second) {
  std::vector<std::string> entries;
  for (const char* name : {kResnet, kMobileNet})
    entries.push_back(absl::StrCat(R"({"name": ")", name, R"(", "run_name": ")", name,
                                   R"(", "run_type": "iteration", "iterations": 10,
                                   "images_per_second": )",
                                   images_per_second, "}"));
  const std::string text = absl::StrCat(R"({"context": {"platform": "p")", context,
                                        R"(}, "benchmarks": [)", absl::StrJoin(entries, ", "),
                                        "]}");
  std::vector<std::string> warnings;
  absl::StatusOr<RunFile> file = ParseRunFile(path, text, &warnings);
  EXPECT_TRUE(file.ok()) << file.status();
  return file.ok() ? *file : RunFile{};
}

const Measurement* Train(const PlatformResults& p, const std::string& name) {
  absl::StatusOr<CaseName> parsed = ParseCaseName(name);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  auto it = p.train.find(*parsed);
  return it == p.train.end() ? nullptr : &it->second;
}

TEST(ModelDefinitionTest, AnOldMobileNetNeverMergesWithTheNewOneWhileResNetDoes) {
  const std::vector<RunFile> files = {
      File("old.json", "", 100),  // written before the key: definition 1
      File("new.json",
           R"(, "model_definition.mobilenet": "2", "model_definition.resnet50": "1")", 300)};
  std::vector<std::string> warnings;
  const std::vector<std::string> names = ReportedPlatforms(files, &warnings);
  // One platform: a model's definition does not split the run's other cases.
  EXPECT_EQ(names, (std::vector<std::string>{"p", "p"}));
  Results results;
  for (size_t i = 0; i < files.size(); ++i) AddRunFile(files[i], names[i], results);
  ASSERT_EQ(results.platforms.size(), 1u);
  const PlatformResults& p = results.platforms[0];
  const Measurement* resnet = Train(p, kResnet);
  ASSERT_NE(resnet, nullptr);
  EXPECT_EQ(resnet->samples, 2);  // both files' resnet50, merged
  EXPECT_DOUBLE_EQ(*resnet->SampleMean("images_per_second"), 200);
  const Measurement* mobilenet = Train(p, kMobileNet);
  ASSERT_NE(mobilenet, nullptr);
  EXPECT_EQ(mobilenet->samples, 1);  // the new network's alone
  EXPECT_DOUBLE_EQ(*mobilenet->SampleMean("images_per_second"), 300);
  // The old network's, under a name of its own.
  int old = 0;
  for (const auto& [name, m] : p.train) {
    if (name.model != "mobilenet (definition 1)") continue;
    ++old;
    EXPECT_EQ(m.samples, 1);
    EXPECT_DOUBLE_EQ(*m.SampleMean("images_per_second"), 100);
  }
  EXPECT_EQ(old, 1);
  ASSERT_EQ(warnings.size(), 1u) << absl::StrJoin(warnings, "\n");
  EXPECT_EQ(warnings[0],
            "old.json: its mobilenet cases measured definition 1 of the network, the zoo's is 2: "
            "reported as 'mobilenet (definition 1)', apart from the current one");
  // Its column comes beside the current network's.
  EXPECT_TRUE(ModelBefore("mobilenet", "mobilenet (definition 1)"));
  EXPECT_TRUE(ModelBefore("mobilenet (definition 1)", "mobilenet_v1"));
}

TEST(ModelDefinitionTest, TheRecordsNeverPairTheTwoNetworks) {
  // What --compare and the JSON-lines output key by: the old network's
  // record has a key of its own.
  std::vector<std::string> warnings;
  Results results;
  for (const RunFile& f : {File("old.json", "", 100),
                           File("new.json", R"(, "model_definition.mobilenet": "2")", 300)})
    AddRunFile(f, results, &warnings);
  std::vector<std::string> keys;
  for (const Record& r : MakeRecords(results))
    if (absl::StrContains(r.key, "mobilenet")) keys.push_back(r.key);
  ASSERT_EQ(keys.size(), 2u) << absl::StrJoin(keys, "\n");
  EXPECT_NE(keys[0], keys[1]);
}

TEST(ModelDefinitionTest, TheKeyIsAPerModelSetting) {
  EXPECT_EQ(ModelDefinitionKey("mobilenet"), "model_definition.mobilenet");
  EXPECT_EQ(ClassOfKey("model_definition.mobilenet"), KeyClass::kSetting);
  EXPECT_FALSE(IsModelDefinitionKey("model_definition."));
  EXPECT_FALSE(IsModelDefinitionKey("model"));
  // Not a run-wide setting: a file's grouping never reads it.
  for (const std::string& key : SettingKeys()) EXPECT_FALSE(IsModelDefinitionKey(key)) << key;
  // A file without the key measured definition 1; a name the zoo does not
  // know is at 1 too, so nothing of it is renamed.
  const RunFile old = File("old.json", "", 1);
  EXPECT_EQ(RecordedDefinition(old, "mobilenet"), "1");
  EXPECT_EQ(CurrentDefinition("mobilenet"), "2");
  EXPECT_EQ(ReportedModel(old, "mobilenet"), "mobilenet (definition 1)");
  EXPECT_EQ(ReportedModel(old, "resnet50"), "resnet50");
  EXPECT_EQ(ReportedModel(old, "no_such_model"), "no_such_model");
}

}  // namespace
}  // namespace cnnbench::report
