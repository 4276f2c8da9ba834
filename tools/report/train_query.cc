#include "tools/report/train_query.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tools/report/model_names.h"

namespace cnnbench::report {

std::vector<std::string> TrainPrecisions(const PlatformResults& p) {
  std::vector<std::string> out;
  for (const auto& [c, m] : p.train) AddDistinct(c.precision, out);
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    return std::make_pair(PrecisionRank(a), a) < std::make_pair(PrecisionRank(b), b);
  });
  return out;
}

std::vector<std::string> TrainModels(const PlatformResults& p) {
  std::vector<std::string> out;
  for (const auto& [c, m] : p.train) AddDistinct(c.model, out);
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return ModelBefore(a, b); });
  return out;
}

std::vector<std::string> MeasuredDataKinds(const PlatformResults& p) {
  std::vector<std::string> out;
  for (const char* data : kTrainDataKinds) {
    for (const auto& [c, m] : p.train) {
      if (c.data == data) {
        out.push_back(data);
        break;
      }
    }
  }
  return out;
}

const Measurement* FindTrain(const PlatformResults& p, const CaseName& c) {
  auto it = p.train.find(c);
  return it == p.train.end() ? nullptr : &it->second;
}

std::optional<double> TrainThroughput(const PlatformResults& p, const CaseName& c) {
  const Measurement* m = FindTrain(p, c);
  if (m == nullptr || !m->ok()) return std::nullopt;
  return m->Mean("images_per_second");
}

std::map<std::pair<std::string, std::string>, int> PrimaryBatches(const PlatformResults& p) {
  std::map<std::pair<std::string, std::string>, int> primary;
  for (const auto& [c, m] : p.train) {
    int& b = primary[{c.model, c.precision}];
    b = std::max(b, static_cast<int>(c.batch));
  }
  return primary;
}

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

std::string GpuLabel(int gpus) { return gpus == 0 ? "CPU" : absl::StrCat(gpus); }

std::string CellPlace(const std::string& model, int gpus) {
  std::string where = ModelDisplayName(model);
  if (gpus == 0) return absl::StrCat(where, ", CPU");
  return absl::StrCat(where, ", ", gpus, gpus == 1 ? " GPU" : " GPUs");
}

}  // namespace cnnbench::report
