#include "tools/report/train_tables.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/report/energy_tables.h"
#include "tools/report/format_number.h"
#include "tools/report/messages.h"
#include "tools/report/model_names.h"
#include "tools/report/peak_tables.h"
#include "tools/report/spread.h"
#include "tools/report/train_charts.h"
#include "tools/report/train_query.h"

namespace cnnbench::report {

std::string TrainGroup::Describe() const {
  std::set<int> batches;
  for (const auto& [model, batch] : columns) batches.insert(batch);
  std::string text = absl::StrCat("training ", data, " data, ", precision);
  if (batches.size() == 1) return absl::StrCat(text, ", batch size ", *batches.begin(), " per GPU");
  return absl::StrCat(text, ", batch size per GPU as in Options");
}

std::string TrainGroup::Title() const {
  if (!main) return absl::StrCat("Other results: ", Describe());
  std::string title = Describe();
  title[0] = 'T';
  return title;
}

std::vector<TrainGroup> TrainGroups(const PlatformResults& p) {
  std::vector<TrainGroup> groups;
  const auto primary = PrimaryBatches(p);
  const std::vector<std::string> models = TrainModels(p);
  for (const std::string& precision : TrainPrecisions(p)) {
    for (const char* data : kTrainDataKinds) {
      TrainGroup main{precision, data, true, {}, {}};
      std::set<Placement> main_rows;
      std::map<int, TrainGroup> others;  // by batch size, ascending
      std::map<int, std::set<Placement>> other_rows;
      for (const std::string& model : models) {
        auto it = primary.find({model, precision});
        if (it == primary.end()) continue;
        std::set<int> batches;
        for (const auto& [c, m] : p.train) {
          if (c.model == model && c.precision == precision && c.data == data)
            batches.insert(c.batch);
        }
        for (int batch : batches) {
          std::set<Placement> rows = TrainPlacements(p, precision, data, model, batch);
          if (batch == it->second) {
            main.columns.emplace_back(model, batch);
            main_rows.insert(rows.begin(), rows.end());
          } else {
            TrainGroup& other =
                others.try_emplace(batch, TrainGroup{precision, data, false, {}, {}}).first->second;
            other.columns.emplace_back(model, batch);
            other_rows[batch].insert(rows.begin(), rows.end());
          }
        }
      }
      if (!main.columns.empty()) {
        main.rows.assign(main_rows.begin(), main_rows.end());
        groups.push_back(main);
      }
      for (auto& [batch, other] : others) {
        other.rows.assign(other_rows[batch].begin(), other_rows[batch].end());
        groups.push_back(other);
      }
    }
  }
  return groups;
}

std::string DriftMark(const Measurement& m, Footnotes& notes, const std::string& where) {
  // The suite writes drift_flagged only where a repetition's last tenth of
  // steps was slower than its first tenth by more than --drift_threshold.
  const std::optional<double> flagged = m.Mean("drift_flagged");
  if (!flagged || !(*flagged > 0)) return "";
  const std::optional<double> drift = m.Mean("drift");
  return notes.Mark(
      "slowed during the run: a repetition's last tenth of steps took longer than its first "
      "tenth by more than --drift_threshold (throttling, turbo decay or a busy neighbour)",
      drift ? absl::StrFormat("%s: mean drift %.2f", where, *drift) : where);
}

std::string ThroughputCell(const Measurement* m, Footnotes& notes, const std::string& where,
                           double max_cv) {
  if (m == nullptr) return absl::StrCat("N/A", notes.Mark("not run", where));
  if (m->ok()) {
    // One after the other: the marks are numbered in the order they are made.
    std::string cell = ValueCell(*m, "images_per_second", 1, max_cv, notes, where);
    cell += DriftMark(*m, notes, where);
    cell += ThrottleMark(*m, notes, where);
    return cell;
  }
  if (m->oom()) return "OOM";
  return absl::StrCat("N/A", notes.Mark(FailureNote(m->FirstError()), where));
}

std::string ThroughputCell(const Measurement* m, Footnotes& notes, const std::string& where) {
  return ThroughputCell(m, notes, where, std::numeric_limits<double>::infinity());
}

Table GroupTable(const TrainGroup& group, const std::string& title, const CellPrinter& cell) {
  Table table;
  table.title = title;
  table.header.push_back("GPUs");
  for (const auto& [model, batch] : group.columns) table.header.push_back(ModelDisplayName(model));
  Footnotes notes;
  for (const Placement& at : group.rows) {
    std::vector<std::string> row = {GpuLabel(at)};
    for (const auto& [model, batch] : group.columns) {
      const CaseName c = TrainCase(model, group.precision, group.data, batch, at);
      row.push_back(cell(c, notes, CellPlace(model, at)));
    }
    table.rows.push_back(std::move(row));
  }
  table.notes = notes.Notes();
  return table;
}

namespace {

Table SyntheticVsRealTable(const PlatformResults& p, const std::string& precision, double max_cv) {
  Table t;
  t.title = absl::StrCat("Synthetic vs real data, ", precision);
  t.header = {"Model", "Batch size", "GPUs", "Synthetic", "Real", "Real / synthetic"};
  Footnotes notes;
  for (const std::string& model : TrainModels(p)) {
    // Largest batch first, then placements in row order.
    std::set<std::pair<int, Placement>> keys;  // (-batch, placement)
    std::set<std::string> kinds;
    for (const auto& [c, m] : p.train) {
      if (c.model == model && c.precision == precision) {
        keys.insert({-static_cast<int>(c.batch), Placement::Of(c)});
        kinds.insert(c.data);
      }
    }
    if (kinds.size() < 2) continue;
    for (const auto& [neg_batch, at] : keys) {
      const int batch = -neg_batch;
      const CaseName synthetic = TrainCase(model, precision, "synthetic", batch, at);
      const CaseName real = TrainCase(model, precision, "real", batch, at);
      std::string where = CellPlace(model, at);
      std::optional<double> s = TrainThroughput(p, synthetic), r = TrainThroughput(p, real);
      t.rows.push_back(
          {ModelDisplayName(model), absl::StrCat(batch), GpuLabel(at),
           ThroughputCell(FindTrain(p, synthetic), notes, where + ", synthetic", max_cv),
           ThroughputCell(FindTrain(p, real), notes, where + ", real", max_cv),
           s && r && *s > 0 ? FormatRatio(*r / *s) : "-"});
    }
  }
  t.notes = notes.Notes();
  return t;
}

std::optional<Table> ScalingTable(const PlatformResults& p, const TrainGroup& group) {
  // Rows with several data-parallel ranks: N GPUs, or R replicas on the CPU.
  TrainGroup multi = group;
  multi.rows.clear();
  bool gpu_rows = false, cpu_rows = false;
  for (const Placement& at : group.rows) {
    if (at.ranks() < 2) continue;
    multi.rows.push_back(at);
    (at.cpu() ? cpu_rows : gpu_rows) = true;
  }
  if (multi.rows.empty()) return std::nullopt;
  Table t = GroupTable(
      multi, absl::StrCat("Scaling efficiency: ", group.Describe()),
      [&p](const CaseName& c, Footnotes& notes, const std::string& where) -> std::string {
        const Placement at = Placement::Of(c);
        CaseName one = c;
        one.gpus = at.Single().gpus;
        one.replicas = at.Single().replicas;
        std::optional<double> n = TrainThroughput(p, c), single = TrainThroughput(p, one);
        if (!n) return ThroughputCell(FindTrain(p, c), notes, where);  // OOM, failed or not run
        if (!single || *single <= 0) {
          return absl::StrCat(
              "N/A", notes.Mark(at.cpu() ? "no 1-replica CPU result" : "no 1-GPU result", where));
        }
        return FormatPercent(*n / (at.ranks() * *single));
      });
  if (cpu_rows) {
    t.notes.insert(t.notes.begin(),
                   "Throughput at R replicas on the CPU / (R x throughput of one replica on the "
                   "CPU).");
  }
  if (gpu_rows)
    t.notes.insert(t.notes.begin(), "Throughput at N GPUs / (N x throughput at 1 GPU).");
  return t;
}

std::optional<Table> BatchSizeTable(const PlatformResults& p, const std::string& data,
                                    double max_cv) {
  std::set<int> batches;
  std::map<std::tuple<std::string, std::string, Placement>, int> batch_counts;
  for (const auto& [c, m] : p.train) {
    if (c.data != data) continue;
    batches.insert(c.batch);
    ++batch_counts[{c.model, c.precision, Placement::Of(c)}];
  }
  bool sweep = false;
  for (const auto& [key, n] : batch_counts) sweep = sweep || n > 1;
  if (!sweep) return std::nullopt;
  Table t;
  t.title = absl::StrCat("Throughput by batch size: training ", data, " data");
  t.header = {"Model", "Precision", "GPUs"};
  for (int b : batches) t.header.push_back(absl::StrCat(b));
  Footnotes notes;
  for (const std::string& model : TrainModels(p)) {
    for (const std::string& precision : TrainPrecisions(p)) {
      std::set<Placement> rows;
      for (const auto& [c, m] : p.train) {
        if (c.model == model && c.precision == precision && c.data == data)
          rows.insert(Placement::Of(c));
      }
      for (const Placement& at : rows) {
        std::vector<std::string> row = {ModelDisplayName(model), precision, GpuLabel(at)};
        for (int b : batches) {
          const Measurement* m = FindTrain(p, TrainCase(model, precision, data, b, at));
          // A sweep is sparse by nature: an unmeasured size stays blank.
          row.push_back(m == nullptr ? "" : ThroughputCell(m, notes, CellPlace(model, at), max_cv));
        }
        t.rows.push_back(std::move(row));
      }
    }
  }
  t.notes = notes.Notes();
  t.notes.push_back("Columns are the batch size per GPU; blank: not measured.");
  return t;
}

}  // namespace

std::vector<Table> TrainSpreadTables(const PlatformResults& p) {
  std::vector<Table> tables;
  for (const TrainGroup& group : TrainGroups(p)) {
    Table t = GroupTable(group, absl::StrCat("Spread: ", group.Title()),
                         [&p](const CaseName& c, Footnotes&, const std::string&) {
                           return SpreadCell(FindTrain(p, c), "images_per_second");
                         });
    tables.push_back(std::move(t));
  }
  return tables;
}

std::vector<Section> TrainSections(const PlatformResults& p, double max_cv) {
  if (p.train.empty()) return {};
  std::vector<Section> sections;
  const std::vector<TrainGroup> groups = TrainGroups(p);

  Section results{"Results", {}, {}};
  Section scaling{"Scaling efficiency", {}, {}};
  for (const TrainGroup& group : groups) {
    results.tables.push_back(
        GroupTable(group, group.Title(),
                   [&p, max_cv](const CaseName& c, Footnotes& notes, const std::string& where) {
                     return ThroughputCell(FindTrain(p, c), notes, where, max_cv);
                   }));
    if (auto table = ScalingTable(p, group)) scaling.tables.push_back(*table);
  }
  // One throughput-vs-GPUs chart (and one vs CPU replicas) per model and
  // precision, at its main batch size.
  const auto primary = PrimaryBatches(p);
  for (const std::string& model : TrainModels(p)) {
    for (const std::string& precision : TrainPrecisions(p)) {
      auto it = primary.find({model, precision});
      if (it == primary.end()) continue;
      for (bool cpu : {false, true}) {
        if (auto chart = ScalingChart(p, model, precision, it->second, cpu))
          results.charts.push_back(*chart);
      }
    }
  }
  sections.push_back(std::move(results));

  // CPU steps against the CPU's measured peak (the peak/ family).
  if (std::optional<Table> table = TrainVsPeakTable(p, max_cv))
    sections.push_back(Section{"Training step vs the CPU's peak", {*std::move(table)}, {}});
  if (std::optional<Table> table = GpuTrainVsPeakTable(p, max_cv))
    sections.push_back(Section{"Training step vs the GPU's peak", {*std::move(table)}, {}});

  Section versus{"Synthetic vs real data", {}, {}};
  for (const std::string& precision : TrainPrecisions(p)) {
    Table table = SyntheticVsRealTable(p, precision, max_cv);
    if (table.rows.empty()) continue;
    versus.tables.push_back(std::move(table));
    for (const std::string& model : TrainModels(p)) {
      auto it = primary.find({model, precision});
      if (it == primary.end()) continue;
      if (auto chart = SyntheticVsRealChart(p, model, precision, it->second)) {
        versus.charts.push_back(*chart);
      }
    }
  }
  if (!versus.tables.empty()) sections.push_back(std::move(versus));
  if (!scaling.tables.empty()) sections.push_back(std::move(scaling));

  Section sweep{"Throughput by batch size", {}, {}};
  for (const char* data : kTrainDataKinds) {
    if (auto table = BatchSizeTable(p, data, max_cv)) sweep.tables.push_back(*table);
  }
  if (!sweep.tables.empty()) sections.push_back(std::move(sweep));
  return sections;
}

}  // namespace cnnbench::report
