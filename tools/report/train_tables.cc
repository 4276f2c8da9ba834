#include "tools/report/train_tables.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/report/format_number.h"
#include "tools/report/model_names.h"

namespace cnnbench::report {
namespace {

constexpr const char* kDataKinds[] = {"synthetic", "real"};

std::vector<std::string> Precisions(const PlatformResults& p) {
  std::vector<std::string> out;
  for (const auto& [c, m] : p.train) AddDistinct(c.precision, out);
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    return std::make_pair(PrecisionRank(a), a) < std::make_pair(PrecisionRank(b), b);
  });
  return out;
}

std::vector<std::string> Models(const PlatformResults& p) {
  std::vector<std::string> out;
  for (const auto& [c, m] : p.train) AddDistinct(c.model, out);
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return ModelBefore(a, b); });
  return out;
}

const Measurement* Find(const PlatformResults& p, const TrainCase& c) {
  auto it = p.train.find(c);
  return it == p.train.end() ? nullptr : &it->second;
}

std::optional<double> Throughput(const PlatformResults& p, const TrainCase& c) {
  const Measurement* m = Find(p, c);
  if (m == nullptr || !m->ok()) return std::nullopt;
  return m->Mean("images_per_second");
}

// Each (model, precision)'s largest batch size: the options table's "batch
// size per GPU" and the main results table's column.
std::map<std::pair<std::string, std::string>, int> PrimaryBatches(const PlatformResults& p) {
  std::map<std::pair<std::string, std::string>, int> primary;
  for (const auto& [c, m] : p.train) {
    int& b = primary[{c.model, c.precision}];
    b = std::max(b, c.batch);
  }
  return primary;
}

// GPU counts measured for the given cases (any model/batch when empty).
std::set<int> GpuCounts(const PlatformResults& p, const std::string& precision,
                        const std::string& data, const std::string& model, int batch) {
  std::set<int> gpus;
  for (const auto& [c, m] : p.train) {
    if (c.precision == precision && c.data == data && c.model == model && c.batch == batch) {
      gpus.insert(c.gpus);
    }
  }
  return gpus;
}

std::string Where(const std::string& model, int gpus) {
  std::string where = ModelDisplayName(model);
  if (gpus == 0) return absl::StrCat(where, ", CPU");
  return absl::StrCat(where, ", ", gpus, gpus == 1 ? " GPU" : " GPUs");
}

// The date part of ISO timestamps; several distinct dates become a range.
std::string DateRange(const std::vector<std::string>& values) {
  std::set<std::string> dates;
  for (const std::string& v : values) dates.insert(v.substr(0, 10));
  if (dates.empty()) return "unknown";
  if (dates.size() == 1) return *dates.begin();
  return absl::StrCat(*dates.begin(), " to ", *dates.rbegin());
}

std::string ShortCommits(const std::vector<std::string>& commits) {
  std::vector<std::string> out;
  for (const std::string& c : commits) {
    // A 40-hex commit reads as its first 7 characters, as the published page wrote it.
    bool dirty = c.size() > 6 && c.substr(c.size() - 6) == "-dirty";
    out.push_back(c.size() >= 40 ? absl::StrCat(c.substr(0, 7), dirty ? "-dirty" : "") : c);
  }
  return out.empty() ? "unknown" : absl::StrJoin(out, ", ");
}

std::string OrUnknown(const std::string& value) { return value.empty() ? "unknown" : value; }

std::string GpuText(const PlatformResults& p) {
  std::vector<std::string> counts = p.ContextValues("gpu_count");
  std::string model = p.Context("gpu_model");
  if (counts.empty()) return "unknown";
  if (counts.size() == 1 && (counts[0] == "0" || model == "none")) return "none";
  return absl::StrCat(absl::StrJoin(counts, " or "), "x ", OrUnknown(model));
}

std::vector<std::string> DataKinds(const PlatformResults& p) {
  std::vector<std::string> out;
  for (const char* data : kDataKinds) {
    for (const auto& [c, m] : p.train) {
      if (c.data == data) {
        out.push_back(data);
        break;
      }
    }
  }
  return out;
}

}  // namespace

