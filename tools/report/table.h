// The report as data: per platform, sections of titled tables (cells already
// formatted) and charts. Every output format renders this same structure.
#ifndef CNNBENCH_TOOLS_REPORT_TABLE_H_
#define CNNBENCH_TOOLS_REPORT_TABLE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cnnbench::report {

struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;  // footnotes and remarks printed under the table
};

// A chart's data; HTML output renders it with gnuplot.
struct Chart {
  enum class Kind { kLines, kBars };
  Kind kind = Kind::kLines;
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<std::string> x;                              // x values (lines) or categories (bars)
  std::vector<std::string> series;                         // one line or one bar per category each
  std::vector<std::vector<std::optional<double>>> values;  // [series][x]; empty: missing
  std::string reference_series;  // drawn as a dashed guide (linear scaling), not as data
};

struct Section {
  std::string title;
  std::vector<Table> tables;
  std::vector<Chart> charts;
};

struct PlatformReport {
  std::string platform;
  std::vector<Section> sections;
};

struct Report {
  std::string title = "cnnbench results";
  std::vector<PlatformReport> platforms;
};

// Numbers footnotes within one table: cells carry "[n]", the notes list each
// reason once with the cells it explains.
class Footnotes {
 public:
  // Returns the marker for `reason`, adding `where` to its list of cells.
  std::string Mark(const std::string& reason, const std::string& where);
  // "[1] reason (where, where)" lines in marker order.
  std::vector<std::string> Notes() const;

 private:
  std::vector<std::string> reasons_;
  std::map<std::string, std::vector<std::string>> places_;
};

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_TABLE_H_
