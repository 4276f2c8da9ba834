// The per-iteration statistics by hand: nearest-rank percentiles on known
// lists (ties, one sample, an exact rank), tf_cnn_benchmarks' uncertainty
// and jitter against numpy's definitions worked out here, and the errors.
#include "bench/iteration_stats.h"

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

TEST(IterationStatsTest, NoSamplesOrABadOneIsAnError) {
  EXPECT_FALSE(SummarizeTimes({}).ok());
  EXPECT_FALSE(SummarizeTimes({1, NAN}).ok());
  EXPECT_FALSE(SummarizeTimes({1, -1}).ok());
  EXPECT_FALSE(SummarizeRates({1, 0}, 4).ok());
}

}  // namespace
}  // namespace cnnbench::bench