std::string GpuLabel(int gpus) { return gpus == 0 ? "CPU" : absl::StrCat(gpus); }

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
  const std::vector<std::string> models = Models(p);
  for (const std::string& precision : Precisions(p)) {
    for (const char* data : kDataKinds) {
      TrainGroup main{precision, data, true, {}, {}};
      std::set<int> main_rows;
      std::map<int, TrainGroup> others;  // by batch size, ascending
      std::map<int, std::set<int>> other_rows;
      for (const std::string& model : models) {
        auto it = primary.find({model, precision});
        if (it == primary.end()) continue;
        std::set<int> batches;
        for (const auto& [c, m] : p.train) {
          if (c.model == model && c.precision == precision && c.data == data)
            batches.insert(c.batch);
        }
        for (int batch : batches) {
          std::set<int> gpus = GpuCounts(p, precision, data, model, batch);
          if (batch == it->second) {
            main.columns.emplace_back(model, batch);
            main_rows.insert(gpus.begin(), gpus.end());
          } else {
            TrainGroup& other =
                others.try_emplace(batch, TrainGroup{precision, data, false, {}, {}}).first->second;
            other.columns.emplace_back(model, batch);
            other_rows[batch].insert(gpus.begin(), gpus.end());
          }
        }
      }
      if (!main.columns.empty()) {
        main.gpus.assign(main_rows.begin(), main_rows.end());
        groups.push_back(main);
      }
      for (auto& [batch, other] : others) {
        other.gpus.assign(other_rows[batch].begin(), other_rows[batch].end());
        groups.push_back(other);
      }
    }
  }
  return groups;
}

std::string ThroughputCell(const Measurement* m, Footnotes& notes, const std::string& where) {
  if (m == nullptr) return absl::StrCat("N/A", notes.Mark("not run", where));
  if (m->ok()) return FormatThroughput(*m->Mean("images_per_second"));
  if (m->oom()) return "OOM";
  return absl::StrCat("N/A", notes.Mark(absl::StrCat("failed: ", m->errors.front()), where));
}

Table GroupTable(const TrainGroup& group, const std::string& title, const CellPrinter& cell) {
  Table table;
  table.title = title;
  table.header.push_back("GPUs");
  for (const auto& [model, batch] : group.columns) table.header.push_back(ModelDisplayName(model));
  Footnotes notes;
  for (int gpus : group.gpus) {
    std::vector<std::string> row = {GpuLabel(gpus)};
    for (const auto& [model, batch] : group.columns) {
      TrainCase c{model, group.precision, group.data, batch, gpus};
      row.push_back(cell(c, notes, Where(model, gpus)));
    }
    table.rows.push_back(std::move(row));
  }
  table.notes = notes.Notes();
  return table;
}

Table EnvironmentTable(const PlatformResults& p) {
  Table t;
  t.title = "Environment";
  t.header = {"Item", "Value"};
  std::string instance = p.Context("instance_type");
  if (instance.empty()) instance = p.Context("host_name");
  std::string cpu = OrUnknown(p.Context("cpu_model"));
  if (!p.Context("cpu_cores").empty())
    absl::StrAppend(&cpu, ", ", p.Context("cpu_cores"), " cores");
  std::string dataset = p.Context("dataset");
  if (dataset.empty()) dataset = DataKinds(p).empty() ? "n/a" : absl::StrJoin(DataKinds(p), ", ");
  t.rows = {
      {"Instance type", OrUnknown(instance)},
      {"GPU", GpuText(p)},
      {"CPU", cpu},
      {"OS", OrUnknown(p.Context("os"))},
      {"CUDA / cuDNN", absl::StrCat(OrUnknown(p.Context("cuda_toolkit_version")), " / ",
                                    OrUnknown(p.Context("cudnn_version")))},
      {"NCCL", OrUnknown(p.Context("nccl_version"))},
      {"oneDNN", OrUnknown(p.Context("onednn_version"))},
      {"cnnbench commit", ShortCommits(p.ContextValues("git_commit"))},
      {"Build", OrUnknown(p.Context("build_config"))},
      {"Dataset", dataset},
      {"Methodology", OrUnknown(p.Context("methodology"))},
      {"Test date", DateRange(p.ContextValues("date"))},
      {"Runs merged", absl::StrJoin(p.files, ", ")},
  };
  return t;
}

