// The kept step times: kept per run name in repetition order, and written
// into a run's JSON entry as Google Benchmark writes it, still JSON.
#include "bench/harness/step_times.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace cnnbench::bench {
namespace {

TEST(StepTimesTest, KeepsEachRunsRepetitionsInOrder) {
  StepTimes times;
  times.Add("a/repeats:2", {0.1, 0.2});
  times.Add("b/repeats:1", {0.5});
  times.Add("a/repeats:2", {0.3});
  EXPECT_EQ(times.Take("a/repeats:2"), (std::vector<double>{0.1, 0.2}));
  EXPECT_EQ(times.Take("b/repeats:1"), (std::vector<double>{0.5}));
  EXPECT_EQ(times.Take("a/repeats:2"), (std::vector<double>{0.3}));
  EXPECT_FALSE(times.Take("a/repeats:2").has_value());
  EXPECT_FALSE(times.Take("never").has_value());
  times.Add("c", {1});
  times.Clear();
  EXPECT_FALSE(times.Take("c").has_value());
}

TEST(StepTimesTest, WritesTheListAsTheEntrysLastFieldInMilliseconds) {
  // One run as Google Benchmark 1.7.1's JSON reporter writes it, after a
  // previous entry (the separator its ReportRuns writes first).
  const std::string entry =
      ",\n    {\n      \"name\": \"train/x\",\n      \"run_type\": \"iteration\",\n"
      "      \"images_per_second\": 1.5000000000000000e+01\n    }";
  const std::string with = WithStepTimes(entry, {0.0125, 0.25, 1.0 / 3});
  EXPECT_EQ(with.substr(0, 2), ",\n");
  const nlohmann::json parsed = nlohmann::json::parse(with.substr(2));
  ASSERT_TRUE(parsed.contains("step_times_ms"));
  const std::vector<double> ms = parsed["step_times_ms"].get<std::vector<double>>();
  ASSERT_EQ(ms.size(), 3u);
  EXPECT_DOUBLE_EQ(ms[0], 12.5);
  EXPECT_DOUBLE_EQ(ms[1], 250);
  EXPECT_NEAR(ms[2], 333.333, 1e-9);  // 6 significant digits
  EXPECT_EQ(parsed["images_per_second"].get<double>(), 15);
  EXPECT_EQ(with.substr(with.size() - 6), "\n    }");  // the entry still closes as written
  // Something that is not an entry is left as it is.
  EXPECT_EQ(WithStepTimes("no brace", {1}), "no brace");
}

// The ranks' arrivals travel with the step list they were added with.
TEST(StepTimesTest, KeepsTheRanksArrivalsWithTheirRepetition) {
  StepTimes times;
  times.Add("a", {0.1}, {{0.01}, {0.02}});
  times.Add("a", {0.2});
  times.Add("a", {0.3}, {{0.03}, {0.04}});
  EXPECT_TRUE(times.TakeRankArrivals("a").empty()) << "nothing taken yet";
  EXPECT_EQ(times.Take("a"), (std::vector<double>{0.1}));
  EXPECT_EQ(times.TakeRankArrivals("a"), (std::vector<std::vector<double>>{{0.01}, {0.02}}));
  EXPECT_TRUE(times.TakeRankArrivals("a").empty()) << "taken once";
  EXPECT_EQ(times.Take("a"), (std::vector<double>{0.2}));
  EXPECT_TRUE(times.TakeRankArrivals("a").empty());
  EXPECT_EQ(times.Take("a"), (std::vector<double>{0.3}));
  EXPECT_EQ(times.TakeRankArrivals("a"), (std::vector<std::vector<double>>{{0.03}, {0.04}}));
}

TEST(StepTimesTest, WritesTheRanksArrivalsAsListsInMilliseconds) {
  const std::string entry = ",\n    {\n      \"name\": \"train/x\"\n    }";
  const std::string with =
      WithRankArrivals(WithStepTimes(entry, {0.5, 0.5}), {{0.25, 0.125}, {0.0125, 1.0 / 3}});
  const nlohmann::json parsed = nlohmann::json::parse(with.substr(2));
  ASSERT_TRUE(parsed.contains("rank_arrival_ms")) << with;
  const auto ranks = parsed["rank_arrival_ms"].get<std::vector<std::vector<double>>>();
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0], (std::vector<double>{250, 125}));
  EXPECT_DOUBLE_EQ(ranks[1][0], 12.5);
  EXPECT_NEAR(ranks[1][1], 333.333, 1e-9);
  EXPECT_EQ(parsed["step_times_ms"].size(), 2u);
  EXPECT_EQ(WithRankArrivals(entry, {}), entry) << "no arrivals: unchanged";
}

}  // namespace
}  // namespace cnnbench::bench
