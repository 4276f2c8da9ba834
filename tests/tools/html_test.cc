// The HTML page: self-contained, every table and chart present (charts drawn
// by the real gnuplot), ids unique. tools/check_report_html.sh opens it in
// headless Chromium as well.
#include <map>
#include <regex>
#include <string>

#include "absl/strings/numbers.h"
#include "gtest/gtest.h"
#include "tools/report/charts.h"
#include "tools/report/report.h"

namespace cnnbench::report {
namespace {

const std::string kData = "tests/tools/testdata/";

int Count(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

int Meta(const std::string& html, const std::string& name) {
  std::smatch m;
  std::regex re("<meta name=\"" + name + "\" content=\"([0-9]+)\">");
  EXPECT_TRUE(std::regex_search(html, m, re)) << name;
  int n = -1;
  EXPECT_TRUE(absl::SimpleAtoi(m[1].str(), &n));
  return n;
}

TEST(HtmlTest, EveryTableAndChartInOneSelfContainedPage) {
  ReportOptions options;
  options.format = "html";
  options.inputs = {kData + "dgx1.json", kData + "gpu_box.json", kData + "cpu_box.json",
                    kData + "cpu_box_more.json"};
  ReportOutput out = RunReport(options, RenderChartSvg);
  ASSERT_EQ(out.exit_code, kExitOk);
  for (const std::string& w : out.warnings) EXPECT_EQ(w.find("chart"), std::string::npos) << w;
  const std::string& html = out.text;

  // As many tables as the Markdown report has, and the charts the page announces.
  options.format = "markdown";
  const int markdown_tables = Count(RunReport(options, nullptr).text, "\n| --- |");
  EXPECT_EQ(Count(html, "<table "), markdown_tables);
  EXPECT_EQ(Meta(html, "cnnbench-tables"), markdown_tables);
  const int charts = Meta(html, "cnnbench-charts");
  EXPECT_EQ(charts, 14);  // dgx1: 5 scaling + 5 synthetic/real; gpu_box: 3 + 1
  EXPECT_EQ(Count(html, "<svg"), charts);
  EXPECT_EQ(Count(html, "</svg>"), charts);
  EXPECT_EQ(Count(html, "chart not rendered"), 0);

  // Self-contained: no scripts, no fetched resources, no XML prologs mid-page.
  EXPECT_EQ(Count(html, "<script"), 0);
  EXPECT_EQ(Count(html, "src="), 0);
  EXPECT_EQ(Count(html, "<link"), 0);
  EXPECT_EQ(Count(html, "<?xml"), 0);
  EXPECT_EQ(Count(html, "<!DOCTYPE"), 1);

  // Every id once, and every in-page reference points at one.
  std::map<std::string, int> ids;
  std::regex id_re("\\bid=['\"]([^'\"]+)['\"]");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), id_re);
       it != std::sregex_iterator(); ++it) {
    ++ids[(*it)[1].str()];
  }
  for (const auto& [id, n] : ids) EXPECT_EQ(n, 1) << "duplicate id " << id;
  std::regex ref_re("href=['\"]#([^'\"]+)['\"]");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), ref_re);
       it != std::sregex_iterator(); ++it) {
    EXPECT_TRUE(ids.count((*it)[1].str())) << "dangling reference #" << (*it)[1].str();
  }
}

TEST(ChartsTest, InlineSvgDropsThePrologAndPrefixesIds) {
  const std::string svg =
      "<?xml version=\"1.0\"?>\n<svg width=\"10\">\n<title>Gnuplot</title>\n"
      "<g id=\"gnuplot_canvas\"><path id='gpPt1'/><path id='gpPt10'/>"
      "<use xlink:href='#gpPt1'/><use xlink:href='#gpPt10'/><rect fill=\"url(#grad)\"/>"
      "<linearGradient id=\"grad\"/></g></svg>\n";
  const std::string out = InlineSvg(svg, "chart-3-", "A < B");
  EXPECT_EQ(out.rfind("<svg", 0), 0u) << out;
  EXPECT_NE(out.find("<title>A &lt; B</title>"), std::string::npos);
  EXPECT_NE(out.find("id='chart-3-gpPt1'"), std::string::npos);
  EXPECT_NE(out.find("id='chart-3-gpPt10'"), std::string::npos);
  EXPECT_NE(out.find("href='#chart-3-gpPt1'"), std::string::npos);
  EXPECT_NE(out.find("href='#chart-3-gpPt10'"), std::string::npos);
  EXPECT_NE(out.find("url(#chart-3-grad)"), std::string::npos);
  EXPECT_NE(out.find("id=\"chart-3-gnuplot_canvas\""), std::string::npos);
}

TEST(ChartsTest, ScriptQuotesTextAndMarksMissingPoints) {
  Chart chart;
  chart.title = "t";
  chart.x_label = "GPUs";
  chart.y_label = "say \"hi\"";
  chart.x = {"1", "2"};
  chart.series = {"resnet50_v1.5", "linear scaling"};
  chart.values = {{100.0, std::nullopt}, {100.0, 200.0}};
  chart.reference_series = "linear scaling";
  EXPECT_EQ(GnuplotData(chart), "GPUs\tresnet50_v1.5\tlinear scaling\n1\t100\t100\n2\t?\t200\n");
  const std::string script = GnuplotScript(chart, "/tmp/d.tsv", "/tmp/o.svg");
  EXPECT_NE(script.find("noenhanced"), std::string::npos);
  EXPECT_NE(script.find("set ylabel \"say \\\"hi\\\"\""), std::string::npos) << script;
  EXPECT_NE(script.find("using 1:3 with lines dt 2"), std::string::npos) << script;
}

}  // namespace
}  // namespace cnnbench::report
