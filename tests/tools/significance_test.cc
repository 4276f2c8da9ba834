// --compare's test of whether repetitions tell two results apart
// (tools/report/significance.h): Mann-Whitney U's p against exact values,
// the 99% interval against Student's t, which test each sample size gets,
// and a comparison where a drop beyond the threshold that the repetitions
// cannot tell from noise is reported as such, not as a regression.
#include "tools/report/significance.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tools/report/compare.h"
#include "tools/report/results.h"
#include "tools/report/run_file.h"

namespace cnnbench::report {
namespace {

TEST(SignificanceTest, MannWhitneyPIsExactWithoutTies) {
  // Complete separation: one arrangement of C(n+m, n) at each tail.
  EXPECT_NEAR(MannWhitneyP({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}), 2.0 / 252, 1e-12);
  EXPECT_NEAR(MannWhitneyP({1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14}), 2.0 / 3432,
              1e-12);
  // Symmetric in its arguments.
  EXPECT_NEAR(MannWhitneyP({8, 9, 10, 11, 12, 13, 14}, {1, 2, 3, 4, 5, 6, 7}), 2.0 / 3432,
              1e-12);
  // One swap at the boundary: U = 1, P(U <= 1) = 2 / 252 per tail.
  EXPECT_NEAR(MannWhitneyP({1, 2, 3, 4, 6}, {5, 7, 8, 9, 10}), 4.0 / 252, 1e-12);
  // Interleaved: nothing to tell.
  EXPECT_GT(MannWhitneyP({1, 3, 5, 7, 9, 11, 13}, {2, 4, 6, 8, 10, 12, 14}), 0.5);
}

TEST(SignificanceTest, MannWhitneyWithTiesUsesTheCorrectedNormal) {
  const double separated = MannWhitneyP({1, 1, 1, 1, 1, 1, 1}, {2, 2, 2, 2, 2, 2, 2});
  EXPECT_LT(separated, kMannWhitneyAlpha);
  EXPECT_GT(separated, 0);
  EXPECT_NEAR(MannWhitneyP({1, 1, 2, 2}, {1, 1, 2, 2}), 1.0, 1e-12);
}

TEST(SignificanceTest, TheIntervalIsStudentsAt99Percent) {
  const Interval i = MeanInterval99({1, 2, 3});  // mean 2, s 1, t(0.995, 2) = 9.925
  EXPECT_NEAR(i.low, 2 - 9.925 / std::sqrt(3.0), 1e-9);
  EXPECT_NEAR(i.high, 2 + 9.925 / std::sqrt(3.0), 1e-9);
}

TEST(SignificanceTest, EachSampleSizeGetsItsTest) {
  Verdict one = Distinguish({100}, {90, 91, 89});
  EXPECT_EQ(one.test, Verdict::Test::kNone);
  EXPECT_EQ(one.text, "untested: 1 repetition in base");
  Verdict tight = Distinguish({100, 100.1, 99.9}, {90, 90.1, 89.9});
  EXPECT_EQ(tight.test, Verdict::Test::kIntervals);
  EXPECT_TRUE(tight.distinguishable) << tight.text;
  Verdict noisy = Distinguish({100, 130, 70}, {90, 120, 60});
  EXPECT_EQ(noisy.test, Verdict::Test::kIntervals);
  EXPECT_FALSE(noisy.distinguishable);
  EXPECT_EQ(noisy.text, "99% intervals overlap");
  Verdict many = Distinguish({100, 101, 102, 103, 104, 105, 106}, {90, 91, 92, 93, 94, 95, 96});
  EXPECT_EQ(many.test, Verdict::Test::kMannWhitney);
  EXPECT_TRUE(many.distinguishable) << many.text;
  EXPECT_EQ(many.text, "Mann-Whitney p=0.00058");
}

// A run file of one train case with these repetitions' images/s.
RunFile TrainRun(const std::string& path, const std::vector<double>& rates) {
  std::vector<std::string> entries;
  for (size_t i = 0; i < rates.size(); ++i)
    entries.push_back(absl::StrCat(
        R"({"name": "train/resnet50/fp32/synthetic/batch:32/gpus:0/iterations:10/repeats:)",
        rates.size(), R"(/manual_time", "run_name": "train/resnet50/fp32/synthetic/batch:32/)",
        R"(gpus:0/iterations:10/repeats:)", rates.size(),
        R"(/manual_time", "run_type": "iteration", "repetitions": )", rates.size(),
        R"(, "repetition_index": )", i,
        R"(, "iterations": 10, "real_time": 1.0, "cpu_time": 1.0, "time_unit": "s", )",
        R"("images_per_second": )", rates[i], "}"));
  const std::string text =
      absl::StrCat(R"({"context": {"platform": "box"}, "benchmarks": [)",
                   absl::StrJoin(entries, ","), "]}");
  std::vector<std::string> warnings;
  absl::StatusOr<RunFile> file = ParseRunFile(path, text, &warnings);
  EXPECT_TRUE(file.ok()) << file.status();
  return file.ok() ? *file : RunFile{};
}

Results ResultsOf(const RunFile& file) {
  Results results;
  std::vector<std::string> warnings;
  AddRunFile(file, results, &warnings);
  return results;
}

TEST(SignificanceTest, ADropWithinNoiseIsReportedNotARegression) {
  const Results base = ResultsOf(TrainRun("base.json", {100, 130, 70}));
  // 10% down on average, but the repetitions overlap: not a regression.
  const Comparison noisy = Compare(ResultsOf(TrainRun("now.json", {90, 120, 60})), base, 0.05);
  EXPECT_TRUE(noisy.regressions.empty()) << noisy.regressions[0].Describe();
  ASSERT_EQ(noisy.within_noise.size(), 1u);
  EXPECT_EQ(noisy.within_noise[0].test, "99% intervals overlap");
  // The same drop with tight repetitions is one.
  const Results tight_base = ResultsOf(TrainRun("base.json", {100, 100.5, 99.5}));
  const Comparison tight =
      Compare(ResultsOf(TrainRun("now.json", {90, 90.5, 89.5})), tight_base, 0.05);
  ASSERT_EQ(tight.regressions.size(), 1u);
  EXPECT_EQ(tight.regressions[0].test, "99% intervals apart");
  EXPECT_TRUE(tight.within_noise.empty());
  // One repetition a side: the threshold alone decides, and says so.
  const Comparison single =
      Compare(ResultsOf(TrainRun("now.json", {90})), ResultsOf(TrainRun("base.json", {100})), 0.05);
  ASSERT_EQ(single.regressions.size(), 1u);
  EXPECT_EQ(single.regressions[0].test, "untested: 1 repetition on each side");
}

}  // namespace
}  // namespace cnnbench::report
