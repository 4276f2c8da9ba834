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

}  // namespace
}  // namespace cnnbench::bench
