// infer/<model>/<precision>/<data>/batch:<B>/gpus:<G>: a zoo model's
// forward pass for inference (train/inference.h), one batch per timed
// iteration, each timed on its own (device events on a GPU), summarised as
// DeepLearningExamples publish inference: images per second and the latency
// mean, p50, p90, p95, p99 and max (bench/harness/iteration_stats.h). gpus:0 is the
// CPU (--backend), gpus:1 one GPU (a CUDA graph replayed, --cuda_graph).
// data:real reads the validation subset with evaluation preprocessing and
// adds top-1 and top-5 accuracy (of the suite's random weights: chance).
#ifndef CNNBENCH_BENCH_INFER_CASES_H_
#define CNNBENCH_BENCH_INFER_CASES_H_

#include <functional>
#include <memory>

#include "absl/flags/commandlineflag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/harness/harness.h"
#include "bench/suite/suite.h"

namespace cnnbench::bench {

// The fewest timed iterations whose p99 is not simply the maximum: a label
// says so below it.
inline constexpr int kMeaningfulIterations = 100;

// --infer_models, --infer_batch_sizes, --infer_warmup, --infer_iterations,
// --infer_include_copy, --fold_batch_norm, --conv_relu, --conv_add and --concat_in_place into
// options.infer (--conv_relu also into options.train), each when given
// (bench/cli/flag_read.h). Errors name the flag.
absl::Status ApplyInferFlags(SuiteOptions& options);

// The context keys of the inference settings (the report keeps runs that
// differ in them apart).
void AddInferContext(const SuiteOptions& options);

// The batch sizes of `model`'s inference cases.
std::vector<int64_t> InferBatchSizes(const SuiteOptions& options, const std::string& model);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_INFER_CASES_H_
