// Tables for the non-training cases of one platform: the CPU's peak and the
// compute kernels (TFLOP/s or GB/s per precision), all-reduce (busbw vs size, as nccl-tests
// prints it) and the input pipeline (images/sec per thread count).
#ifndef CNNBENCH_TOOLS_REPORT_KERNEL_TABLES_H_
#define CNNBENCH_TOOLS_REPORT_KERNEL_TABLES_H_

#include <vector>

#include "tools/report/results.h"
#include "tools/report/table.h"

namespace cnnbench::report {

// Sections "Kernels", "Collectives" (collective_tables.h), "Gradient
// all-reduce" and "Input pipeline", each only when the
// platform has such cases; cells with a cv above `max_cv` are marked.
std::vector<Section> KernelSections(const PlatformResults& platform, double max_cv);

// Each of those tables' spread over repetitions, same rows and columns (the
// all-reduce tables: of the time per size).
std::vector<Table> KernelSpreadTables(const PlatformResults& platform);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_KERNEL_TABLES_H_
