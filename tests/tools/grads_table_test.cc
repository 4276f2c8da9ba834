// The grads/ family (one step's gradient all-reduce of a model) in its own
// table. grads_tiny.json was written by
// `bench/all --preset=tiny --families=grads --platform=grads-box`.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tools/report/report.h"
#include "tools/report/run_file.h"

namespace cnnbench::report {
namespace {

TEST(GradsTableTest, OneRowPerModelImplementationAndRanks) {
  std::vector<std::string> warnings, errors;
  Results results =
      LoadResults({"tests/tools/testdata/grads_tiny.json"}, &warnings, &errors);
  ASSERT_TRUE(errors.empty()) << errors[0];
  const Report report = BuildReport(results, "t", 0.05);
  const Table* table = nullptr;
  for (const PlatformReport& p : report.platforms)
    for (const Section& s : p.sections)
      for (const Table& t : s.tables)
        if (t.title == "Gradient all-reduce per step") table = &t;
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->rows.size(), 1u);
  const std::vector<std::string>& row = table->rows[0];
  ASSERT_EQ(row.size(), table->header.size());
  EXPECT_EQ(row[0], "Trivial");
  EXPECT_EQ(row[1], "local");
  EXPECT_EQ(row[2], "2");
  EXPECT_EQ(row[3], "25");
  EXPECT_EQ(row[4], "16.6");  // the trivial model's fp32 gradient block, in MiB
  EXPECT_EQ(row[5], "1");     // one bucket: the block is under 25 MiB
  for (size_t i = 6; i < row.size(); ++i) EXPECT_NE(row[i], "-") << table->header[i];
}

}  // namespace
}  // namespace cnnbench::report
