// Whether two sets of repetitions can be told apart, for --compare: a
// difference below the regression threshold is never a regression, and
// one beyond it is a regression only when the repetitions tell it from
// noise. The test is Mann-Whitney U (two-sided, exact where there are no
// ties, the normal approximation with the tie correction otherwise) at
// p < 0.002 when each side has at least 7 repetitions (with fewer, no
// arrangement of the ranks can reach that p); else the two means' 99%
// confidence intervals (Student's t) must not overlap, as airspeed
// velocity falls back to; with fewer than 2 repetitions on a side nothing
// can be tested.
#ifndef CNNBENCH_TOOLS_REPORT_SIGNIFICANCE_H_
#define CNNBENCH_TOOLS_REPORT_SIGNIFICANCE_H_

#include <string>
#include <vector>

namespace cnnbench::report {

inline constexpr double kMannWhitneyAlpha = 0.002;
inline constexpr int kMannWhitneyMinRepetitions = 7;

// Two-sided p-value of Mann-Whitney U for samples `a` and `b`.
double MannWhitneyP(const std::vector<double>& a, const std::vector<double>& b);

struct Interval {
  double low = 0, high = 0;
};
// The 99% confidence interval of the mean of `samples` (at least 2).
Interval MeanInterval99(const std::vector<double>& samples);

struct Verdict {
  enum class Test { kMannWhitney, kIntervals, kNone };
  Test test = Test::kNone;
  bool distinguishable = false;  // the repetitions tell the two apart
  // "Mann-Whitney p=0.0006", "99% intervals apart", "99% intervals
  // overlap", "untested: 1 repetition in base".
  std::string text;
};
Verdict Distinguish(const std::vector<double>& base, const std::vector<double>& current);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_SIGNIFICANCE_H_
