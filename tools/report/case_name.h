// Case names in the report are bench's (bench/suite/names.h: one grammar, one
// table of families, one printer); here is only what tables add to them.
#ifndef CNNBENCH_TOOLS_REPORT_CASE_NAME_H_
#define CNNBENCH_TOOLS_REPORT_CASE_NAME_H_

#include <string>

#include "absl/strings/string_view.h"
#include "bench/suite/names.h"

namespace cnnbench::report {

using bench::CaseName;
using bench::ParseCaseName;

// Whether a case belongs to the layer-kernel tables (conv, fc, pool,
// batchnorm, relu, gemm).
bool IsKernelCase(const CaseName& name);

// How kernel tables title a case's pass: "bwd_filter", "max fwd" for
// pooling, "" for GEMM.
std::string KernelVariant(const CaseName& name);

// Precisions in the order tables show them; unknown ones sort last.
int PrecisionRank(absl::string_view precision);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_CASE_NAME_H_
