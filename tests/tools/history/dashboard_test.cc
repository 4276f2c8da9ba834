// The static dashboard's files (tools/history/dashboard.h) from the test
// data (dashboard_fixture.h): what is written, every hostile string escaped,
// the data files parsing back, failed runs as gaps, errors naming the path.
// How the pages look and behave in a browser: tools/check_dashboard_html.sh.
#include "tools/history/dashboard.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/temp_files.h"
#include "tests/tools/history/dashboard_fixture.h"

namespace cnnbench::history {
namespace {

using nlohmann::json;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `window.<name> = <json>;` parsed.
json ReadScriptData(const std::string& path, const std::string& name) {
  const std::string text = ReadFile(path);
  const std::string prefix = absl::StrCat("window.", name, " = ");
  EXPECT_TRUE(absl::StartsWith(text, prefix)) << path;
  EXPECT_TRUE(absl::EndsWith(text, ";\n")) << path;
  if (text.size() < prefix.size() + 2) return json();
  return json::parse(text.substr(prefix.size(), text.size() - prefix.size() - 2));
}

// A number in the data: NaN is written as null.
void ExpectSameNumber(const json& written, double value, const std::string& what) {
  if (std::isnan(value)) {
    EXPECT_TRUE(written.is_null()) << what;
  } else {
    EXPECT_DOUBLE_EQ(written.get<double>(), value) << what;
  }
}

class DashboardTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_ = new DashboardData(fixture::DashboardFixture());
    dir_ = new std::string(test_files::FreshTempDir("dashboard_site"));
    written_ = new std::vector<std::string>();
    status_ = new absl::Status(WriteDashboard(*data_, *dir_, written_));
  }
  static void TearDownTestSuite() {
    delete data_;
    delete dir_;
    delete written_;
    delete status_;
  }
  void SetUp() override { ASSERT_TRUE(status_->ok()) << *status_; }

  static std::string File(const std::string& name) { return absl::StrCat(*dir_, "/", name); }
  static const DashSeries& Series(int64_t id) {
    for (const DashSeries& s : data_->series) {
      if (s.id == id) return s;
    }
    ADD_FAILURE() << "no series " << id;
    return data_->series.front();
  }

  static DashboardData* data_;
  static std::string* dir_;
  static std::vector<std::string>* written_;
  static absl::Status* status_;
};

DashboardData* DashboardTest::data_ = nullptr;
std::string* DashboardTest::dir_ = nullptr;
std::vector<std::string>* DashboardTest::written_ = nullptr;
absl::Status* DashboardTest::status_ = nullptr;

TEST_F(DashboardTest, WritesTheSiteAndAPageAndDataFilePerSeries) {
  std::vector<std::string> expected;
  for (const char* name :
       {"index.html", "machines.html", "overview.js", "dashboard.js", "dashboard.css"}) {
    expected.push_back(File(name));
  }
  for (const DashSeries& s : data_->series) {
    expected.push_back(File(absl::StrCat("series/", s.id, ".html")));
    expected.push_back(File(absl::StrCat("series/", s.id, ".js")));
  }
  EXPECT_EQ(*written_, expected);
  for (const std::string& path : *written_) EXPECT_FALSE(ReadFile(path).empty()) << path;
  // Each series' page loads its own data file and the site's script.
  const std::string page = ReadFile(File("series/1.html"));
  EXPECT_TRUE(absl::StrContains(page, "<script src=\"1.js\"></script>"));
  EXPECT_TRUE(absl::StrContains(page, "<script src=\"../dashboard.js\"></script>"));
}

TEST_F(DashboardTest, NoFileHoldsAHostileStringUnescaped) {
  for (const std::string& path : *written_) {
    const std::string text = ReadFile(path);
    for (const char* raw : {"<script>alert", "<img", "</script><", "onerror=alert(2)>"}) {
      EXPECT_FALSE(absl::StrContains(text, raw)) << path << " holds " << raw;
    }
    // A raw quote from the data would end an HTML attribute.
    if (absl::EndsWith(path, ".html")) {
      EXPECT_FALSE(absl::StrContains(text, "\"'; DROP")) << path;
    }
  }
  // Shown as text: the escaped forms are there.
  const std::string sql = HtmlEscape(fixture::kHostileSql), tag = HtmlEscape(fixture::kHostileTag);
  const std::string index = ReadFile(File("index.html"));
  EXPECT_TRUE(absl::StrContains(index, absl::StrCat("<h2>gpu-box ", sql, "</h2>")));
  EXPECT_TRUE(absl::StrContains(index, tag));  // the environment diff and machine identity
  const std::string page = ReadFile(File("series/14.html"));
  EXPECT_TRUE(
      absl::StrContains(page, absl::StrCat("<h1 class=\"case\">train/", sql, "/fp32/", tag)));
  EXPECT_TRUE(absl::StrContains(page, absl::StrCat("data_dir=", tag)));
  EXPECT_TRUE(
      absl::StrContains(ReadFile(File("machines.html")), absl::StrCat(">gpu-box ", sql, "<")));
}

