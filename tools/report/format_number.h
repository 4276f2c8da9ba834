// How numbers print in the tables: throughputs with at least three
// significant figures and never rounded above the units (91.8, 142, 2987), as
// the published tables print images/sec.
#ifndef CNNBENCH_TOOLS_REPORT_FORMAT_NUMBER_H_
#define CNNBENCH_TOOLS_REPORT_FORMAT_NUMBER_H_

#include <string>

namespace cnnbench::report {

// 0.01234 -> "0.0123", 7.081 -> "7.08", 91.84 -> "91.8", 2987.4 -> "2987".
std::string FormatThroughput(double value);

// Two decimals: 0.9675 -> "0.97".
std::string FormatRatio(double ratio);

// 0.9863 -> "98.6%".
std::string FormatPercent(double fraction);

// The way nccl-tests prints microseconds: fewer decimals as times grow.
std::string FormatMicroseconds(double us);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_FORMAT_NUMBER_H_
