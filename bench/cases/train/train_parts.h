// What the training cases' workloads share (bench/cases/train/train_cases.cc): the
// case, its synthetic batch and real-data pipeline, the step's arithmetic,
// feeding a batch, and the accuracy and input counters.
#ifndef CNNBENCH_BENCH_TRAIN_PARTS_H_
#define CNNBENCH_BENCH_TRAIN_PARTS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/suite/suite.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/dtype.h"
#include "input/pipeline/pipeline.h"
#include "models/graph.h"
#include "bench/harness/iteration_stats.h"
#include "train/trace.h"
#include "train/trainer.h"

namespace cnnbench::bench::train_parts {

struct TrainCase {
  std::string model;
  Precision precision = Precision::kFp32;
  std::string data;
  int64_t batch = 0;  // per replica
  int gpus = 0;
  int replicas = 1;  // CPU replicas (gpus == 0)

  // Replicas in all: the GPUs, or the CPU replicas.
  int ranks() const { return gpus > 0 ? gpus : replicas; }
};

// One synthetic batch made once (random labels, as tf_cnn_benchmarks).
struct SyntheticBatch {
  Buffer images, labels;
};
absl::StatusOr<SyntheticBatch> MakeSyntheticBatch(const Graph& graph, int64_t batch, uint64_t seed);

// data:real: a training pipeline over --data_dir (its format detected), or
// over the data set the suite generates when none is given. Each rank reads
// the whole set in its own order (seed + rank), as tf_cnn_benchmarks' workers do.
absl::StatusOr<std::unique_ptr<input::InputPipeline>> MakeTrainPipeline(const Graph& graph,
                                                                        const SuiteOptions& options,
                                                                        int rank, int local_ranks);

// A step's arithmetic per image: forward, backward-data and backward-weights
// each count the model's forward FLOPs (models/summary.h: conv and fc).
double StepFlopsPerImage(const Graph& graph);

// Hands the pipeline's next batch to the trainer; its labels into `labels`
// when given. (In a traced step, the wait for the batch and its copy into
// the device's input slot are slices on the "upload" lane.)
absl::Status FeedNextBatch(input::InputPipeline& pipeline, Trainer& trainer,
                           std::vector<int32_t>* labels = nullptr);

// The last step's batch accuracy (tf_cnn_benchmarks' --print_training_accuracy):
// top-1 and top-5 of its logits against `labels`, read after the timed steps.
absl::Status ReportTrainingAccuracy(benchmark::State& state, Trainer& trainer,
                                    const std::vector<int32_t>& labels);

// The counters of a real-data case from its pipelines' stats since `last`.
void ReportInput(benchmark::State& state, const input::PipelineStats& now,
                 input::PipelineStats& last, int64_t steps);

// The case's name (bench/suite/names.h).
std::string CaseNameOf(const TrainCase& c);

// One more step of case `c`, traced after its timed steps (never part of
// the figures), written to --trace_file's path for it: one process row per
// replica. Says where on stderr.
absl::Status WriteCaseTrace(const SuiteOptions& options, const TrainCase& c,
                            const std::vector<TraceProcess>& processes);

// What one and many replicas report alike: images/s of the whole case (and
// the step statistics when there are step times), the step's FLOP/s, peak
// memory, ranks, and the loss when it is finite (Google Benchmark writes a
// NaN counter as a bare NaN, which is not JSON).
struct TrainFigures {
  const StepSummary* steps = nullptr;  // null: the span only
  double flops_per_image = 0;
  size_t peak_memory_bytes = 0;
  int ranks = 1;
  float loss = 0;
};
void AddTrainCounters(benchmark::State& state, const TrainCase& c, const TrainFigures& figures,
                      double drift_threshold);

// The trainer's options for case `c`: its precision, the learning rate
// scaled linearly with the global batch, and the suite's step settings.
TrainOptions StepOptions(const TrainCase& c, const SuiteOptions& options);

}  // namespace cnnbench::bench::train_parts

#endif  // CNNBENCH_BENCH_TRAIN_PARTS_H_
