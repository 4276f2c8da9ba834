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
    for (const std::map<CaseName, Measurement>* cases : {&p.train, &p.infer}) {
      if (std::any_of(cases->begin(), cases->end(),
                      [data](const auto& entry) { return entry.first.data == data; })) {
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

CaseName TrainCase(const std::string& model, const std::string& precision, const std::string& data,
                   int64_t batch, const Placement& at) {
  return CaseName::Train(model, precision, data, batch, at.gpus, at.replicas);
}

std::set<Placement> TrainPlacements(const PlatformResults& p, const std::string& precision,
                                    const std::string& data, const std::string& model, int batch) {
  std::set<Placement> rows;
  for (const auto& [c, m] : p.train) {
    if (c.precision == precision && c.data == data && c.model == model && c.batch == batch) {
      rows.insert(Placement::Of(c));
    }
  }
  return rows;
}

std::string GpuLabel(const Placement& at) {
  if (!at.cpu()) return absl::StrCat(at.gpus);
  return at.replicas > 1 ? absl::StrCat("CPU, ", at.replicas, " replicas") : "CPU";
}

std::string CellPlace(const std::string& model, const Placement& at) {
  const std::string where = ModelDisplayName(model);
  if (at.cpu()) return absl::StrCat(where, ", ", GpuLabel(at));
  return absl::StrCat(where, ", ", at.gpus, at.gpus == 1 ? " GPU" : " GPUs");
}

}  // namespace cnnbench::report
