#include "tools/report/infer_tables.h"

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tools/report/format_number.h"
#include "tools/report/messages.h"
#include "tools/report/model_names.h"
#include "tools/report/spread.h"
#include "tools/report/train_tables.h"

namespace cnnbench::report {
namespace {

// One table's cases: a model, precision, data kind and device.
using Key = std::tuple<std::string, std::string, std::string, int>;

// The latency columns' counters, and what a footnote calls each column.
constexpr std::pair<const char*, const char*> kLatencyColumns[] = {
    {"latency_ms", "latency mean"},
    {"latency_ms_p90", "p90 latency"},
    {"latency_ms_p95", "p95 latency"},
    {"latency_ms_p99", "p99 latency"},
    {"latency_ms_max", "max latency"}};

// A latency counter's cell in ms (3 significant figures), or "-".
std::string LatencyCell(const Measurement& m, const std::string& counter, double max_cv,
                        Footnotes& notes, const std::string& where) {
  if (!m.ok() || !m.Mean(counter)) return "-";
  return ValueCell(m, counter, 1, max_cv, notes, where);
}

}  // namespace

std::string InferDeviceName(int gpus) { return gpus == 0 ? "CPU" : "1 GPU"; }

namespace {

// One inference case's row: throughput, latencies, accuracy on real data,
// and the training step's throughput at the same batch beside it.
std::vector<std::string> InferRow(const PlatformResults& p, const CaseName& c, bool real,
                                  double max_cv, Footnotes& notes) {
  const Measurement& m = p.infer.at(c);
  // A footnote names the cell's row and column: "batch 2, p99 latency".
  const std::string where = absl::StrCat("batch ", c.batch);
  std::vector<std::string> row = {absl::StrCat(c.batch),
                                  ThroughputCell(&m, notes, where + ", images/sec", max_cv)};
  for (const auto& [counter, column] : kLatencyColumns)
    row.push_back(LatencyCell(m, counter, max_cv, notes, absl::StrCat(where, ", ", column)));
  if (real)
    for (const char* counter : {"top1_accuracy", "top5_accuracy"}) {
      const std::optional<double> v = m.ok() ? m.Mean(counter) : std::nullopt;
      row.push_back(v ? FormatPercent(*v) : "-");
    }
  const auto train = p.train.find(CaseName::Train(c.model, c.precision, c.data, c.batch, c.gpus));
  const std::optional<double> inferred = m.ok() ? m.Mean("images_per_second") : std::nullopt;
  std::optional<double> trained;
  if (train != p.train.end() && train->second.ok())
    trained = train->second.Mean("images_per_second");
  row.push_back(trained ? FormatThroughput(*trained) : "-");
  row.push_back(inferred && trained && *trained > 0 ? FormatRatio(*inferred / *trained) : "-");
  return row;
}

// One model, precision, data kind and device: a row per batch.
Table InferTable(const PlatformResults& p, const Key& key, const std::set<int64_t>& sizes,
                 double max_cv) {
  const auto& [model, precision, data, gpus] = key;
  Table t;
  t.title = absl::StrCat("Inference, ", ModelDisplayName(model), ", ", precision, ", ", data,
                         " data, ", InferDeviceName(gpus));
  t.header = {"batch", "images/sec", "latency mean (ms)", "p90", "p95", "p99", "max"};
  const bool real = data == "real";
  if (real) {
    t.header.push_back("top-1");
    t.header.push_back("top-5");
  }
  t.header.push_back("training images/sec");
  t.header.push_back("inference/training");
  Footnotes notes;
  int64_t fewest = 0;  // timed batches of the case with the fewest
  for (int64_t batch : sizes) {
    const CaseName c = CaseName::Infer(model, precision, data, batch, gpus);
    t.rows.push_back(InferRow(p, c, real, max_cv, notes));
    const Measurement& m = p.infer.at(c);
    if (const std::optional<double> n = m.ok() ? m.Mean("timed_iterations") : std::nullopt)
      if (fewest == 0 || *n < fewest) fewest = static_cast<int64_t>(*n);
  }
  t.notes = notes.Notes();
  if (fewest > 0 && fewest < 100)
    t.notes.push_back(absl::StrCat("Only ", fewest,
                                   " timed batches per repetition: p99 of fewer than 100 is "
                                   "about the max."));
  return t;
}

// Per model and device: throughput and p99 against batch, one line per precision.
std::vector<Chart> InferCharts(const PlatformResults& p,
                               const std::map<Key, std::set<int64_t>>& batches) {
  std::vector<Chart> out;
  std::map<std::tuple<std::string, std::string, int>, std::set<std::string>> charts;
  for (const auto& [key, sizes] : batches)
    charts[{std::get<0>(key), std::get<2>(key), std::get<3>(key)}].insert(std::get<1>(key));
  for (const auto& [what, precisions] : charts) {
    const auto& [model, data, gpus] = what;
    std::set<int64_t> all;
    for (const std::string& precision : precisions)
      for (int64_t b : batches.at({model, precision, data, gpus})) all.insert(b);
    if (all.size() < 2) continue;
    for (const char* counter : {"images_per_second", "latency_ms_p99"}) {
      Chart chart;
      chart.kind = Chart::Kind::kLines;
      const bool rate = std::string(counter) == "images_per_second";
      chart.title =
          absl::StrCat("Inference ", rate ? "throughput" : "p99 latency", ", ",
                       ModelDisplayName(model), ", ", data, " data, ", InferDeviceName(gpus));
      chart.x_label = "batch";
      chart.y_label = rate ? "images/sec" : "p99 latency (ms)";
      for (int64_t b : all) chart.x.push_back(absl::StrCat(b));
      for (const std::string& precision : precisions) {
        chart.series.push_back(precision);
        std::vector<std::optional<double>> values;
        for (int64_t b : all) {
          auto it = p.infer.find(CaseName::Infer(model, precision, data, b, gpus));
          values.push_back(it != p.infer.end() && it->second.ok() ? it->second.Mean(counter)
                                                                  : std::nullopt);
        }
        chart.values.push_back(std::move(values));
      }
      out.push_back(std::move(chart));
    }
  }
  return out;
}

}  // namespace

std::optional<Section> InferSection(const PlatformResults& p, double max_cv) {
  if (p.infer.empty()) return std::nullopt;
  std::map<Key, std::set<int64_t>> batches;
  for (const auto& [name, m] : p.infer)
    batches[{name.model, name.precision, name.data, name.gpus}].insert(name.batch);
  Section section{"Inference", {}, {}};
  bool any_real = false;
  for (const auto& [key, sizes] : batches) {
    any_real |= std::get<2>(key) == "real";
    section.tables.push_back(InferTable(p, key, sizes, max_cv));
  }
  section.tables.front().notes.push_back(
      "Each timed iteration is one batch; latencies are nearest-rank percentiles over every timed "
      "batch of a repetition, averaged over the repetitions (docs/benchmarks.md).");
  if (any_real)
    section.tables.front().notes.push_back(
        "Accuracy on real data is of the suite's untrained weights: about chance.");
  section.charts = InferCharts(p, batches);
  return section;
}

std::optional<Table> TrainAccuracyTable(const PlatformResults& p) {
  Table t;
  t.title = "Training batch accuracy (the last timed step's batch)";
  t.header = {"case", "top-1", "top-5", "loss"};
  for (const auto& [name, m] : p.train) {
    if (!m.ok()) continue;
    const std::optional<double> top1 = m.Mean("top1_accuracy");
    if (!top1) continue;
    const std::optional<double> top5 = m.Mean("top5_accuracy");
    const std::optional<double> loss = m.Mean("loss");
    t.rows.push_back({name.ToString(), FormatPercent(*top1), top5 ? FormatPercent(*top5) : "-",
                      loss ? FormatRatio(*loss) : "-"});
  }
  if (t.rows.empty()) return std::nullopt;
  t.notes.push_back(
      "Of one batch, averaged over the repetitions; synthetic data has random labels (chance), "
      "real data the model's untrained weights early in a run. //tools:convergence is the "
      "check that a backend learns.");
  return t;
}

}  // namespace cnnbench::report
