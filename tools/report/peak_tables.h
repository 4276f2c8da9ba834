// The CPU's measured peak (the peak/ family: a loop of fused multiply-adds
// on every thread) and what the training steps make of it: the peak table of
// the Kernels section, and each CPU training step's FLOP/s as a fraction of
// the peak of its precision.
#ifndef CNNBENCH_TOOLS_REPORT_PEAK_TABLES_H_
#define CNNBENCH_TOOLS_REPORT_PEAK_TABLES_H_

#include <optional>
#include <string>
#include <utility>

#include "tools/report/results.h"
#include "tools/report/table.h"

namespace cnnbench::report {

// The peak case a CPU step of `precision` is read against: the platform's
// peak/<precision>/cpu case with a value and the most threads (else the one
// with the most threads, which failed); null when the platform has none.
const std::pair<const CaseName, Measurement>* ReferencePeak(const PlatformResults& platform,
                                                            const std::string& precision);

// "peak on cpu": rows = thread counts, columns = precisions, in GFLOP/s
// (TFLOP/s where a value reaches one); empty without peak cases.
std::optional<Table> PeakTable(const PlatformResults& platform, double max_cv);
// Its spread over repetitions, same rows and columns.
std::optional<Table> PeakSpreadTable(const PlatformResults& platform);

// "Training step vs the CPU's peak (peak/fp32/cpu/threads:T, same run)":
// one row per CPU train case (gpus:0, replicas included) with its images/sec,
// its step GFLOP/s (the case's flops counter: 3 x forward FLOPs per image x
// images/sec), the peak of its precision and the fraction of it. Empty unless
// the platform has both a peak/fp32/cpu case and CPU train cases.
std::optional<Table> TrainVsPeakTable(const PlatformResults& platform, double max_cv);

// The GPU's: peak/<precision>/cuda/<fma|gemm:...> cases, the one a GPU step
// of `precision` is read against (null: none).
const std::pair<const CaseName, Measurement>* GpuReferencePeak(const PlatformResults& platform,
                                                               const std::string& precision);
// "peak on the GPU": one row per GPU peak case, TFLOP/s; empty without.
std::optional<Table> GpuPeakTable(const PlatformResults& platform, double max_cv);
// Each GPU training step's FLOP/s over its GPUs' peak of its precision
// (model FLOP utilisation); empty without GPU steps and a GPU peak.
std::optional<Table> GpuTrainVsPeakTable(const PlatformResults& platform, double max_cv);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_PEAK_TABLES_H_