TEST_F(DashboardTest, LineSeparatorsAreEscapedInTheData) {
  const std::string text = ReadFile(File("series/14.js"));
  EXPECT_FALSE(absl::StrContains(text, "\xE2\x80\xA8"));
  EXPECT_TRUE(absl::StrContains(text, "\\u2028"));
}

TEST_F(DashboardTest, EachSeriesDataFileParsesBackToTheInput) {
  for (const DashSeries& s : data_->series) {
    const json j = ReadScriptData(File(absl::StrCat("series/", s.id, ".js")), "CNNBENCH_SERIES");
    ASSERT_TRUE(j.is_object()) << s.id;
    EXPECT_EQ(j["id"], s.id);
    EXPECT_EQ(j["machine"]["id"], s.machine_id);
    EXPECT_EQ(j["machine"]["platform"], data_->machines[s.machine_id - 1].platform);
    EXPECT_EQ(j["case"], s.case_name);
    EXPECT_EQ(j["model"], s.model);
    EXPECT_EQ(j["settings"], s.settings);
    EXPECT_EQ(j["unit"], s.unit);
    ExpectSameNumber(j["baseline"], s.baseline, "baseline");
    ASSERT_EQ(j["points"].size(), s.points.size());
    for (size_t i = 0; i < s.points.size(); ++i) {
      const json& p = j["points"][i];
      const DashPoint& want = s.points[i];
      const std::string at = absl::StrCat("series ", s.id, " point ", i);
      EXPECT_EQ(p["run"], want.run_id) << at;
      EXPECT_EQ(p["date"], want.date) << at;
      EXPECT_EQ(p["commit"], want.commit) << at;
      EXPECT_EQ(p["status"], want.status) << at;
      EXPECT_EQ(p["repetitions"], want.repetitions) << at;
      ExpectSameNumber(p["value"], want.value, at + " value");
      ExpectSameNumber(p["min"], want.min, at + " min");
      ExpectSameNumber(p["max"], want.max, at + " max");
      ExpectSameNumber(p["band"]["low"], want.band_low, at + " band");
    }
    ASSERT_EQ(j["changes"].size(), s.changes.size());
    for (size_t c = 0; c < s.changes.size(); ++c) {
      EXPECT_EQ(j["changes"][c]["cause"], s.changes[c].cause);
      EXPECT_DOUBLE_EQ(j["changes"][c]["ratio"].get<double>(), s.changes[c].ratio);
      ASSERT_EQ(j["changes"][c]["environment_diff"].size(), s.changes[c].environment_diff.size());
      for (size_t d = 0; d < s.changes[c].environment_diff.size(); ++d) {
        EXPECT_EQ(j["changes"][c]["environment_diff"][d][0],
                  s.changes[c].environment_diff[d].first);
        EXPECT_EQ(j["changes"][c]["environment_diff"][d][1],
                  s.changes[c].environment_diff[d].second);
      }
    }
    ASSERT_EQ(j["annotations"].size(), s.annotations.size());
    for (size_t a = 0; a < s.annotations.size(); ++a) {
      EXPECT_EQ(j["annotations"][a]["text"], s.annotations[a].text);
    }
  }
}

TEST_F(DashboardTest, TheOverviewDataHasOneBoundedRowPerSeries) {
  const json j = ReadScriptData(File("overview.js"), "CNNBENCH_OVERVIEW");
  ASSERT_EQ(j["series"].size(), data_->series.size());
  ASSERT_EQ(j["machines"].size(), data_->machines.size());
  EXPECT_EQ(j["machines"][1]["platform"], data_->machines[1].platform);
  for (const json& row : j["series"]) EXPECT_LE(row["spark"].size(), 30u) << row["id"];
  // The regressed series: latest value, its change against the baseline, an open regression.
  const json& regressed = j["series"][0];
  const DashSeries& s = Series(fixture::kRegressedSeries);
  EXPECT_EQ(regressed["id"], s.id);
  EXPECT_DOUBLE_EQ(regressed["latest"].get<double>(), s.points.back().value);
  EXPECT_NEAR(regressed["change"].get<double>(), -0.1, 0.02);
  EXPECT_EQ(regressed["status"], "regression");
  EXPECT_EQ(regressed["open_changes"], 1);
  // The OOM run is a gap in the sparkline (within the last 30 runs).
  EXPECT_TRUE(regressed["spark"][30 - (60 - fixture::kFailedAt)].is_null());
}

TEST_F(DashboardTest, AFailedRunIsAGapWithItsStatus) {
  const std::string page = ReadFile(File("series/1.html"));
  const std::string index = absl::StrCat("data-index=\"", fixture::kFailedAt, "\"");
  EXPECT_TRUE(absl::StrContains(page, absl::StrCat("<path class=\"failed\" ", index)));
  EXPECT_FALSE(absl::StrContains(page, absl::StrCat("<circle class=\"point\" ", index)));
  EXPECT_TRUE(absl::StrContains(page, absl::StrCat("<tr ", index, " class=\"failed\">")));
  EXPECT_TRUE(absl::StrContains(page, "<td class=\"status\">OOM</td>"));
  // The value line is drawn in two pieces, around the failed run.
  const size_t line = page.find("<path class=\"value\" d=\"");
  ASSERT_NE(line, std::string::npos);
  const std::string d = page.substr(line, page.find('"', line + 23) - line);
  EXPECT_EQ(std::count(d.begin(), d.end(), 'M'), 2) << d;
  // A series whose last run failed says so in the overview.
  EXPECT_TRUE(absl::StrContains(ReadFile(File("index.html")),
                                "last run failed: error: cudnn: CUDNN_STATUS_EXECUTION_FAILED"));
}

