#include "tools/report/format_number.h"

#include "gtest/gtest.h"

namespace cnnbench::report {
namespace {

// The published tables: three significant figures, never rounding the units.
TEST(FormatThroughputTest, AsPublished) {
  EXPECT_EQ(FormatThroughput(142.2), "142");
  EXPECT_EQ(FormatThroughput(91.84), "91.8");
  EXPECT_EQ(FormatThroughput(2987.4), "2987");
  EXPECT_EQ(FormatThroughput(17822.0), "17822");
  EXPECT_EQ(FormatThroughput(20.0), "20.0");
  EXPECT_EQ(FormatThroughput(7.081), "7.08");
  EXPECT_EQ(FormatThroughput(0.012345), "0.0123");
  EXPECT_EQ(FormatThroughput(0), "0");
}

TEST(FormatThroughputTest, RoundingIntoANewDigitDropsADecimal) {
  EXPECT_EQ(FormatThroughput(99.96), "100");
  EXPECT_EQ(FormatThroughput(9.996), "10.0");
  EXPECT_EQ(FormatThroughput(0.09996), "0.100");
}

TEST(FormatOtherTest, RatiosPercentsAndTimes) {
  EXPECT_EQ(FormatRatio(0.9675), "0.97");
  EXPECT_EQ(FormatPercent(0.9863), "98.6%");
  EXPECT_EQ(FormatMicroseconds(24.7), "24.70");
  EXPECT_EQ(FormatMicroseconds(461), "461.0");
  EXPECT_EQ(FormatMicroseconds(15502.4), "15502");
}

}  // namespace
}  // namespace cnnbench::report