Table OptionsTable(const PlatformResults& p) {
  Table t;
  t.title = "Options";
  t.header = {"Options"};
  const auto primary = PrimaryBatches(p);
  std::vector<std::string> batch_row = {"Batch size per GPU"};
  std::vector<std::string> optimizer_row = {"Optimizer"};
  std::vector<std::string> precision_row = {"Precision"};
  std::string optimizer = p.Context("optimizer");
  std::vector<std::string> also;  // other batch sizes, for the note
  for (const std::string& model : Models(p)) {
    t.header.push_back(ModelDisplayName(model));
    std::vector<std::string> batches, precisions, others;
    for (const auto& [key, batch] : primary) {
      if (key.first == model) AddDistinct(absl::StrCat(batch), batches);
    }
    for (const std::string& precision : Precisions(p)) {
      if (primary.count({model, precision})) precisions.push_back(precision);
    }
    std::set<int> other_batches;
    for (const auto& [c, m] : p.train) {
      if (c.model == model && c.batch != primary.at({model, c.precision})) {
        other_batches.insert(c.batch);
      }
    }
    for (int b : other_batches) others.push_back(absl::StrCat(b));
    if (!others.empty()) {
      also.push_back(absl::StrCat(ModelDisplayName(model), " at ", absl::StrJoin(others, ", ")));
    }
    batch_row.push_back(absl::StrJoin(batches, ", "));
    optimizer_row.push_back(optimizer.empty() ? "not recorded" : optimizer);
    precision_row.push_back(absl::StrJoin(precisions, ", "));
  }
  t.rows = {batch_row, optimizer_row, precision_row};
  if (!also.empty()) {
    t.notes.push_back(absl::StrCat("Also measured at other batch sizes (see Other results): ",
                                   absl::StrJoin(also, "; "), "."));
  }
  return t;
}

Table ConfigurationTable(const PlatformResults& p) {
  Table t;
  t.title = "Configuration";
  t.header = {"Model", "variable_update", "all_reduce"};
  const std::string variable_update = p.Context("variable_update");
  const std::string all_reduce = p.Context("all_reduce");
  for (const std::string& model : Models(p)) {
    int max_gpus = 0;
    for (const auto& [c, m] : p.train) {
      if (c.model == model) max_gpus = std::max(max_gpus, c.gpus);
    }
    // Data parallelism is replicated (one replica per device, gradients
    // all-reduced); with one device nothing is reduced.
    const bool replicated = max_gpus > 1;
    t.rows.push_back(
        {ModelDisplayName(model),
         replicated ? (variable_update.empty() ? "replicated" : variable_update) : "n/a",
         replicated ? (all_reduce.empty() ? "nccl" : all_reduce) : "n/a"});
  }
  return t;
}

