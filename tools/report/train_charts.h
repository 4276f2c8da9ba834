// The charts of the training results: per model, throughput against GPU
// count or CPU replica count (with linear scaling from one GPU or one
// replica) and synthetic vs real bars.
#ifndef CNNBENCH_TOOLS_REPORT_TRAIN_CHARTS_H_
#define CNNBENCH_TOOLS_REPORT_TRAIN_CHARTS_H_

#include <optional>
#include <string>

#include "tools/report/results.h"
#include "tools/report/table.h"

namespace cnnbench::report {

// Throughput against GPU count (`cpu` false) or against the number of
// data-parallel replicas on the CPU (`cpu` true); empty when the model ran
// at fewer than two of them.
std::optional<Chart> ScalingChart(const PlatformResults& p, const std::string& model,
                                  const std::string& precision, int batch, bool cpu = false);

// Empty unless the model ran with both synthetic and real data.
std::optional<Chart> SyntheticVsRealChart(const PlatformResults& p, const std::string& model,
                                          const std::string& precision, int batch);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_TRAIN_CHARTS_H_
