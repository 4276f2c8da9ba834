// The collectives' tables: nccl-tests' text layout against a fixture written
// by hand in its column set and order (testdata/collectives_nccl_tests.txt,
// from testdata/collectives.spec), its rows readable as a script reads
// all_reduce_perf's, its numbers' widths, and the groups the Markdown
// tables are made of (#wrong from a failed check, the average busbw).
#include "tools/report/collective_tables.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/tools/report_testing.h"
#include "tools/report/report.h"
#include "tools/report/run_file.h"

namespace cnnbench::report {
namespace {

using testing::kData;
using testing::NoCharts;
using testing::ReadFile;

ReportOutput NcclTests(const std::string& file) {
  ReportOptions options;
  options.format = "nccl-tests";
  options.inputs = {kData + file};
  return RunReport(options, NoCharts);
}

TEST(NcclTestsLayoutTest, MatchesTheFixtureWrittenInNcclTestsColumns) {
  const ReportOutput out = NcclTests("collectives.json");
  EXPECT_EQ(out.exit_code, kExitOk);
  const std::vector<std::string> actual = absl::StrSplit(out.text, '\n');
  const std::vector<std::string> expected =
      absl::StrSplit(ReadFile(kData + "collectives_nccl_tests.txt"), '\n');
  for (size_t i = 0; i < std::min(actual.size(), expected.size()); ++i)
    ASSERT_EQ(actual[i], expected[i]) << "line " << i + 1;
  EXPECT_EQ(actual.size(), expected.size());
}

// What a script that parses nccl-tests' output does: skip '#' lines, split
// the others at whitespace into 13 fields.
TEST(NcclTestsLayoutTest, RowsReadAsAllReducePerfRows) {
  const ReportOutput out = NcclTests("collectives.json");
  int rows = 0;
  for (absl::string_view line : absl::StrSplit(out.text, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) continue;
    ++rows;
    const std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    ASSERT_EQ(f.size(), 13u) << line;
    int64_t size = 0, count = 0, root = 0, wrong = 0;
    EXPECT_TRUE(absl::SimpleAtoi(f[0], &size)) << line;
    EXPECT_TRUE(absl::SimpleAtoi(f[1], &count)) << line;
    EXPECT_TRUE(absl::SimpleAtoi(f[4], &root)) << line;
    EXPECT_TRUE(absl::SimpleAtoi(f[8], &wrong)) << line;
    EXPECT_EQ(wrong, 0) << line;
    double time = 0, algbw = 0;
    ASSERT_TRUE(absl::SimpleAtod(f[5], &time)) << line;
    ASSERT_TRUE(absl::SimpleAtod(f[6], &algbw)) << line;
    // algbw (GB/s) = size / time, to the printed digits.
    EXPECT_NEAR(algbw, size / (time * 1e-6) / 1e9, 0.02 * algbw) << line;
  }
  EXPECT_EQ(rows, 5);
}

// nccl-tests' count column is its paramcount: one rank's part of an
// all-gather, reduce-scatter or all-to-all, the whole buffer otherwise.
TEST(NcclTestsLayoutTest, TheCountIsPerRankWhereTheBufferIsSplit) {
  std::ifstream in(kData + "collectives.json");
  const nlohmann::json source = nlohmann::json::parse(in);
  const char* tmp = std::getenv("TEST_TMPDIR");
  for (const auto& [family, count] :
       std::vector<std::pair<std::string, std::string>>{{"allgather", "64"},
                                                        {"reducescatter", "64"},
                                                        {"alltoall", "64"},
                                                        {"allreduce", "256"}}) {
    nlohmann::json run = source;
    nlohmann::json kept = nlohmann::json::array();
    for (nlohmann::json b : run["benchmarks"]) {
      const std::string name = b["name"];
      if (!absl::StartsWith(name, "allreduce/local/fp32/sum/bytes:1024/ranks:4/")) continue;
      for (const char* key : {"name", "run_name"})
        if (b.contains(key))
          b[key] = absl::StrReplaceAll(
              b[key].get<std::string>(),
              {{"allreduce/local/fp32/sum/",
                absl::StrCat(family, "/local/fp32/",
                             family == "allgather" || family == "alltoall" ? "none" : "sum", "/")}});
      kept.push_back(b);
    }
    ASSERT_FALSE(kept.empty());
    run["benchmarks"] = kept;
    const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/" + family + ".json";
    std::ofstream(path) << run.dump();
    ReportOptions options;
    options.format = "nccl-tests";
    options.inputs = {path};
    const ReportOutput out = RunReport(options, NoCharts);
    bool found = false;
    for (absl::string_view line : absl::StrSplit(out.text, '\n', absl::SkipEmpty())) {
      if (absl::StartsWith(line, "#")) continue;
      const std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
      ASSERT_GE(f.size(), 2u) << line;
      EXPECT_EQ(f[0], "1024") << family << ": " << line;
      EXPECT_EQ(f[1], count) << family << ": " << line;
      found = true;
    }
    EXPECT_TRUE(found) << family << "\n" << out.text;
  }
}

TEST(NcclTestsLayoutTest, NumbersKeepTheirWidthAsNcclTestsPrintsThem) {
  EXPECT_EQ(NcclTestsNumber(1.024, 7), "   1.02");
  EXPECT_EQ(NcclTestsNumber(1550.004, 7), "1550.00");
  EXPECT_EQ(NcclTestsNumber(12345.678, 7), "12345.7");
  EXPECT_EQ(NcclTestsNumber(1234567.8, 7), "1234568");
  EXPECT_EQ(NcclTestsNumber(123456789.0, 7), "1.2e+08");
  EXPECT_EQ(NcclTestsNumber(173.18, 6), "173.18");
  EXPECT_EQ(NcclTestsNumber(1234.5, 6), "1234.5");
  EXPECT_EQ(NcclTestsNumber(1234567.0, 6), " 1e+06");
  EXPECT_EQ(NcclTestsTypeName("fp32"), "float");
  EXPECT_EQ(NcclTestsTypeName("fp16"), "half");
  EXPECT_EQ(NcclTestsTypeName("bf16"), "bfloat16");
  EXPECT_EQ(NcclTestsTypeName("fp64"), "double");
}

TEST(CollectiveGroupsTest, WrongCountsComeFromAFailedCheckAndTheAverageFromEveryBusbw) {
  std::vector<std::string> warnings, errors;
  const Results results = LoadResults({kData + "collectives.json"}, &warnings, &errors);
  ASSERT_TRUE(errors.empty());
  ASSERT_EQ(results.platforms.size(), 1u);
  const std::vector<CollectiveGroup> groups = CollectiveGroups(results.platforms[0]);
  // allreduce: fp32, bf16, int64; broadcast: fp32.
  ASSERT_EQ(groups.size(), 4u);
  const CollectiveGroup* fp32 = nullptr;
  for (const CollectiveGroup& g : groups)
    if (g.family == "allreduce" && g.dtype == "fp32") fp32 = &g;
  ASSERT_NE(fp32, nullptr);
  EXPECT_EQ(fp32->Title(), "All-reduce, local, 4 ranks, fp32");
  ASSERT_EQ(fp32->rows.size(), 4u);  // sum 1024, 2048, 4096, then max
  EXPECT_EQ(fp32->rows[2].name->bytes, 4096);
  EXPECT_EQ(fp32->rows[2].out_wrong, 2);
  EXPECT_EQ(fp32->rows[2].in_wrong, 3);
  EXPECT_EQ(fp32->rows[3].name->op, "max");
  ASSERT_TRUE(fp32->AvgBusbw().has_value());
  EXPECT_NEAR(*fp32->AvgBusbw(), (1.5 + 3 + 3 + 3.072 + 0.75 + 0.75) / 6 * 1e9, 1e3);
  for (const CollectiveGroup& g : groups)
    for (const CollectiveRow& r : g.rows)
      EXPECT_EQ(r.root, g.family == "broadcast" ? 1 : -1) << g.Title();
}

// The memory's rates in their own table, and each host collective's
// largest busbw read against the fastest CPU copy of the same run.
TEST(CollectiveSectionTest, BusbwIsReadAgainstTheRunsCopyRate) {
  std::vector<std::string> warnings, errors;
  const Results results = LoadResults({kData + "collectives.json"}, &warnings, &errors);
  ASSERT_TRUE(errors.empty());
  const PlatformResults& p = results.platforms[0];
  const std::optional<ReferenceRate> ref = MemoryReference(p, "local");
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->name, "bandwidth/copy/cpu/bytes:67108864/threads:2");
  EXPECT_DOUBLE_EQ(ref->bytes_per_second, 2e10);
  EXPECT_FALSE(MemoryReference(p, "nccl").has_value()) << "no d2d case in this run";

