#include "tools/report/framework_tables.h"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/report/format_number.h"
#include "tools/report/infer_tables.h"
#include "tools/report/model_names.h"
#include "tools/report/spread.h"
#include "tools/report/train_query.h"
#include "tools/report/train_tables.h"

namespace cnnbench::report {
namespace {

// One column: one reported run of the platform (one framework, one set of settings).
struct Column {
  const PlatformResults* run;
  std::string header;
};

// A table's cases: (precision rank, precision, data rank, data, batch).
using TableKey = std::tuple<int, std::string, int, std::string, int64_t>;

int DataRank(const std::string& data) {
  int rank = 0;
  for (const char* kind : kTrainDataKinds) {
    if (data == kind) return rank;
    ++rank;
  }
  return rank;
}

// A table row: a model at a placement, in column and row order.
struct RowKey {
  std::string model;
  Placement at;
  bool operator<(const RowKey& o) const {
    if (model != o.model) return ModelBefore(model, o.model);
    return at < o.at;
  }
};

// "steps: cnnbench 100, pytorch 2.15.0 50" for each setting (besides the
// framework's own) recorded with different values by two columns.
std::vector<std::string> SettingDifferences(const std::vector<Column>& columns) {
  std::vector<std::string> out;
  for (const std::string& key : SettingKeys()) {
    if (key == "framework" || key == "framework_settings") continue;
    std::set<std::string> values;
    std::vector<std::string> parts;
    for (const Column& c : columns) {
      for (const auto& [k, v] : c.run->settings) {
        if (k != key) continue;
        values.insert(v);
        parts.push_back(absl::StrCat(c.header, " ", v));
      }
    }
    if (values.size() > 1) out.push_back(absl::StrCat(key, ": ", absl::StrJoin(parts, ", ")));
  }
  return out;
}

// The train or the infer cases of a platform run.
using CaseMap = std::map<CaseName, Measurement> PlatformResults::*;

const Measurement* FindCase(const PlatformResults& p, CaseMap cases, const CaseName& c) {
  const auto it = (p.*cases).find(c);
  return it == (p.*cases).end() ? nullptr : &it->second;
}

// A counter's value (a rate: total work over total time) of a case that ran;
// empty when it failed, was not run or lacks the counter.
std::optional<double> CaseValue(const PlatformResults& p, CaseMap cases, const CaseName& c,
                                const char* counter) {
  const Measurement* m = FindCase(p, cases, c);
  if (m == nullptr || !m->ok()) return std::nullopt;
  return m->Mean(counter);
}

// The case of a row: a training step at its placement, or one batch's
// inference on its device.
CaseName RowCase(CaseMap cases, const std::string& model, const std::string& precision,
                 const std::string& data, int64_t batch, const Placement& at) {
  return cases == &PlatformResults::infer ? CaseName::Infer(model, precision, data, batch, at.gpus)
                                          : TrainCase(model, precision, data, batch, at);
}

// The rows of one side-by-side table: the cases at least two columns
// measured (succeeded or failed) at this precision, data kind and batch.
std::vector<RowKey> RowsMeasuredTwice(const std::vector<Column>& columns, CaseMap cases,
                                      const std::string& precision, const std::string& data,
                                      int64_t batch) {
  std::map<RowKey, int> measured;
  for (const Column& c : columns) {
    for (const auto& [name, m] : c.run->*cases) {
      if (name.precision == precision && name.data == data && name.batch == batch)
        ++measured[RowKey{name.model, Placement::Of(name)}];
    }
  }
  std::vector<RowKey> rows;
  for (const auto& [row, count] : measured) {
    if (count >= 2) rows.push_back(row);
  }
  return rows;
}

// A side-by-side table's notes: what the cells and ratios are, each
// framework's settings and the settings the columns differ in.
std::vector<std::string> SideBySideNotes(const std::vector<Column>& columns, const Column* baseline,
                                         const std::string& baseline_name,
                                         const Footnotes& footnotes) {
  std::vector<std::string> notes = {
      "Cells: images/sec of each framework's own runs on this platform (never merged with "
      "another framework's).",
      baseline != nullptr
          ? absl::StrCat("Ratios: each framework / ", baseline->header,
                         " (--baseline_framework); -: either side failed or not run.")
          : absl::StrCat("No ratios: the baseline framework (", baseline_name,
                         ", --baseline_framework) did not run on this platform.")};
  for (const std::string& n : footnotes.Notes()) notes.push_back(n);
  for (const Column& c : columns) {
    const std::string settings = c.run->Context("framework_settings");
    if (!settings.empty()) notes.push_back(absl::StrCat(c.header, " settings: ", settings));
  }
  for (const std::string& difference : SettingDifferences(columns)) {
    notes.push_back(absl::StrCat("Measured with other settings: ", difference));
  }
  notes.push_back(
      "Rows: the cases at least two frameworks ran; each framework's own tables list all.");
  return notes;
}

// One side-by-side table's place: the cases of one kind at a precision,
// data kind and batch, and the rows at least two columns measured.
struct TableScope {
  CaseMap cases;
  std::string precision, data;
  int64_t batch;
  std::vector<RowKey> rows;

