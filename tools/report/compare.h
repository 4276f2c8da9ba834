// This run against a base run: the results tables again with each cell the
// ratio this / base, and the cells (of every kind) that fell more than a
// threshold below base listed as regressions, for CI.
#ifndef CNNBENCH_TOOLS_REPORT_COMPARE_H_
#define CNNBENCH_TOOLS_REPORT_COMPARE_H_

#include <optional>
#include <string>
#include <vector>

#include "tools/report/results.h"
#include "tools/report/table.h"

namespace cnnbench::report {

struct Regression {
  std::string platform;
  std::string key;  // canonical case name
  std::string unit;
  std::optional<double> base;
  std::optional<double> current;  // empty: the case failed or did not run this time
  // What told it from noise (significance.h): "Mann-Whitney p=0.0006", "99%
  // intervals apart", or "untested: 1 repetition in base" (the threshold
  // alone decided); "" for a case that failed or did not run.
  std::string test;

  // "dgx1 train/resnet50/...: 1734 -> 1540 images/sec (0.89)".
  std::string Describe() const;
};

struct Comparison {
  // Per platform of `current`, in its order: the "Comparison with base" section.
  std::vector<Section> sections;
  std::vector<Regression> regressions;
  // Below the threshold, but the repetitions cannot tell it from noise:
  // reported, never a regression.
  std::vector<Regression> within_noise;
  // Platforms without a base, with no case in common, or compared with a
  // base of another name or other settings.
  std::vector<std::string> warnings;
  int compared = 0;  // cases found on both sides
};

// A ratio below 1 - threshold is a regression when the repetitions tell the
// two apart (significance.h's test; with fewer than 2 repetitions on a side
// the threshold alone decides, and the table says the cell was untested);
// a case that failed or did not run this time is one too. A platform is compared with
// the base platform reported under the same name, else one of the same
// platform whose settings do not conflict, else, when both sides hold
// exactly one platform, with that one.
Comparison Compare(const Results& current, const Results& base, double threshold);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_COMPARE_H_
