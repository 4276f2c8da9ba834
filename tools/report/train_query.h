// Lookups over one platform's train cases that several tables and charts
// share: which precisions and models, each model's main batch size, a case's
// throughput, and how rows and cells are labelled.
#ifndef CNNBENCH_TOOLS_REPORT_TRAIN_QUERY_H_
#define CNNBENCH_TOOLS_REPORT_TRAIN_QUERY_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tools/report/results.h"

namespace cnnbench::report {

// Where a training case ran, a results table's row: GPU replicas, or the
// CPU (gpus 0) with one or more data-parallel replicas. Rows sort CPU first
// (1 replica, then more), then by GPU count.
struct Placement {
  int gpus = 0;
  int replicas = 1;  // CPU replicas; 1 on GPUs (there the replicas are the GPUs)

  static Placement Of(const CaseName& c) { return {c.gpus, c.gpus == 0 ? c.replicas : 1}; }
  static Placement Cpu(int replicas = 1) { return {0, replicas}; }
  bool cpu() const { return gpus == 0; }
  // Data-parallel ranks: the GPUs, or the CPU replicas.
  int ranks() const { return cpu() ? replicas : gpus; }
  // The single-rank placement of the same kind: 1 GPU, or 1 CPU replica.
  Placement Single() const { return cpu() ? Cpu() : Placement{1, 1}; }
  bool operator<(const Placement& o) const {
    return std::tie(gpus, replicas) < std::tie(o.gpus, o.replicas);
  }
  bool operator==(const Placement& o) const { return gpus == o.gpus && replicas == o.replicas; }
};

// The train case of a model, precision, data kind and batch size at a placement.
CaseName TrainCase(const std::string& model, const std::string& precision, const std::string& data,
                   int64_t batch, const Placement& at);

// Data kinds in table order.
inline constexpr const char* kTrainDataKinds[] = {"synthetic", "real"};

// Distinct precisions in table order (fp32, tf32, fp16, bf16, others).
std::vector<std::string> TrainPrecisions(const PlatformResults& p);

// Distinct models in column order (ModelBefore).
std::vector<std::string> TrainModels(const PlatformResults& p);

// Data kinds with any train or infer case, in table order (an
// inference-only run has its data kind too).
std::vector<std::string> MeasuredDataKinds(const PlatformResults& p);

// The case's measurement, or null when it was not run.
const Measurement* FindTrain(const PlatformResults& p, const CaseName& c);

// images/sec of a case that ran; empty when it failed or was not run.
std::optional<double> TrainThroughput(const PlatformResults& p, const CaseName& c);

// Each (model, precision)'s largest batch size: the options table's "batch
// size per GPU" and the main results table's column.
std::map<std::pair<std::string, std::string>, int> PrimaryBatches(const PlatformResults& p);

// The placements measured for one model, precision, data kind and batch size.
std::set<Placement> TrainPlacements(const PlatformResults& p, const std::string& precision,
                                    const std::string& data, const std::string& model, int batch);

// A row label: "1", "8" (GPUs), "CPU" for gpus:0, "CPU, 2 replicas" for
// gpus:0/replicas:2.
std::string GpuLabel(const Placement& at);

// Where a cell is, for footnotes: "ResNet-50, 8 GPUs", "AlexNet, CPU",
// "AlexNet, CPU, 2 replicas".
std::string CellPlace(const std::string& model, const Placement& at);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_TRAIN_QUERY_H_