TEST_F(DashboardTest, TheOpenChangesListTheRegressionWithItsCause) {
  const std::string index = ReadFile(File("index.html"));
  const size_t begin = index.find("<section id=\"changes\">");
  const std::string changes = index.substr(begin, index.find("</section>", begin) - begin);
  EXPECT_TRUE(absl::StrContains(changes, "Open changes (2)"));  // the annotated one is not open
  EXPECT_TRUE(absl::StrContains(changes, "oneDNN 2.6.3 -&gt; 3.2 between these runs"));
  EXPECT_TRUE(absl::StrContains(changes, "<code>onednn_version</code>: 2.6.3 -&gt; 3.2"));
  EXPECT_TRUE(absl::StrContains(changes, "href=\"series/1.html#change-1\""));
  EXPECT_LT(changes.find("regression"), changes.find("improvement"));
  const std::string page = ReadFile(File("series/1.html"));
  EXPECT_TRUE(absl::StrContains(page, "<g class=\"change regression\" data-change=\"1\">"));
  EXPECT_TRUE(absl::StrContains(page, "<g class=\"annotation\">"));
  EXPECT_TRUE(absl::StrContains(page, "<path class=\"band\""));
}

TEST_F(DashboardTest, MachinesSideBySideHaveAColumnPerMachine) {
  const std::string page = ReadFile(File("machines.html"));
  const size_t begin = page.find("<h2>Training, fp32 (images/s)</h2>");
  ASSERT_NE(begin, std::string::npos);
  const std::string table = page.substr(begin, page.find("</table>", begin) - begin);
  EXPECT_TRUE(absl::StrContains(table, "<th data-machine=\"1\">"));
  EXPECT_TRUE(absl::StrContains(table, "<th data-machine=\"2\">"));
  EXPECT_TRUE(absl::StrContains(table, "<tr data-series=\"1 8\"><th scope=\"row\">resnet50</th>"));
}

TEST_F(DashboardTest, TheSameDataWritesTheSameFiles) {
  const std::string again = test_files::FreshTempDir("dashboard_again");
  std::vector<std::string> written;
  ASSERT_TRUE(WriteDashboard(*data_, again, &written).ok());
  ASSERT_EQ(written.size(), written_->size());
  for (size_t i = 0; i < written.size(); ++i) {
    EXPECT_EQ(ReadFile(written[i]), ReadFile((*written_)[i])) << written[i];
  }
}

// A series gone from the store (pruned machine, a store of its own) leaves
// no page behind; a user's own file in the folder is kept.
TEST_F(DashboardTest, PagesOfSeriesNoLongerThereAreRemoved) {
  const std::string dir = test_files::FreshTempDir("dashboard_stale");
  ASSERT_TRUE(WriteDashboard(*data_, dir, nullptr).ok());
  DashboardData fewer = *data_;
  const int64_t gone = fewer.series.back().id;
  fewer.series.pop_back();
  { std::ofstream(dir + "/series/notes.txt") << "mine"; }
  ASSERT_TRUE(WriteDashboard(fewer, dir, nullptr).ok());
  EXPECT_FALSE(std::ifstream(absl::StrCat(dir, "/series/", gone, ".html")).good());
  EXPECT_FALSE(std::ifstream(absl::StrCat(dir, "/series/", gone, ".js")).good());
  EXPECT_TRUE(std::ifstream(absl::StrCat(dir, "/series/", fewer.series.front().id, ".html")).good());
  EXPECT_EQ(ReadFile(dir + "/series/notes.txt"), "mine");
}

TEST(DashboardErrors, AFolderThatCannotBeMadeIsNamed) {
  const std::string dir = test_files::FreshTempDir("dashboard_unwritable");
  const std::string file = dir + "/a_file";
  test_files::WriteLine(file, "not a folder");
  std::vector<std::string> written;
  const absl::Status status = WriteDashboard(fixture::DashboardFixture(), file + "/site", &written);
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), file + "/site")) << status;
  EXPECT_TRUE(written.empty());
}

TEST(DashboardErrors, TwoSeriesWithOneIdAreRefused) {
  DashboardData data = fixture::DashboardFixture();
  data.series.push_back(data.series.front());
  std::vector<std::string> written;
  const absl::Status status =
      WriteDashboard(data, test_files::FreshTempDir("dashboard_twice"), &written);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "id 1")) << status;
}

TEST(HtmlEscape, EscapesTheFiveCharacters) {
  EXPECT_EQ(HtmlEscape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(HtmlEscape("plain"), "plain");
}

}  // namespace
}  // namespace cnnbench::history