namespace {

Table SyntheticVsRealTable(const PlatformResults& p, const std::string& precision) {
  Table t;
  t.title = absl::StrCat("Synthetic vs real data, ", precision);
  t.header = {"Model", "Batch size", "GPUs", "Synthetic", "Real", "Real / synthetic"};
  Footnotes notes;
  for (const std::string& model : Models(p)) {
    std::set<std::pair<int, int>, std::greater<>> keys;  // (batch, -gpus): largest batch first
    std::set<std::string> kinds;
    for (const auto& [c, m] : p.train) {
      if (c.model == model && c.precision == precision) {
        keys.insert({c.batch, -c.gpus});
        kinds.insert(c.data);
      }
    }
    if (kinds.size() < 2) continue;
    for (const auto& [batch, neg_gpus] : keys) {
      TrainCase synthetic{model, precision, "synthetic", batch, -neg_gpus};
      TrainCase real{model, precision, "real", batch, -neg_gpus};
      std::string where = Where(model, -neg_gpus);
      std::optional<double> s = Throughput(p, synthetic), r = Throughput(p, real);
      t.rows.push_back({ModelDisplayName(model), absl::StrCat(batch), GpuLabel(-neg_gpus),
                        ThroughputCell(Find(p, synthetic), notes, where + ", synthetic"),
                        ThroughputCell(Find(p, real), notes, where + ", real"),
                        s && r && *s > 0 ? FormatRatio(*r / *s) : "-"});
    }
  }
  t.notes = notes.Notes();
  return t;
}

std::optional<Table> ScalingTable(const PlatformResults& p, const TrainGroup& group) {
  TrainGroup multi = group;
  multi.gpus.clear();
  for (int g : group.gpus) {
    if (g >= 2) multi.gpus.push_back(g);
  }
  if (multi.gpus.empty()) return std::nullopt;
  Table t = GroupTable(
      multi, absl::StrCat("Scaling efficiency: ", group.Describe()),
      [&p](const TrainCase& c, Footnotes& notes, const std::string& where) -> std::string {
        TrainCase one = c;
        one.gpus = 1;
        std::optional<double> n = Throughput(p, c), single = Throughput(p, one);
        if (!n) return ThroughputCell(Find(p, c), notes, where);  // OOM, failed or not run
        if (!single || *single <= 0)
          return absl::StrCat("N/A", notes.Mark("no 1-GPU result", where));
        return FormatPercent(*n / (c.gpus * *single));
      });
  t.notes.insert(t.notes.begin(), "Throughput at N GPUs / (N x throughput at 1 GPU).");
  return t;
}

std::optional<Table> BatchSizeTable(const PlatformResults& p, const std::string& data) {
  std::set<int> batches;
  std::map<std::tuple<std::string, std::string, int>, int> batch_counts;
  for (const auto& [c, m] : p.train) {
    if (c.data != data) continue;
    batches.insert(c.batch);
    ++batch_counts[{c.model, c.precision, c.gpus}];
  }
  bool sweep = false;
  for (const auto& [key, n] : batch_counts) sweep = sweep || n > 1;
  if (!sweep) return std::nullopt;
  Table t;
  t.title = absl::StrCat("Throughput by batch size: training ", data, " data");
  t.header = {"Model", "Precision", "GPUs"};
  for (int b : batches) t.header.push_back(absl::StrCat(b));
  Footnotes notes;
  for (const std::string& model : Models(p)) {
    for (const std::string& precision : Precisions(p)) {
      std::set<int> gpus;
      for (const auto& [c, m] : p.train) {
        if (c.model == model && c.precision == precision && c.data == data) gpus.insert(c.gpus);
      }
      for (int g : gpus) {
        std::vector<std::string> row = {ModelDisplayName(model), precision, GpuLabel(g)};
        for (int b : batches) {
          const Measurement* m = Find(p, TrainCase{model, precision, data, b, g});
          // A sweep is sparse by nature: an unmeasured size stays blank.
          row.push_back(m == nullptr ? "" : ThroughputCell(m, notes, Where(model, g)));
        }
        t.rows.push_back(std::move(row));
      }
    }
  }
  t.notes = notes.Notes();
  t.notes.push_back("Columns are the batch size per GPU; blank: not measured.");
  return t;
}

// One model's throughput against GPU count at its main batch size:
// synthetic, real, and linear scaling from the 1-GPU synthetic result.
std::optional<Chart> ScalingChart(const PlatformResults& p, const std::string& model,
                                  const std::string& precision, int batch) {
  std::set<int> gpus;
  for (const auto& [c, m] : p.train) {
    if (c.model == model && c.precision == precision && c.batch == batch && c.gpus > 0) {
      gpus.insert(c.gpus);
    }
  }
  if (gpus.size() < 2) return std::nullopt;
  Chart chart;
  chart.kind = Chart::Kind::kLines;
  chart.title =
      absl::StrCat(ModelDisplayName(model), ", ", precision, ", batch size ", batch, " per GPU");
  chart.x_label = "GPUs";
  chart.y_label = "images/sec";
  for (int g : gpus) chart.x.push_back(absl::StrCat(g));
  for (const char* data : kDataKinds) {
    std::vector<std::optional<double>> values;
    bool any = false;
    for (int g : gpus) {
      values.push_back(Throughput(p, {model, precision, data, batch, g}));
      any = any || values.back().has_value();
    }
    if (!any) continue;
    chart.series.push_back(data);
    chart.values.push_back(std::move(values));
  }
  if (auto single = Throughput(p, {model, precision, "synthetic", batch, 1})) {
    chart.series.push_back("linear scaling");
    chart.reference_series = "linear scaling";
    chart.values.emplace_back();
    for (int g : gpus) chart.values.back().push_back(*single * g);
  }
  if (chart.series.empty()) return std::nullopt;
  return chart;
}

// Synthetic and real bars per GPU count for one model at its main batch size.
std::optional<Chart> SyntheticVsRealChart(const PlatformResults& p, const std::string& model,
                                          const std::string& precision, int batch) {
  std::set<int> gpus;
  std::set<std::string> kinds;
  for (const auto& [c, m] : p.train) {
    if (c.model == model && c.precision == precision && c.batch == batch && m.ok()) {
      gpus.insert(c.gpus);
      kinds.insert(c.data);
    }
  }
  if (kinds.size() < 2) return std::nullopt;
  Chart chart;
  chart.kind = Chart::Kind::kBars;
  chart.title = absl::StrCat("Synthetic vs real data: ", ModelDisplayName(model), ", ", precision,
                             ", batch size ", batch, " per GPU");
  chart.x_label = "GPUs";
  chart.y_label = "images/sec";
  for (int g : gpus) chart.x.push_back(GpuLabel(g));
  for (const char* data : kDataKinds) {
    chart.series.push_back(data);
    chart.values.emplace_back();
    for (int g : gpus)
      chart.values.back().push_back(Throughput(p, {model, precision, data, batch, g}));
  }
  return chart;
}

}  // namespace