  const std::optional<Section> bandwidth = BandwidthSection(p, 0.05);
  ASSERT_TRUE(bandwidth.has_value());
  ASSERT_EQ(bandwidth->tables.size(), 1u);
  const Table& t = bandwidth->tables[0];
  EXPECT_EQ(t.header,
            (std::vector<std::string>{"kind", "device", "size (B)", "1 thread", "2 threads"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"copy", "cpu", "67108864", "10.0", "20.0"}));
  EXPECT_EQ(t.rows[1], (std::vector<std::string>{"triad", "cpu", "67108864", "", "18.0"}));

  const std::optional<Section> collectives = CollectiveSection(p, 0.05);
  ASSERT_TRUE(collectives.has_value());
  bool found = false;
  for (const Table& table : collectives->tables) {
    if (table.title != "All-reduce, local, 4 ranks, fp32") continue;
    for (const std::string& note : table.notes)
      found = found || note ==
                           "busbw at 2048 B: 3.00 GB/s, 15.0% of "
                           "bandwidth/copy/cpu/bytes:67108864/threads:2 (20.00 GB/s), measured "
                           "in the same run.";
  }
  EXPECT_TRUE(found) << "no busbw-vs-copy note under the fp32 all-reduce table";
}

// An all-to-all beside an all-reduce, as the suite writes them: the
// all-to-all has no in-place form, so its in-place figures are never read.
Results AllToAllBesideAllReduce() {
  const char* text = R"({"context": {"platform": "p"}, "benchmarks": [
      {"name": "alltoall/local/fp32/none/bytes:1024/ranks:4", "iterations": 20,
       "real_time": 1.024, "time_unit": "us", "algbw": 1.0e9, "busbw": 0.75e9,
       "algbw_inplace": 5.0e9, "busbw_inplace": 3.75e9},
      {"name": "allreduce/local/fp32/sum/bytes:1024/ranks:4", "iterations": 20,
       "real_time": 1.024, "time_unit": "us", "algbw": 1.0e9, "busbw": 1.5e9,
       "algbw_inplace": 1.0e9, "busbw_inplace": 1.5e9}]})";
  std::vector<std::string> warnings;
  absl::StatusOr<RunFile> file = ParseRunFile("a2a.json", text, &warnings);
  EXPECT_TRUE(file.ok()) << file.status();
  Results results;
  if (file.ok()) AddRunFile(*file, results, &warnings);
  return results;
}

