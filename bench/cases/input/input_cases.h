// input/<tfrecord|folder>/<train|eval>/threads:<T>: the real-data input
// pipeline alone (reading, decoding, preprocessing, batching), in images per
// second, with per-stage counters that show which stage limits.
#ifndef CNNBENCH_BENCH_INPUT_CASES_H_
#define CNNBENCH_BENCH_INPUT_CASES_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/harness/harness.h"
#include "bench/suite/suite.h"
#include "input/pipeline/pipeline.h"
#include "models/graph.h"

namespace cnnbench::bench {

// A case's workload: creates the pipeline, takes `warmup` batches, then
// each iteration takes one batch.
absl::StatusOr<std::unique_ptr<Workload>> PrepareInputWorkload(
    const input::PipelineOptions& options, int warmup);

// The pipeline a model case reads `subset` ("train": training
// preprocessing; "validation": evaluation's) through: --data_dir (its
// format detected) or the data set the suite generates, --on_bad_record,
// batches of the graph's images (NCHW) and classes. Threads, seed and colour
// distortion are the caller's.
// "skipped 3 bad records (decode 2, read 1)": what --on_bad_record=skip
// passed over, for a case's label.
std::string SkippedNote(const input::PipelineStats& stats);

absl::StatusOr<input::PipelineOptions> ModelPipelineOptions(const Graph& graph,
                                                            const SuiteOptions& options,
                                                            const std::string& subset);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_INPUT_CASES_H_
