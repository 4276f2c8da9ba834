// A model's definition version (context key model_definition.<model>) in
// the results store: the old `mobilenet` (MobileNet v1; files without the
// key are definition 1) and the new (MobileNetV2, definition 2) are
// separate series, never one history to find a change in, while the run's
// other cases stay in the series they had before the key existed.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/temp_files.h"
#include "tests/tools/history/run_json.h"
#include "tools/history/store.h"
#include "tools/report/run_file.h"

namespace cnnbench::history {
namespace {

using test_runs::kResnet;
using test_runs::RunJson;
using test_runs::RunSpec;

constexpr const char* kMobileNet = "train/mobilenet/fp32/synthetic/batch:32/gpus:0";

class ModelDefinitionStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = test_files::FreshTempDir("model_definition_store");
    absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(dir + "/cnnbench.db", true);
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = *std::move(s);
  }

  // A run on day `day` of resnet50 and mobilenet, with `definitions` added
  // to its context (model -> version).
  void Import(int day, const std::vector<std::pair<std::string, std::string>>& definitions) {
    RunSpec r;
    r.date = absl::StrCat("2026-12-0", day, "T10:00:00+00:00");
    r.cases = {{kResnet, {100, 101, 99}}, {kMobileNet, {400, 401, 399}}};
    nlohmann::json run = nlohmann::json::parse(RunJson(r));
    for (const auto& [model, version] : definitions)
      run["context"][absl::StrCat("model_definition.", model)] = version;
    const std::string text = run.dump();
    std::vector<std::string> warnings;
    absl::StatusOr<report::RunFile> file = report::ParseRunFile("run.json", text, &warnings);
    ASSERT_TRUE(file.ok()) << file.status();
    absl::StatusOr<ImportOutcome> got = store_->Import(*file, text, "test");
    ASSERT_TRUE(got.ok()) << got.status();
  }

  // Per series of the case: its settings and how many runs it holds.
  std::vector<std::pair<std::string, int64_t>> SeriesOf(const std::string& name) {
    absl::StatusOr<std::vector<Row>> rows = store_->db().Query(
        "SELECT s.settings, (SELECT count(*) FROM results r WHERE r.series_id = s.id) FROM series "
        "s JOIN cases c ON c.id = s.case_id WHERE c.name = ? ORDER BY s.id",
        {Value::Text(name)});
    EXPECT_TRUE(rows.ok()) << rows.status();
    std::vector<std::pair<std::string, int64_t>> out;
    if (rows.ok())
      for (const Row& r : *rows) out.emplace_back(TextAt(r, 0), IntAt(r, 1));
    return out;
  }

  std::unique_ptr<Store> store_;
};

TEST_F(ModelDefinitionStoreTest, TheOldAndTheNewMobileNetAreSeparateSeries) {
  Import(1, {});                                         // before the key: definition 1
  Import(2, {{"mobilenet", "2"}, {"resnet50", "1"}});    // after
  Import(3, {{"mobilenet", "2"}, {"resnet50", "1"}});
  // resnet50: one series over the three runs (definition 1, written or not).
  const auto resnet = SeriesOf(kResnet);
  ASSERT_EQ(resnet.size(), 1u);
  EXPECT_EQ(resnet[0].second, 3);
  EXPECT_FALSE(absl::StrContains(resnet[0].first, "model_definition")) << resnet[0].first;
  // mobilenet: the first run's series, and the later two's, whose settings say so.
  const auto mobilenet = SeriesOf(kMobileNet);
  ASSERT_EQ(mobilenet.size(), 2u);
  EXPECT_EQ(mobilenet[0].second, 1);
  EXPECT_FALSE(absl::StrContains(mobilenet[0].first, "model_definition")) << mobilenet[0].first;
  EXPECT_EQ(mobilenet[1].second, 2);
  EXPECT_TRUE(absl::StrContains(mobilenet[1].first, R"("model_definition.mobilenet":"2")"))
      << mobilenet[1].first;
  // The key is kept with the run, as a measurement setting.
  absl::StatusOr<std::vector<Row>> rows = store_->db().Query(
      "SELECT DISTINCT key_class FROM run_context WHERE key = 'model_definition.mobilenet'");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(TextAt(rows->front(), 0), "measurement setting");
}

}  // namespace
}  // namespace cnnbench::history