// Issue 46 item 21: nccl-tests' alltoall_perf times an in-place all-to-all;
// the suite has none, so its N/A columns say why in a '#' line scripts skip.
TEST(NcclTestsLayoutTest, AllToAllSaysWhyItsInPlaceColumnsAreNotApplicable) {
  const std::string out = RenderNcclTests(AllToAllBesideAllReduce());
  const std::string why =
      "# in place: not timed by cnnbench, whose all-to-all has no in-place form (nccl-tests' "
      "alltoall_perf times one buffer as both send and receive buffer, and does not check that "
      "result: its #wrong is N/A)\n";
  const size_t a2a = out.find("# cnnbench alltoall on p");
  const size_t allreduce = out.find("# cnnbench allreduce on p");
  ASSERT_NE(a2a, std::string::npos) << out;
  ASSERT_NE(allreduce, std::string::npos) << out;
  const size_t note = out.find(why);
  ASSERT_NE(note, std::string::npos) << out;
  EXPECT_EQ(out.find(why, note + 1), std::string::npos) << out;  // once
  // Under the all-to-all's table, before its footer; not under the all-reduce's.
  EXPECT_GT(note, a2a) << out;
  EXPECT_LT(note, out.find("# Collective test concluded: alltoall")) << out;
  EXPECT_TRUE(note < allreduce || allreduce < a2a) << out;
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) continue;
    const std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    ASSERT_EQ(f.size(), 13u) << line;
    if (f[3] == "none") {  // the all-to-all: in place N/A, never the stray counters
      EXPECT_EQ(std::vector<std::string>(f.begin() + 9, f.end()),
                (std::vector<std::string>{"N/A", "N/A", "N/A", "N/A"}))
          << line;
    } else {
      EXPECT_NE(f[9], "N/A") << line;
    }
  }
}

