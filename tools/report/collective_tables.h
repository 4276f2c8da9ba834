// The collectives' tables, as nccl-tests prints its results: one per
// collective, transport, rank count and type, a row per size with the
// out-of-place and in-place time, algbw, busbw and #wrong side by side, and
// its "Avg bus bandwidth" line.
#ifndef CNNBENCH_TOOLS_REPORT_COLLECTIVE_TABLES_H_
#define CNNBENCH_TOOLS_REPORT_COLLECTIVE_TABLES_H_

#include <optional>
#include <string>
#include <vector>

#include "tools/report/results.h"
#include "tools/report/table.h"

namespace cnnbench::report {

// One row of a collective's results, from a case's measurement.
struct CollectiveRow {
  const CaseName* name = nullptr;
  const Measurement* m = nullptr;
  int64_t count = 0;  // nccl-tests' count column: elements, per rank where it splits the buffer
  int root = -1;      // -1 for the collectives without one, as nccl-tests prints it
  // Empty where the case failed or the counter is missing.
  std::optional<double> out_us, out_algbw, out_busbw;  // algbw and busbw in bytes/s
  std::optional<double> in_us, in_algbw, in_busbw;
  // #wrong of each variant: 0 for a passed check, the counts a failed check
  // names ("wrong elements: X out of place, Y in place"), else empty.
  std::optional<int64_t> out_wrong, in_wrong;
};

// Cases of one table: a collective (family), transport, rank count and type.
struct CollectiveGroup {
  std::string family, impl, dtype;
  int ranks = 0;
  std::vector<CollectiveRow> rows;  // by op (nccl-tests' order), then size
  // nccl-tests' "Avg bus bandwidth": the mean of every busbw the rows
  // have, out of place and in place; empty when none has one.
  std::optional<double> AvgBusbw() const;
  std::string Title() const;  // "All-reduce, local, 2 ranks, fp32"
};

// Every group of the platform's collective cases, in family, transport,
// ranks and type order.
std::vector<CollectiveGroup> CollectiveGroups(const PlatformResults& platform);

// The memory rate a collective of `transport` (or a memory-bound kernel:
// "local" on the CPU, "nccl" on a GPU) is read against, measured in the
// same platform's run: the fastest bandwidth/copy/cpu case for the host
// transports (local, mpi), bandwidth/d2d/cuda for nccl; empty without one.
struct ReferenceRate {
  std::string name;  // the case's name
  double bytes_per_second = 0;
};
std::optional<ReferenceRate> MemoryReference(const PlatformResults& platform,
                                             const std::string& transport);

// Section "Memory bandwidth": rows kind, device and size; columns the
// thread counts; GB/s (empty: no section).
std::optional<Section> BandwidthSection(const PlatformResults& platform, double max_cv);

// Section "Collectives" (empty tables: no section); under each table, its
// largest size's busbw as a fraction of MemoryReference where the run
// has one; under the first, once for the section, how algbw and busbw are
// defined and why a collective without an in-place form has none.
std::optional<Section> CollectiveSection(const PlatformResults& platform, double max_cv);
// The spread of each table's out-of-place time.
std::vector<Table> CollectiveSpreadTables(const PlatformResults& platform);

// nccl-tests' own text layout (its src/util.cu's result header, rows and
// footer), so that scripts that parse all_reduce_perf's output read ours:
// per platform, one table per collective, transport and rank count, its
// rows by type (nccl-tests' -d all order), reduction and size, types and
// reductions spelled as nccl-tests spells them (float, half, bfloat16, ...);
// a case that did not run is a '#' line with its reason, a collective
// without an in-place form (all-to-all) has a '#' line saying why its
// in-place columns are N/A, and a failed check adds its wrong elements to
// the footer's "Out of bounds values".
std::string RenderNcclTests(const Results& results);
// nccl-tests' spelling of a dtype: float, half, bfloat16, double, int32, int64.
std::string NcclTestsTypeName(const std::string& dtype);
// nccl-tests' fixed-width number: %.2f, else %.1f, %.0f, then an exponent,
// whichever first fits `width` characters.
std::string NcclTestsNumber(double value, int width);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_COLLECTIVE_TABLES_H_
