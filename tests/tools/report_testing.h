// What the report's tests share: the fixtures' folder, reading a file whole,
// and a chart renderer that renders none (tests compare text, not charts).
#ifndef CNNBENCH_TESTS_TOOLS_REPORT_TESTING_H_
#define CNNBENCH_TESTS_TOOLS_REPORT_TESTING_H_

#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "tools/report/table.h"

namespace cnnbench::report::testing {

inline const std::string kData = "tests/tools/testdata/";

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline absl::StatusOr<std::string> NoCharts(const Chart&, const std::string&) {
  return absl::UnimplementedError("no charts in the report's tests");
}

// Rates the report reduced as total work over total time, from fixtures
// whose repetitions were written as decimals: equal to `expected` within
// 1e-9 of it (a missing value only where one is expected).
inline ::testing::AssertionResult RatesNear(const std::vector<std::optional<double>>& actual,
                                            const std::vector<std::optional<double>>& expected) {
  auto text = [](const std::vector<std::optional<double>>& values) {
    std::ostringstream out;
    for (const std::optional<double>& v : values) {
      out << " ";
      if (v) {
        out << *v;
      } else {
        out << "none";
      }
    }
    return out.str();
  };
  bool same = actual.size() == expected.size();
  for (size_t i = 0; same && i < actual.size(); ++i) {
    same = actual[i].has_value() == expected[i].has_value() &&
           (!actual[i] || std::fabs(*actual[i] - *expected[i]) <= 1e-9 * std::fabs(*expected[i]));
  }
  if (same) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "rates" << text(actual) << " != expected" << text(expected);
}

inline ::testing::AssertionResult RateNear(std::optional<double> actual, double expected) {
  return RatesNear({actual}, {expected});
}

}  // namespace cnnbench::report::testing

#endif  // CNNBENCH_TESTS_TOOLS_REPORT_TESTING_H_
