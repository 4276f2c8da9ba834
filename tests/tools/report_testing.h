// What the report's tests share: the fixtures' folder, reading a file whole,
// and a chart renderer that renders none (tests compare text, not charts).
#ifndef CNNBENCH_TESTS_TOOLS_REPORT_TESTING_H_
#define CNNBENCH_TESTS_TOOLS_REPORT_TESTING_H_

#include <fstream>
#include <sstream>
#include <string>

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

}  // namespace cnnbench::report::testing

#endif  // CNNBENCH_TESTS_TOOLS_REPORT_TESTING_H_
