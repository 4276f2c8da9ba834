#include "tools/report/train_charts.h"

#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/report/model_names.h"
#include "tools/report/train_query.h"

namespace cnnbench::report {

// One model's throughput against GPU count (or CPU replica count) at its
// main batch size: synthetic, real, and linear scaling from the single-rank
// synthetic result.
std::optional<Chart> ScalingChart(const PlatformResults& p, const std::string& model,
                                  const std::string& precision, int batch, bool cpu) {
  std::set<Placement> rows;
  for (const auto& [c, m] : p.train) {
    if (c.model == model && c.precision == precision && c.batch == batch &&
        Placement::Of(c).cpu() == cpu) {
      rows.insert(Placement::Of(c));
    }
  }
  if (rows.size() < 2) return std::nullopt;
  Chart chart;
  chart.kind = Chart::Kind::kLines;
  chart.title = absl::StrCat(ModelDisplayName(model), ", ", precision, ", batch size ", batch,
                             cpu ? " per replica, CPU" : " per GPU");
  chart.x_label = cpu ? "CPU replicas" : "GPUs";
  chart.y_label = "images/sec";
  for (const Placement& at : rows) chart.x.push_back(absl::StrCat(at.ranks()));
  for (const char* data : kTrainDataKinds) {
    std::vector<std::optional<double>> values;
    bool any = false;
    for (const Placement& at : rows) {
      values.push_back(TrainThroughput(p, TrainCase(model, precision, data, batch, at)));
      any = any || values.back().has_value();
    }
    if (!any) continue;
    chart.series.push_back(data);
    chart.values.push_back(std::move(values));
  }
  const Placement single = cpu ? Placement::Cpu() : Placement{1, 1};
  if (auto one = TrainThroughput(p, TrainCase(model, precision, "synthetic", batch, single))) {
    chart.series.push_back("linear scaling");
    chart.reference_series = "linear scaling";
    chart.values.emplace_back();
    for (const Placement& at : rows) chart.values.back().push_back(*one * at.ranks());
  }
  if (chart.series.empty()) return std::nullopt;
  return chart;
}

// Synthetic and real bars per GPU count for one model at its main batch size.
std::optional<Chart> SyntheticVsRealChart(const PlatformResults& p, const std::string& model,
                                          const std::string& precision, int batch) {
  std::set<Placement> rows;
  std::set<std::string> kinds;
  for (const auto& [c, m] : p.train) {
    if (c.model == model && c.precision == precision && c.batch == batch && m.ok()) {
      rows.insert(Placement::Of(c));
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
  for (const Placement& at : rows) chart.x.push_back(GpuLabel(at));
  for (const char* data : kTrainDataKinds) {
    chart.series.push_back(data);
    chart.values.emplace_back();
    for (const Placement& at : rows)
      chart.values.back().push_back(
          TrainThroughput(p, TrainCase(model, precision, data, batch, at)));
  }
  return chart;
}

}  // namespace cnnbench::report
