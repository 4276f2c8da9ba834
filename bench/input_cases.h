// input/<tfrecord|folder>/<train|eval>/threads:<T>: the real-data input
// pipeline alone (reading, decoding, preprocessing, batching), in images per
// second, with per-stage counters that show which stage limits.
#ifndef CNNBENCH_BENCH_INPUT_CASES_H_
#define CNNBENCH_BENCH_INPUT_CASES_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/harness.h"
#include "bench/suite.h"
#include "input/pipeline/pipeline.h"

namespace cnnbench::bench {

// Registers one case per data format, preprocessing (train: the training
// crop and flip over the train subset; eval: the central crop over
// validation) and decode thread count (--input_threads). With --data_dir
// the folder is checked here, before any case runs: missing, empty or
// holding neither format is an error; without it the cases read a data set
// generated once per process (input::GeneratedDataDir).
absl::Status RegisterInputCases(const SuiteOptions& options, Harness& harness);

// A case's workload: creates the pipeline, takes `warmup` batches, then
// each iteration takes one batch.
absl::StatusOr<std::unique_ptr<Workload>> PrepareInputWorkload(
    const input::PipelineOptions& options, int warmup);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_INPUT_CASES_H_
