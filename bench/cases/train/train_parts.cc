#include "bench/cases/train/train_parts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "bench/cases/input/input_cases.h"
#include "bench/harness/harness.h"
#include "bench/suite/names.h"
#include "core/random.h"
#include "core/status.h"
#include "models/summary.h"
#include "train/inference.h"

namespace cnnbench::bench::train_parts {

absl::StatusOr<SyntheticBatch> MakeSyntheticBatch(const Graph& graph, int64_t batch,
                                                  uint64_t seed) {
  SyntheticBatch b;
  const Shape& image_shape = graph.nodes[graph.images].output;
  ASSIGN_OR_RETURN(b.images,
                   Buffer::Allocate(Device::Cpu(), image_shape.num_elements() * sizeof(float)));
  ASSIGN_OR_RETURN(b.labels, Buffer::Allocate(Device::Cpu(), batch * sizeof(int32_t)));
  Rng rng(seed);
  float* pixels = static_cast<float*>(b.images.data());
  for (int64_t i = 0; i < image_shape.num_elements(); ++i)
    pixels[i] = static_cast<float>(rng.Normal());
  int32_t* label = static_cast<int32_t*>(b.labels.data());
  for (int64_t i = 0; i < batch; ++i) label[i] = static_cast<int32_t>(rng.Next() % graph.classes);
  return b;
}

// data:real: a training pipeline over --data_dir (its format detected), or
// over the data set the suite generates when none is given. Each rank reads
// the whole set in its own order (seed + rank), as tf_cnn_benchmarks' workers do.
absl::StatusOr<std::unique_ptr<input::InputPipeline>> MakeTrainPipeline(const Graph& graph,
                                                                        const SuiteOptions& options,
                                                                        int rank, int local_ranks) {
  ASSIGN_OR_RETURN(input::PipelineOptions p, ModelPipelineOptions(graph, options, "train"));
  p.decode_threads = std::max(1, options.train.input_cores / std::max(1, local_ranks));
  p.reader_threads = 1;
  p.seed = 1 + static_cast<uint64_t>(rank);
  p.color = options.distortions;
  return input::InputPipeline::Create(p);
}

// A step's arithmetic per image: forward, backward-data and backward-weights
// each count the model's forward FLOPs (models/summary.h: conv and fc).
double StepFlopsPerImage(const Graph& graph) { return 3 * Summarize(graph).forward_flops; }

// Hands the pipeline's next batch to the trainer; its labels into `labels`
// when given.
// (In a traced step, the wait for the batch and its copy into the device's
// input slot are slices on the "upload" lane.)
absl::Status FeedNextBatch(input::InputPipeline& pipeline, Trainer& trainer,
                           std::vector<int32_t>* labels) {
  StepTimer& timer = trainer.step_timer();
  const input::Batch* batch = nullptr;
  RETURN_IF_ERROR(timer.HostSpan("(next batch)", "input", "upload", [&]() -> absl::Status {
    ASSIGN_OR_RETURN(batch, pipeline.Next());
    return absl::OkStatus();
  }));
  if (labels != nullptr) labels->assign(batch->labels, batch->labels + batch->capacity);
  return timer.HostSpan("(upload)", "input", "upload",
                        [&] { return trainer.SetBatch(batch->images, batch->labels); });
}

// The last step's batch accuracy (tf_cnn_benchmarks' --print_training_accuracy):
// top-1 and top-5 of its logits against `labels`, read after the timed steps.
absl::Status ReportTrainingAccuracy(benchmark::State& state, Trainer& trainer,
                                    const std::vector<int32_t>& labels) {
  if (labels.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(const std::vector<float> logits, trainer.LastLogits());
  const int64_t classes = trainer.step_plan().graph.classes;
  ASSIGN_OR_RETURN(const int64_t top1, CountInTopK(logits, labels, classes, 1));
  ASSIGN_OR_RETURN(
      const int64_t top5,
      CountInTopK(logits, labels, classes, static_cast<int>(std::min<int64_t>(5, classes))));
  const double n = static_cast<double>(labels.size());
  state.counters["top1_accuracy"] = benchmark::Counter(top1 / n);
  state.counters["top5_accuracy"] = benchmark::Counter(top5 / n);
  return absl::OkStatus();
}

// The counters of a real-data case from its pipelines' stats since `last`.
void ReportInput(benchmark::State& state, const input::PipelineStats& now,
                 input::PipelineStats& last, int64_t steps) {
  const double waited = now.consumer_wait_seconds - last.consumer_wait_seconds;
  // A per-step wait of 0 is a valid figure, but a counter that is 0 in every
  // repetition has a NaN variation: left out then.
  if (waited > 0 && steps > 0) state.counters["input_wait_seconds_per_step"] = waited / steps;
  if (now.skipped_total() > 0)
    state.counters["skipped_records"] = static_cast<double>(now.skipped_total());
  last = now;
}

TrainOptions StepOptions(const TrainCase& c, const SuiteOptions& options) {
  TrainOptions to;
  to.precision = c.precision;
  // Linear scaling of the learning rate with the global batch (0.1 at 256),
  // so synthetic-data runs stay finite at every batch size.
  to.learning_rate = 0.1 * static_cast<double>(c.batch * c.ranks()) / 256.0;
  to.momentum = 0.9;
  to.cuda_graph = options.cuda.graph;
  to.fuse_relu = options.train.fuse_relu;
  to.conv_relu = options.train.conv_relu;
  to.keep_logits = options.train.accuracy;
  return to;
}

std::string CaseNameOf(const TrainCase& c) {
  return TrainCaseName(c.model, PrecisionName(c.precision), c.data, c.batch, c.gpus, c.replicas);
}

absl::Status WriteCaseTrace(const SuiteOptions& options, const TrainCase& c,
                            const std::vector<TraceProcess>& processes) {
  const std::string name = CaseNameOf(c);
  const std::string path = TraceFilePath(options.trace_file, name);
  // A trace that cannot be written (its folder gone mid-run, a full disk)
  // costs the trace, never the figures measured before it.
  if (absl::Status written = WriteChromeTrace(path, processes); !written.ok()) {
    NoteUnwrittenOutput(name, written);
    return absl::OkStatus();
  }
  std::fprintf(stderr, "cnnbench: trace of one more step of %s (%zu replica(s)): %s\n",
               name.c_str(), processes.size(), path.c_str());
  return absl::OkStatus();
}

void AddTrainCounters(benchmark::State& state, const TrainCase& c, const TrainFigures& figures,
                      double drift_threshold) {
  const double images = static_cast<double>(c.batch * c.ranks());
  if (figures.steps != nullptr)
    AddStepCounters(state, "step_ms", "images_per_second", *figures.steps, drift_threshold);
  state.counters["images_per_second"] =
      benchmark::Counter(images, benchmark::Counter::kIsIterationInvariantRate);
  if (figures.flops_per_image > 0)
    state.counters["flops"] = benchmark::Counter(figures.flops_per_image * images,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_memory_bytes"] =
      benchmark::Counter(static_cast<double>(figures.peak_memory_bytes));
  state.counters["ranks"] = benchmark::Counter(figures.ranks);
  if (std::isfinite(figures.loss)) state.counters["loss"] = benchmark::Counter(figures.loss);
}

}  // namespace cnnbench::bench::train_parts
