#include "tools/report/records.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/report/model_names.h"
#include "tools/report/train_query.h"

namespace cnnbench::report {
namespace {

nlohmann::ordered_json OrNull(std::optional<double> value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
}

// Fills status/error and the shared trailing fields. `counter` is the one
// the value comes from; `spread_counter` the one its cv is of.
void Finish(const Measurement& m, const char* counter, const char* spread_counter,
            const char* value_field, std::optional<double> value, Record& r) {
  const std::string not_finite = m.ok() ? m.NotFiniteText(counter) : "";
  r.value = m.ok() && not_finite.empty() ? value : std::nullopt;
  if (auto samples = m.values.find(counter); r.value && samples != m.values.end())
    r.samples = samples->second;
  r.status = m.ok() ? (not_finite.empty() ? "ok" : "not_finite") : (m.oom() ? "oom" : "failed");
  std::string full_error;
  if (!not_finite.empty()) {
    r.error = not_finite;
  } else if (!m.ok() && !m.errors.empty()) {
    r.error = m.Error();
    full_error = m.errors.front();
  }
  r.json[value_field] = OrNull(r.value);
  r.json["repetitions"] = m.samples;
  r.json["cv"] = OrNull(r.value ? m.Cv(spread_counter) : std::nullopt);
  r.json["commit"] = absl::StrJoin(m.commits, ",");
  r.json["date"] = absl::StrJoin(m.dates, ",");
  r.json["status"] = r.status;
  if (!r.error.empty()) r.json["error"] = r.error;
  // The message as the case wrote it (with its source locations), for debugging.
  if (!full_error.empty() && full_error != r.error) r.json["error_full"] = full_error;
}

// The value of a collective's or a gradient all-reduce's record: its busbw,
// or its algbw where busbw is 0 by definition (one rank of an all-reduce,
// all-gather, reduce-scatter or all-to-all), so that --compare still flags
// a slower copy. `spread_counter` is the one its cv is of.
void FinishBusOrAlgBw(const Measurement& m, const char* spread_counter, Record& r) {
  const std::optional<double> algbw = m.Mean("algbw"), busbw = m.Mean("busbw");
  if (busbw && *busbw == 0 && algbw && *algbw > 0) {
    r.unit = "algbw GB/s";
    Finish(m, "algbw", spread_counter, "algbw_gb_per_second", *algbw / 1e9, r);
    r.json["busbw_gb_per_second"] = 0.0;
  } else {
    r.unit = "busbw GB/s";
    Finish(m, "busbw", spread_counter, "busbw_gb_per_second",
           busbw ? std::optional<double>(*busbw / 1e9) : std::nullopt, r);
  }
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

// Training steps, in the tables' order (model, precision, data, batch, placement).
void AddTrainRecords(const PlatformResults& p, std::vector<Record>& records) {
  std::vector<const std::pair<const CaseName, Measurement>*> train;
  for (const auto& entry : p.train) train.push_back(&entry);
  std::stable_sort(train.begin(), train.end(), [](const auto* a, const auto* b) {
    if (a->first.model != b->first.model) return ModelBefore(a->first.model, b->first.model);
    return std::make_tuple(PrecisionRank(a->first.precision), a->first.precision,
                           a->first.data != "synthetic", a->first.batch, Placement::Of(a->first)) <
           std::make_tuple(PrecisionRank(b->first.precision), b->first.precision,
                           b->first.data != "synthetic", b->first.batch, Placement::Of(b->first));
  });
  for (const auto* entry : train) {
    const auto& [c, m] = *entry;
    Record r = Start(p, c, bench::FamilyName(bench::Family::kTrain));
    r.unit = "images/sec";
    r.json["framework"] = p.framework;
    r.json["model"] = c.model;
    r.json["precision"] = c.precision;
    r.json["data"] = c.data;
    r.json["batch"] = c.batch;
    r.json["gpus"] = c.gpus;
    r.json["replicas"] = Placement::Of(c).replicas;
    // Data-parallel ranks: the GPUs, or the CPU replicas. The name says so;
    // the `ranks` counter, where a file has it, is checked against it on reading.
    r.json["ranks"] = Placement::Of(c).ranks();
    Finish(m, "images_per_second", "images_per_second", "images_per_second",
           m.Mean("images_per_second"), r);
    // The step's arithmetic rate, where the run counted it (flops counter).
    if (auto flops = m.Mean("flops"); flops && r.value) r.json["step_tflops"] = *flops / 1e12;
    records.push_back(std::move(r));
  }
}

// The ceilings: TFLOP/s.
void AddPeakRecords(const PlatformResults& p, std::vector<Record>& records) {
  for (const auto& [c, m] : p.peak) {
    Record r = Start(p, c, bench::FamilyName(bench::Family::kPeak));
    r.unit = "TFLOP/s";
    r.json["precision"] = c.precision;
    r.json["device"] = c.device;
    if (c.device == "cpu") {
      r.json["threads"] = c.threads;
    } else {
      r.json["shape"] = c.shape;  // fma, or the tensor-core GEMM
    }
    auto flops = m.Mean("flops");
    Finish(m, "flops", "flops", "tflops",
           flops ? std::optional<double>(*flops / 1e12) : std::nullopt, r);
    records.push_back(std::move(r));
  }
}

// The memory's rates: GB/s.
void AddBandwidthRecords(const PlatformResults& p, std::vector<Record>& records) {
  for (const auto& [c, m] : p.bandwidth) {
    Record r = Start(p, c, bench::FamilyName(bench::Family::kBandwidth));
    r.unit = "GB/s";
    r.json["variant"] = c.algorithm;
    r.json["device"] = c.device;
    r.json["bytes"] = c.bytes;
    r.json["threads"] = c.threads;
    auto bytes = m.Mean("bytes_per_second");
    Finish(m, "bytes_per_second", "bytes_per_second", "gb_per_second",
           bytes ? std::optional<double>(*bytes / 1e9) : std::nullopt, r);
    records.push_back(std::move(r));
  }
}

// Layer kernels and GEMMs, in registration order: TFLOP/s or GB/s by the family's counter.
void AddKernelRecords(const PlatformResults& p, std::vector<Record>& records) {
  for (const CaseName& c : p.kernel_order) {
    const Measurement& m = p.kernels.at(c);
    Record r = Start(p, c, c.family);
    r.json["variant"] = KernelVariant(c);
    r.json["precision"] = c.precision;
    r.json["device"] = c.device;
    r.json["shape"] = c.shape;
    if (bench::FindCaseFamily(c.family)->counter == "flops") {
      auto flops = m.Mean("flops");
      r.unit = "TFLOP/s";
      Finish(m, "flops", "flops", "tflops",
             flops ? std::optional<double>(*flops / 1e12) : std::nullopt, r);
    } else {
      auto bytes = m.Mean("bytes_per_second");
      r.unit = "GB/s";
      Finish(m, "bytes_per_second", "bytes_per_second", "gb_per_second",
             bytes ? std::optional<double>(*bytes / 1e9) : std::nullopt, r);
    }
    records.push_back(std::move(r));
  }
}

// Collectives: busbw, or algbw where busbw is 0 by definition (one rank).
void AddCollectiveRecords(const PlatformResults& p, std::vector<Record>& records) {
  for (const auto& [c, m] : p.collectives) {
    Record r = Start(p, c, c.family);
    r.json["impl"] = c.impl;
    r.json["dtype"] = c.dtype;
    r.json["op"] = c.op;
    r.json["bytes"] = c.bytes;
    r.json["ranks"] = c.ranks;
    const std::optional<double> algbw = m.Mean("algbw");
    r.json["algbw_gb_per_second"] =
        algbw && m.ok() ? nlohmann::ordered_json(*algbw / 1e9) : nlohmann::ordered_json();
    FinishBusOrAlgBw(m, "seconds", r);
    records.push_back(std::move(r));
  }
}

// Inference: images/sec, with its latencies.
void AddInferRecords(const PlatformResults& p, std::vector<Record>& records) {
  for (const auto& [c, m] : p.infer) {
    Record r = Start(p, c, bench::FamilyName(bench::Family::kInfer));
    r.unit = "images/sec";
    r.json["framework"] = p.framework;
    r.json["model"] = c.model;
    r.json["precision"] = c.precision;
    r.json["data"] = c.data;
    r.json["batch"] = c.batch;
    r.json["gpus"] = c.gpus;
    for (const char* counter : {"latency_ms", "latency_ms_p99"}) {
      const std::optional<double> latency = m.ok() ? m.Mean(counter) : std::nullopt;
      r.json[counter] = OrNull(latency);
    }
    Finish(m, "images_per_second", "images_per_second", "images_per_second",
           m.Mean("images_per_second"), r);
    records.push_back(std::move(r));
  }
}

// One step's gradient all-reduce: busbw, or at one rank (busbw 0 by
// definition) algbw, so a slower step is flagged either way.
void AddGradsRecords(const PlatformResults& p, std::vector<Record>& records) {
  for (const auto& [c, m] : p.grads) {
    Record r = Start(p, c, bench::FamilyName(bench::Family::kGrads));
    r.json["model"] = c.model;
    r.json["impl"] = c.impl;
    r.json["bucket_mb"] = c.bytes >> 20;
    r.json["ranks"] = c.ranks;
    const std::optional<double> seconds = m.ok() ? m.Mean("seconds") : std::nullopt;
    r.json["milliseconds"] =
        seconds ? nlohmann::ordered_json(*seconds * 1e3) : nlohmann::ordered_json();
    FinishBusOrAlgBw(m, "seconds", r);
    records.push_back(std::move(r));
  }
}

// The input pipeline: images/sec.
void AddInputRecords(const PlatformResults& p, std::vector<Record>& records) {
  for (const auto& [c, m] : p.input) {
    Record r = Start(p, c, bench::FamilyName(bench::Family::kInput));
    r.unit = "images/sec";
    r.json["source"] = c.source;
    r.json["preprocess"] = c.preprocess;
    r.json["threads"] = c.threads;
    Finish(m, "images_per_second", "images_per_second", "images_per_second",
           m.Mean("images_per_second"), r);
    records.push_back(std::move(r));
  }
}

}  // namespace

std::vector<Record> MakeRecords(const Results& results) {
  std::vector<Record> records;
  for (const PlatformResults& p : results.platforms) {
    AddTrainRecords(p, records);
    AddPeakRecords(p, records);
    AddBandwidthRecords(p, records);
    AddKernelRecords(p, records);
    AddCollectiveRecords(p, records);
    AddInferRecords(p, records);
    AddGradsRecords(p, records);
    AddInputRecords(p, records);
  }
  return records;
}

std::string RenderJsonl(const std::vector<Record>& records) {
  std::string out;
  for (const Record& r : records) absl::StrAppend(&out, r.json.dump(), "\n");
  return out;
}

}  // namespace cnnbench::report
