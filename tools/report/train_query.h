// Lookups over one platform's train cases that several tables and charts
// share: which precisions and models, each model's main batch size, a case's
// throughput, and how rows and cells are labelled.
#ifndef CNNBENCH_TOOLS_REPORT_TRAIN_QUERY_H_
#define CNNBENCH_TOOLS_REPORT_TRAIN_QUERY_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tools/report/results.h"

namespace cnnbench::report {

// Data kinds in table order.
inline constexpr const char* kTrainDataKinds[] = {"synthetic", "real"};

// Distinct precisions in table order (fp32, tf32, fp16, bf16, others).
std::vector<std::string> TrainPrecisions(const PlatformResults& p);

// Distinct models in column order (ModelBefore).
std::vector<std::string> TrainModels(const PlatformResults& p);

// Data kinds with any case, in table order.
std::vector<std::string> MeasuredDataKinds(const PlatformResults& p);

// The case's measurement, or null when it was not run.
const Measurement* FindTrain(const PlatformResults& p, const CaseName& c);

// images/sec of a case that ran; empty when it failed or was not run.
std::optional<double> TrainThroughput(const PlatformResults& p, const CaseName& c);

// Each (model, precision)'s largest batch size: the options table's "batch
// size per GPU" and the main results table's column.
std::map<std::pair<std::string, std::string>, int> PrimaryBatches(const PlatformResults& p);

// The GPU counts measured for one model, precision, data kind and batch size.
std::set<int> GpuCounts(const PlatformResults& p, const std::string& precision,
                        const std::string& data, const std::string& model, int batch);

// A row label: "1", "8", or "CPU" for gpus:0.
std::string GpuLabel(int gpus);

// Where a cell is, for footnotes: "ResNet-50, 8 GPUs", "AlexNet, CPU".
std::string CellPlace(const std::string& model, int gpus);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_TRAIN_QUERY_H_