std::vector<Section> TrainSections(const PlatformResults& p) {
  if (p.train.empty()) return {};
  std::vector<Section> sections;
  const std::vector<TrainGroup> groups = TrainGroups(p);

  Section results{"Results", {}, {}};
  Section scaling{"Scaling efficiency", {}, {}};
  for (const TrainGroup& group : groups) {
    results.tables.push_back(GroupTable(
        group, group.Title(), [&p](const TrainCase& c, Footnotes& notes, const std::string& where) {
          return ThroughputCell(Find(p, c), notes, where);
        }));
    if (auto table = ScalingTable(p, group)) scaling.tables.push_back(*table);
  }
  // One throughput-vs-GPUs chart per model and precision, at its main batch size.
  const auto primary = PrimaryBatches(p);
  for (const std::string& model : Models(p)) {
    for (const std::string& precision : Precisions(p)) {
      auto it = primary.find({model, precision});
      if (it == primary.end()) continue;
      if (auto chart = ScalingChart(p, model, precision, it->second))
        results.charts.push_back(*chart);
    }
  }
  sections.push_back(std::move(results));

  Section versus{"Synthetic vs real data", {}, {}};
  for (const std::string& precision : Precisions(p)) {
    Table table = SyntheticVsRealTable(p, precision);
    if (table.rows.empty()) continue;
    versus.tables.push_back(std::move(table));
    for (const std::string& model : Models(p)) {
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
  for (const char* data : kDataKinds) {
    if (auto table = BatchSizeTable(p, data)) sweep.tables.push_back(*table);
  }
  if (!sweep.tables.empty()) sections.push_back(std::move(sweep));
  return sections;
}

}  // namespace cnnbench::report