// Issue 46 item 20: how algbw and busbw are defined is said once for the
// section, not under every table; so is why all-to-all has no in-place columns.
TEST(CollectiveSectionTest, TheColumnsAreExplainedOnceForTheSection) {
  std::vector<std::string> warnings, errors;
  const Results results = LoadResults({kData + "collectives.json"}, &warnings, &errors);
  ASSERT_TRUE(errors.empty());
  const std::optional<Section> section = CollectiveSection(results.platforms[0], 0.05);
  ASSERT_TRUE(section.has_value());
  ASSERT_GE(section->tables.size(), 2u);
  int definitions = 0;
  for (const Table& t : section->tables)
    for (const std::string& note : t.notes) definitions += absl::StartsWith(note, "algbw = size");
  EXPECT_EQ(definitions, 1);
  EXPECT_TRUE(absl::StartsWith(section->tables.front().notes.back(), "algbw = size / time"))
      << section->tables.front().notes.back();
  // Each table still has its own summary line.
  for (const Table& t : section->tables)
    EXPECT_TRUE(absl::StartsWith(t.notes.front(), "Avg bus bandwidth") ||
                absl::StartsWith(t.notes.front(), "[1]"))
        << t.title;

  const std::optional<Section> a2a =
      CollectiveSection(AllToAllBesideAllReduce().platforms[0], 0.05);
  ASSERT_TRUE(a2a.has_value());
  ASSERT_EQ(a2a->tables.size(), 2u);
  EXPECT_EQ(a2a->tables[0].notes.back(),
            "In place ('-'): not timed by cnnbench, whose all-to-all has no in-place form "
            "(nccl-tests' alltoall_perf times one buffer as both send and receive buffer, and "
            "does not check that result: its #wrong is N/A).");
  for (const Table& t : a2a->tables) {
    if (t.title != "All-to-all, local, 4 ranks, fp32") continue;
    ASSERT_EQ(t.rows.size(), 1u);
    EXPECT_EQ(std::vector<std::string>(t.rows[0].begin() + 9, t.rows[0].end()),
              (std::vector<std::string>{"-", "-", "-", "-"}));
  }
}

TEST(NcclTestsLayoutTest, TheFormatIsNamedInTheUnknownFormatError) {
  ReportOptions options;
  options.format = "nccl";
  options.inputs = {kData + "collectives.json"};
  const ReportOutput out = RunReport(options, NoCharts);
  EXPECT_EQ(out.exit_code, kExitBadInput);
  ASSERT_FALSE(out.errors.empty());
  EXPECT_TRUE(absl::StrContains(out.errors[0], "nccl-tests")) << out.errors[0];
}

}  // namespace
}  // namespace cnnbench::report
