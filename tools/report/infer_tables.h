// The inference results of one platform, as DeepLearningExamples publish
// them: per model, precision, data kind and device, rows = batch sizes,
// columns = images/sec and the latency mean, p90, p95, p99 (ms), with the
// training throughput at the same batch beside them where the run has it;
// charts of throughput and p99 latency against batch. And the training
// cases' batch accuracy where they carried it.
#ifndef CNNBENCH_TOOLS_REPORT_INFER_TABLES_H_
#define CNNBENCH_TOOLS_REPORT_INFER_TABLES_H_

#include <optional>
#include <string>
#include <vector>

#include "tools/report/results.h"
#include "tools/report/table.h"

namespace cnnbench::report {

// Where an infer case ran: "CPU" (gpus 0) or "1 GPU".
std::string InferDeviceName(int gpus);

// The "Inference" section; none when the platform has no infer cases.
std::optional<Section> InferSection(const PlatformResults& platform, double max_cv);

// "Training batch accuracy (last timed step)": one row per train case that
// carried top1_accuracy; none without.
std::optional<Table> TrainAccuracyTable(const PlatformResults& platform);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_INFER_TABLES_H_
