#include "tools/report/significance.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cnnbench::report {
namespace {

// Ranks of the pooled samples (ties get their mean rank); whether any tie.
std::vector<double> PooledRanks(const std::vector<double>& pooled, bool* ties) {
  std::vector<size_t> order(pooled.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return pooled[x] < pooled[y]; });
  std::vector<double> ranks(pooled.size());
  *ties = false;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && pooled[order[j + 1]] == pooled[order[i]]) ++j;
    if (j > i) *ties = true;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = (i + j) / 2.0 + 1;
    i = j + 1;
  }
  return ranks;
}

// P(U <= u) for sample sizes n and m without ties, by counting the
// arrangements of ranks (the classic recurrence over the largest rank).
double ExactLowerTail(int n, int m, int u) {
  // counts[i][j][k]: arrangements of i and j items with U = k.
  const int max_u = n * m;
  std::vector<std::vector<std::vector<double>>> counts(
      n + 1, std::vector<std::vector<double>>(m + 1, std::vector<double>(max_u + 1, 0)));
  for (int i = 0; i <= n; ++i)
    for (int j = 0; j <= m; ++j) {
      if (i == 0 || j == 0) {
        counts[i][j][0] = 1;
        continue;
      }
      for (int k = 0; k <= i * j; ++k) {
        // The largest value is from the first sample (it beats all j of
        // the second), or from the second.
        const double first = k >= j ? counts[i - 1][j][k - j] : 0;
        counts[i][j][k] = first + counts[i][j - 1][k];
      }
    }
  double below = 0, total = 0;
  for (int k = 0; k <= max_u; ++k) {
    total += counts[n][m][k];
    if (k <= u) below += counts[n][m][k];
  }
  return below / total;
}

// Student's t quantile at 0.995 for `df` degrees of freedom.
double T995(int df) {
  static const double kTable[] = {63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355,
                                  3.250,  3.169, 3.106, 3.055, 3.012, 2.977, 2.947, 2.921,
                                  2.898,  2.878, 2.861, 2.845, 2.831, 2.819, 2.807, 2.797,
                                  2.787,  2.779, 2.771, 2.763, 2.756, 2.750};
  if (df >= 1 && df <= 30) return kTable[df - 1];
  if (df <= 40) return 2.704;
  if (df <= 60) return 2.660;
  if (df <= 120) return 2.617;
  return 2.576;
}

}  // namespace

double MannWhitneyP(const std::vector<double>& a, const std::vector<double>& b) {
  const int n = static_cast<int>(a.size()), m = static_cast<int>(b.size());
  if (n == 0 || m == 0) return 1;
  std::vector<double> pooled(a);
  pooled.insert(pooled.end(), b.begin(), b.end());
  bool ties = false;
  const std::vector<double> ranks = PooledRanks(pooled, &ties);
  double rank_sum = 0;
  for (int i = 0; i < n; ++i) rank_sum += ranks[i];
  const double u = rank_sum - n * (n + 1) / 2.0;
  const double u_small = std::min(u, n * m - u);
  if (!ties && n <= 20 && m <= 20) {
    const double p = 2 * ExactLowerTail(n, m, static_cast<int>(std::lround(u_small)));
    return std::min(1.0, p);
  }
  // The normal approximation with the tie correction and a continuity
  // correction.
  const double total = n + m;
  double tie_term = 0;
  std::vector<double> sorted(ranks);
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[i]) ++j;
    const double t = static_cast<double>(j - i + 1);
    tie_term += t * t * t - t;
    i = j + 1;
  }
  const double variance = n * m / 12.0 * ((total + 1) - tie_term / (total * (total - 1)));
  if (variance <= 0) return 1;
  const double z = (std::fabs(u - n * m / 2.0) - 0.5) / std::sqrt(variance);
  return std::min(1.0, std::erfc(std::max(0.0, z) / std::sqrt(2.0)));
}

Interval MeanInterval99(const std::vector<double>& samples) {
  const double n = static_cast<double>(samples.size());
  double mean = 0;
  for (double x : samples) mean += x;
  mean /= n;
  double squares = 0;
  for (double x : samples) squares += (x - mean) * (x - mean);
  const double half = T995(static_cast<int>(n) - 1) * std::sqrt(squares / (n - 1) / n);
  return {mean - half, mean + half};
}

Verdict Distinguish(const std::vector<double>& base, const std::vector<double>& current) {
  Verdict v;
  const size_t fewest = std::min(base.size(), current.size());
  if (fewest < 2) {
    v.text = absl::StrCat("untested: ", fewest, " repetition", fewest == 1 ? "" : "s",
                          base.size() == current.size() ? " on each side"
                          : base.size() < current.size() ? " in base"
                                                          : " in this run");
    return v;
  }
  if (fewest >= static_cast<size_t>(kMannWhitneyMinRepetitions)) {
    v.test = Verdict::Test::kMannWhitney;
    const double p = MannWhitneyP(base, current);
    v.distinguishable = p < kMannWhitneyAlpha;
    v.text = absl::StrFormat("Mann-Whitney p=%.2g", p);
    return v;
  }
  v.test = Verdict::Test::kIntervals;
  const Interval b = MeanInterval99(base), c = MeanInterval99(current);
  v.distinguishable = b.high < c.low || c.high < b.low;
  v.text = v.distinguishable ? "99% intervals apart" : "99% intervals overlap";
  return v;
}

}  // namespace cnnbench::report
