#include "tools/report/records.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/report/model_names.h"

namespace cnnbench::report {
namespace {

// Fills status/error and the shared trailing fields.
void Finish(const Measurement& m, const char* value_field, std::optional<double> value, Record& r) {
  r.value = m.ok() ? value : std::nullopt;
  r.status = m.ok() ? "ok" : (m.oom() ? "oom" : "failed");
  if (!m.ok() && !m.errors.empty()) r.error = m.errors.front();
  r.json[value_field] = r.value ? nlohmann::ordered_json(*r.value) : nlohmann::ordered_json();
  r.json["commit"] = absl::StrJoin(m.commits, ",");
  r.json["date"] = absl::StrJoin(m.dates, ",");
  r.json["status"] = r.status;
  if (!r.error.empty()) r.json["error"] = r.error;
}

Record Start(const PlatformResults& p, const CaseName& name, const std::string& kind) {
  Record r;
  r.platform = p.name;
  r.key = name.ToString();
  r.kind = kind;
  r.json["kind"] = kind;
  r.json["platform"] = p.name;
  return r;
}

}  // namespace

std::vector<Record> MakeRecords(const Results& results) {
  std::vector<Record> records;
  for (const PlatformResults& p : results.platforms) {
    std::vector<const std::pair<const CaseName, Measurement>*> train;
    for (const auto& entry : p.train) train.push_back(&entry);
    std::stable_sort(train.begin(), train.end(), [](const auto* a, const auto* b) {
      if (a->first.model != b->first.model) return ModelBefore(a->first.model, b->first.model);
      return std::make_tuple(PrecisionRank(a->first.precision), a->first.precision,
                             a->first.data != "synthetic", a->first.batch, a->first.gpus) <
             std::make_tuple(PrecisionRank(b->first.precision), b->first.precision,
                             b->first.data != "synthetic", b->first.batch, b->first.gpus);
    });
    for (const auto* entry : train) {
      const auto& [c, m] = *entry;
      Record r = Start(p, c, "train");
      r.unit = "images/sec";
      r.json["model"] = c.model;
      r.json["precision"] = c.precision;
      r.json["data"] = c.data;
      r.json["batch"] = c.batch;
      r.json["gpus"] = c.gpus;
      Finish(m, "images_per_second", m.Mean("images_per_second"), r);
      records.push_back(std::move(r));
    }
    for (const CaseName& c : p.kernel_order) {
      const Measurement& m = p.kernels.at(c);
      Record r = Start(p, c, c.family);
      r.json["variant"] = KernelVariant(c);
      r.json["precision"] = c.precision;
      r.json["device"] = c.device;
      r.json["shape"] = c.shape;
      if (auto flops = m.Mean("flops")) {
        r.unit = "TFLOP/s";
        Finish(m, "tflops", *flops / 1e12, r);
      } else {
        auto bytes = m.Mean("bytes_per_second");
        r.unit = "GB/s";
        Finish(m, "gb_per_second", bytes ? std::optional<double>(*bytes / 1e9) : std::nullopt, r);
      }
      records.push_back(std::move(r));
    }
    for (const auto& [c, m] : p.allreduce) {
      Record r = Start(p, c, "allreduce");
      r.unit = "busbw GB/s";
      r.json["impl"] = c.impl;
      r.json["dtype"] = c.dtype;
      r.json["bytes"] = c.bytes;
      r.json["ranks"] = c.ranks;
      auto algbw = m.Mean("algbw");
      r.json["algbw_gb_per_second"] =
          algbw && m.ok() ? nlohmann::ordered_json(*algbw / 1e9) : nlohmann::ordered_json();
      auto busbw = m.Mean("busbw");
      Finish(m, "busbw_gb_per_second", busbw ? std::optional<double>(*busbw / 1e9) : std::nullopt,
             r);
      records.push_back(std::move(r));
    }
    for (const auto& [c, m] : p.input) {
      Record r = Start(p, c, "input");
      r.unit = "images/sec";
      r.json["source"] = c.source;
      r.json["preprocess"] = c.preprocess;
      r.json["threads"] = c.threads;
      Finish(m, "images_per_second", m.Mean("images_per_second"), r);
      records.push_back(std::move(r));
    }
  }
  return records;
}

std::string RenderJsonl(const std::vector<Record>& records) {
  std::string out;
  for (const Record& r : records) absl::StrAppend(&out, r.json.dump(), "\n");
  return out;
}

}  // namespace cnnbench::report