  bool infer() const { return cases == &PlatformResults::infer; }
  CaseName Case(const RowKey& row) const {
    return RowCase(cases, row.model, precision, data, batch, row.at);
  }
  std::string What() const {
    return infer() ? absl::StrCat("inference ", data, " data, ", precision, ", batch size ", batch)
                   : absl::StrCat("training ", data, " data, ", precision, ", batch size ", batch,
                                  " per GPU");
  }
  // The row's second cell: GPUs (and CPU replicas) of a step; an
  // inference's device.
  std::string Where(const RowKey& row) const {
    return infer() ? InferDeviceName(row.at.gpus) : GpuLabel(row.at);
  }
  // Where a cell is, for footnotes and the chart: "ResNet-50, 8 GPUs".
  std::string Place(const RowKey& row) const {
    return infer() ? absl::StrCat(ModelDisplayName(row.model), ", ", Where(row))
                   : CellPlace(row.model, row.at);
  }
};

// The header's ratio columns: each framework / the baseline, with `suffix`.
void AddRatioHeaders(const std::vector<Column>& columns, const Column* baseline,
                     const std::string& suffix, std::vector<std::string>& header) {
  if (baseline == nullptr) return;
  for (const Column& c : columns) {
    if (&c != baseline)
      header.push_back(absl::StrCat(c.header, suffix, " / ", baseline->header, suffix));
  }
}

// A row's ratio cells: each framework's `counter` / the baseline's ("-"
// where either side has none).
void AddRatioCells(const std::vector<Column>& columns, const Column* baseline,
                   const TableScope& scope, const CaseName& name, const char* counter,
                   std::vector<std::string>& cells) {
  if (baseline == nullptr) return;
  const std::optional<double> base = CaseValue(*baseline->run, scope.cases, name, counter);
  for (const Column& c : columns) {
    if (&c == baseline) continue;
    const std::optional<double> value = CaseValue(*c.run, scope.cases, name, counter);
    cells.push_back(value && base && *base > 0 ? FormatRatio(*value / *base) : "-");
  }
}

// images/sec per framework with their ratios to the baseline, and its bar chart.
void AddThroughputTable(const std::vector<Column>& columns, const Column* baseline,
                        const std::string& baseline_name, const TableScope& scope, double max_cv,
                        Section& section) {
  Table t;
  t.title = absl::StrCat("Frameworks side by side: ", scope.What());
  t.header = {"Model", scope.infer() ? "Device" : "GPUs"};
  for (const Column& c : columns) t.header.push_back(c.header);
  AddRatioHeaders(columns, baseline, "", t.header);
  Chart chart;
  chart.kind = Chart::Kind::kBars;
  chart.title = t.title;
  chart.x_label = scope.infer() ? "model, device" : "model, GPUs";
  chart.y_label = "images/sec";
  for (const Column& c : columns) chart.series.push_back(c.header);
  chart.values.resize(columns.size());

  Footnotes notes;
  for (const RowKey& row : scope.rows) {
    const CaseName name = scope.Case(row);
    const std::string where = scope.Place(row);
    std::vector<std::string> cells = {ModelDisplayName(row.model), scope.Where(row)};
    chart.x.push_back(where);
    for (size_t i = 0; i < columns.size(); ++i) {
      const PlatformResults& run = *columns[i].run;
      cells.push_back(ThroughputCell(FindCase(run, scope.cases, name), notes,
                                     absl::StrCat(where, ", ", columns[i].header), max_cv));
      chart.values[i].push_back(CaseValue(run, scope.cases, name, "images_per_second"));
    }
    AddRatioCells(columns, baseline, scope, name, "images_per_second", cells);
    t.rows.push_back(std::move(cells));
  }
  t.notes = SideBySideNotes(columns, baseline, baseline_name, notes);
  section.tables.push_back(std::move(t));
  section.charts.push_back(std::move(chart));
}

// Inference latency per framework: the median and p99 batch (ms), and each
// framework's median over the baseline's.
void AddLatencyTable(const std::vector<Column>& columns, const Column* baseline,
                     const TableScope& scope, double max_cv, Section& section) {
  constexpr const char* kP50 = "latency_ms_p50";
  // Each framework's two columns: the counter and how a footnote names it.
  constexpr std::pair<const char*, const char*> kLatencies[] = {{kP50, "p50"},
                                                                {"latency_ms_p99", "p99"}};
  Table t;
  t.title = absl::StrCat("Frameworks side by side: ", scope.What(), ", latency (ms)");
  t.header = {"Model", "Device"};
  for (const Column& c : columns) {
    t.header.push_back(absl::StrCat(c.header, " p50"));
    t.header.push_back(absl::StrCat(c.header, " p99"));
  }
  AddRatioHeaders(columns, baseline, " p50", t.header);
  Footnotes notes;
  for (const RowKey& row : scope.rows) {
    const CaseName name = scope.Case(row);
    const std::string where = scope.Place(row);
    std::vector<std::string> cells = {ModelDisplayName(row.model), scope.Where(row)};
    for (const Column& c : columns) {
      const Measurement* m = FindCase(*c.run, scope.cases, name);
      for (const auto& [counter, column] : kLatencies) {
        const bool has = m != nullptr && m->ok() && m->Mean(counter);
        cells.push_back(has ? ValueCell(*m, counter, 1, max_cv, notes,
                                        absl::StrCat(where, ", ", c.header, " ", column))
                            : "-");
      }
    }
    AddRatioCells(columns, baseline, scope, name, kP50, cells);
    t.rows.push_back(std::move(cells));
  }
  t.notes = notes.Notes();
  t.notes.push_back(
      "p50, p99: nearest-rank percentiles of the per-batch times of a repetition, averaged over "
      "the repetitions; a ratio below 1 is a lower latency than the baseline's; -: failed, not "
      "run or not recorded (the throughput table above says why).");
  section.tables.push_back(std::move(t));
}

Section PlatformSection(const std::vector<Column>& columns, const Column* baseline,
                        const std::string& baseline_name, double max_cv) {
  Section section{"Frameworks side by side", {}, {}};
  for (CaseMap cases : {&PlatformResults::train, &PlatformResults::infer}) {
    std::set<TableKey> keys;
    for (const Column& c : columns) {
      for (const auto& [name, m] : c.run->*cases)
        keys.insert({PrecisionRank(name.precision), name.precision, DataRank(name.data), name.data,
                     name.batch});
    }
    for (const auto& [precision_rank, precision, data_rank, data, batch] : keys) {
      TableScope scope{cases, precision, data, batch,
                       RowsMeasuredTwice(columns, cases, precision, data, batch)};
      if (scope.rows.empty()) continue;
      AddThroughputTable(columns, baseline, baseline_name, scope, max_cv, section);
      if (scope.infer()) AddLatencyTable(columns, baseline, scope, max_cv, section);
    }
  }
  return section;
}

}  // namespace

bool FrameworkMatches(absl::string_view name, absl::string_view framework) {
  if (name.empty()) return false;
  if (name == framework) return true;
  const size_t space = framework.find(' ');
  return space != absl::string_view::npos && framework.substr(0, space) == name;
}

std::vector<std::string> Frameworks(const Results& results) {
  std::vector<std::string> out;
  for (const PlatformResults& p : results.platforms) AddDistinct(p.framework, out);
  return out;
}

absl::StatusOr<std::string> ResolveBaselineFramework(const Results& results,
                                                     const std::string& name) {
  const std::vector<std::string> present = Frameworks(results);
  std::vector<std::string> matches;
  for (const std::string& f : present) {
    if (FrameworkMatches(name, f)) matches.push_back(f);
  }
  if (matches.size() == 1) return matches[0];
  if (matches.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--baseline_framework=", name, ": no input has that framework (the inputs have: ",
        present.empty() ? "none" : absl::StrJoin(present, ", "),
        "; a file without a \"framework\" context key is ", kDefaultFramework, "'s)"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--baseline_framework=", name, " matches several frameworks (",
                   absl::StrJoin(matches, ", "), "); give one in full"));
}

std::map<size_t, Section> FrameworkSections(const Results& results, const std::string& baseline,
                                            double max_cv) {
  std::map<size_t, Section> out;
  std::vector<std::string> platforms;
  for (const PlatformResults& p : results.platforms) AddDistinct(p.platform, platforms);
  for (const std::string& platform : platforms) {
    std::vector<size_t> runs;
    std::set<std::string> frameworks;
    for (size_t i = 0; i < results.platforms.size(); ++i) {
      const PlatformResults& p = results.platforms[i];
      if (p.platform != platform || (p.train.empty() && p.infer.empty())) continue;
      runs.push_back(i);
      frameworks.insert(p.framework);
    }
    if (frameworks.size() < 2) continue;
    // The baseline's runs first, then the others in the order given.
    std::stable_partition(runs.begin(), runs.end(),
                          [&](size_t i) { return results.platforms[i].framework == baseline; });
    std::vector<Column> columns;
    for (size_t i : runs) {
      const PlatformResults& p = results.platforms[i];
      int same = 0;
      for (size_t j : runs) same += results.platforms[j].framework == p.framework;
      // A framework with runs of other settings: the reported name tells them apart.
      columns.push_back(Column{&p, same > 1 ? p.name : p.framework});
    }
    const Column* base = columns[0].run->framework == baseline ? &columns[0] : nullptr;
    Section section = PlatformSection(columns, base, baseline, max_cv);
    if (!section.tables.empty()) out.emplace(runs[0], std::move(section));
  }
  return out;
}

}  // namespace cnnbench::report
