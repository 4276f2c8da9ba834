// The per-iteration statistics by hand: nearest-rank percentiles on known
// lists (ties, one sample, an exact rank), tf_cnn_benchmarks' uncertainty
// and jitter against numpy's definitions worked out here, and the errors.
#include "bench/harness/iteration_stats.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace cnnbench::bench {
namespace {

TEST(IterationStatsTest, PercentilesAreNearestRank) {
  // 1..10 (shuffled): the p-th percentile is the ceil(p/10)-th value.
  const std::vector<double> ten = {7, 3, 10, 1, 5, 9, 2, 8, 4, 6};
  auto t = SummarizeTimes(ten);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->count, 10);
  EXPECT_DOUBLE_EQ(t->mean, 5.5);
  EXPECT_EQ(t->min, 1);
  EXPECT_EQ(t->max, 10);
  EXPECT_EQ(t->p50, 5);   // rank 5, not the interpolated 5.5
  EXPECT_EQ(t->p90, 9);   // rank 9 exactly (0.9 x 10), not pushed to 10 by rounding
  EXPECT_EQ(t->p95, 10);  // rank ceil(9.5) = 10
  EXPECT_EQ(t->p99, 10);
  // 200 samples 1..200: p99 is the 198th, p95 the 190th, p50 the 100th.
  std::vector<double> many;
  for (int i = 200; i >= 1; --i) many.push_back(i);
  auto m = SummarizeTimes(many);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->p50, 100);
  EXPECT_EQ(m->p95, 190);
  EXPECT_EQ(m->p99, 198);
}

TEST(IterationStatsTest, TiesAndOneSample) {
  auto ties = SummarizeTimes({2, 2, 2, 9});
  ASSERT_TRUE(ties.ok());
  EXPECT_EQ(ties->p50, 2);
  EXPECT_EQ(ties->p90, 9);
  auto one = SummarizeTimes({0.25});
  ASSERT_TRUE(one.ok());
  for (double v : {one->p50, one->p90, one->p95, one->p99, one->min, one->max, one->mean})
    EXPECT_EQ(v, 0.25);
}

TEST(IterationStatsTest, UncertaintyAndJitterAreTfCnnBenchmarks) {
  // 4 items per iteration at 1, 2, 4 and 8 s: rates 4, 2, 1, 0.5.
  auto r = SummarizeRates({1, 2, 4, 8}, 4);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->mean, 1.875);
  // np.std (population): sqrt(mean of squared deviations) / sqrt(4).
  const double var = (std::pow(4 - 1.875, 2) + std::pow(2 - 1.875, 2) + std::pow(1 - 1.875, 2) +
                      std::pow(0.5 - 1.875, 2)) /
                     4;
  EXPECT_DOUBLE_EQ(r->uncertainty, std::sqrt(var) / 2);
  // median(rates) = (1 + 2) / 2 = 1.5; |deviations| 2.5, 0.5, 0.5, 1: median 0.75.
  EXPECT_DOUBLE_EQ(r->jitter, 1.4826 * 0.75);
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
}

TEST(IterationStatsTest, DriftIsTheLastTenthOverTheFirstFromTwentySamples) {
  // 19 samples: no drift.
  EXPECT_FALSE(DriftRatio(std::vector<double>(19, 1.0)).has_value());
  // 20: tenths of 2 samples. First 1 and 3 (sum 4), last 5 and 7 (sum 12): 3.
  std::vector<double> s(20, 2.0);
  s[0] = 1;
  s[1] = 3;
  s[18] = 5;
  s[19] = 7;
  ASSERT_TRUE(DriftRatio(s).has_value());
  EXPECT_DOUBLE_EQ(*DriftRatio(s), 3.0);
  // 25 samples: tenths of 2 (n / 10, rounded down); the order matters, not the values.
  std::vector<double> faster(25, 1.0);
  faster[0] = faster[1] = 2.0;
  EXPECT_DOUBLE_EQ(*DriftRatio(faster), 0.5);
}

TEST(IterationStatsTest, StepSummaryAndItsDriftNote) {
  std::vector<double> s(20, 0.1);
  s[18] = s[19] = 0.12;  // the last tenth 20% slower
  auto summary = SummarizeSteps(s, 32);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->time.count, 20);
  EXPECT_NEAR(summary->rate.mean, (18 * 320 + 2 * 32 / 0.12) / 20, 1e-9);
  ASSERT_TRUE(summary->drift.has_value());
  EXPECT_NEAR(*summary->drift, 1.2, 1e-12);
  EXPECT_EQ(DriftNote(*summary, 0.05),
            ", slowed 20% over the run (drift 1.20: last tenth of 20 steps / first tenth)");
  EXPECT_EQ(DriftNote(*summary, 0.25), "");  // under the threshold
  // Too few steps for a drift: no note whatever the threshold.
  auto short_run = SummarizeSteps({0.1, 0.2}, 32);
  ASSERT_TRUE(short_run.ok());
  EXPECT_FALSE(short_run->drift.has_value());
  EXPECT_EQ(DriftNote(*short_run, 0), "");
  EXPECT_FALSE(SummarizeSteps({}, 32).ok());
}

TEST(IterationStatsTest, NoSamplesOrABadOneIsAnError) {
  EXPECT_FALSE(SummarizeTimes({}).ok());
  EXPECT_FALSE(SummarizeTimes({1, NAN}).ok());
  EXPECT_FALSE(SummarizeTimes({1, -1}).ok());
  EXPECT_FALSE(SummarizeRates({1, 0}, 4).ok());
}

}  // namespace
}  // namespace cnnbench::bench
