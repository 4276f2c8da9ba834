// The training results of one platform, laid out as the published pages lay
// them out: per precision and data kind, rows = GPU count and columns =
// models; then synthetic vs real, scaling efficiency and throughput by batch
// size, with the charts that go with them.
#ifndef CNNBENCH_TOOLS_REPORT_TRAIN_TABLES_H_
#define CNNBENCH_TOOLS_REPORT_TRAIN_TABLES_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tools/report/results.h"
#include "tools/report/table.h"
#include "tools/report/train_query.h"

namespace cnnbench::report {

// The cases one results table shows: one precision and data kind and, per
// model, one batch size. The main table has each model at its largest batch
// size (the "batch size per GPU" of the options table); the "other results"
// tables have one batch size each, as the published pages do.
struct TrainGroup {
  std::string precision;
  std::string data;
  bool main = true;
  std::vector<std::pair<std::string, int>> columns;  // (model, batch) in model order
  std::vector<Placement> rows;  // CPU (1 replica, then more), then GPU counts ascending

  // "training synthetic data, fp32, batch size 64 per GPU".
  std::string Describe() const;
  // "Training synthetic data, ..." or "Other results: training synthetic data, ...".
  std::string Title() const;
};

std::vector<TrainGroup> TrainGroups(const PlatformResults& platform);

// Prints one cell of a group's table.
using CellPrinter =
    std::function<std::string(const CaseName& c, Footnotes& notes, const std::string& where)>;

// A group's table with rows = placements (CPU, CPU replicas, GPU counts)
// and columns = models.
Table GroupTable(const TrainGroup& group, const std::string& title, const CellPrinter& cell);

// images/sec (3 significant figures), OOM, or N/A with a footnote (failed,
// not run, or not finite); a footnote mark when its cv is above `max_cv`.
std::string ThroughputCell(const Measurement* m, Footnotes& notes, const std::string& where,
                           double max_cv);
// The same without noise marks (ratios and derived tables).
std::string ThroughputCell(const Measurement* m, Footnotes& notes, const std::string& where);

// The training sections (results, the CPU steps against the CPU's peak
// where the platform has peak cases, synthetic vs real, scaling, batch
// sizes); empty when the platform has no train cases.
std::vector<Section> TrainSections(const PlatformResults& platform, double max_cv);

// Each results table's spread over repetitions, same rows and columns.
std::vector<Table> TrainSpreadTables(const PlatformResults& platform);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_TRAIN_TABLES_H_
