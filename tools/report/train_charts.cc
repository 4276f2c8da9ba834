#include "tools/report/train_charts.h"

#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/report/model_names.h"
#include "tools/report/train_query.h"

namespace cnnbench::report {

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
  for (const char* data : kTrainDataKinds) {
    std::vector<std::optional<double>> values;
    bool any = false;
    for (int g : gpus) {
      values.push_back(TrainThroughput(p, CaseName::Train(model, precision, data, batch, g)));
      any = any || values.back().has_value();
    }
    if (!any) continue;
    chart.series.push_back(data);
    chart.values.push_back(std::move(values));
  }
  if (auto single = TrainThroughput(p, CaseName::Train(model, precision, "synthetic", batch, 1))) {
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
  for (const char* data : kTrainDataKinds) {
    chart.series.push_back(data);
    chart.values.emplace_back();
    for (int g : gpus)
      chart.values.back().push_back(TrainThroughput(p, CaseName::Train(model, precision, data, batch, g)));
  }
  return chart;
}

}  // namespace cnnbench::report
