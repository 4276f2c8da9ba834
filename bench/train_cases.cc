// train/<model>/<precision>/<data>/batch:<B>/gpus:<G>: one full training
// step of a zoo model per iteration, `--steps` of them per repetition.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/harness.h"
#include "bench/names.h"
#include "bench/suite.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/random.h"
#include "core/status.h"
#include "kernels/kernel.h"
#include "models/zoo.h"
#include "train/trainer.h"

namespace cnnbench::bench {
namespace {

struct TrainCase {
  std::string model;
  Precision precision = Precision::kFp32;
  std::string data;
  int64_t batch = 0;
  int gpus = 0;
};

class TrainWorkload : public Workload {
 public:
  static absl::StatusOr<std::unique_ptr<Workload>> Prepare(const TrainCase& c,
                                                           const SuiteOptions& options);

  // The backend's stream: every kernel of the step is enqueued there.
  const Stream& stream() const override { return backend_->stream(); }
  // Enqueues one step; the harness's timer waits for it.
  absl::Status Run() override { return trainer_->Step(); }
  absl::Status Report(benchmark::State& state) override;

 private:
  TrainWorkload(const TrainCase& c, const SuiteOptions& options) : case_(c), options_(options) {}

  TrainCase case_;
  const SuiteOptions& options_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Trainer> trainer_;  // after backend_: destroyed first
};

absl::StatusOr<std::unique_ptr<Workload>> TrainWorkload::Prepare(const TrainCase& c,
                                                                 const SuiteOptions& options) {
  if (c.gpus > 1)
    return absl::UnimplementedError(absl::StrCat(
        "unsupported: gpus:", c.gpus, " (data parallelism over several GPUs is not built yet)"));
  if (c.data == "real")
    return absl::UnimplementedError(
        "unsupported: real data needs the input pipeline (--data=synthetic)");
  std::unique_ptr<TrainWorkload> w(new TrainWorkload(c, options));
  ModelOptions mo;
  mo.batch = c.batch;
  mo.image_size = options.image_size;
  ASSIGN_OR_RETURN(Graph graph, BuildModel(c.model, mo));
  // gpus:1 runs on cuda:0; without a GPU (or CUDA) creating it says why.
  ASSIGN_OR_RETURN(w->backend_,
                   CreateCaseBackend(options, c.gpus > 0 ? Device::Cuda(0) : Device::Cpu()));
  TrainOptions to;
  to.precision = c.precision;
  // Linear scaling of the learning rate with the global batch (0.1 at 256),
  // so synthetic-data runs stay finite at every batch size.
  to.learning_rate = 0.1 * static_cast<double>(c.batch * std::max(1, c.gpus)) / 256.0;
  to.momentum = 0.9;
  to.cuda_graph = options.cuda_graph;
  ASSIGN_OR_RETURN(w->trainer_, Trainer::Compile(graph, w->backend_.get(), to));
  // Synthetic data: one batch made once, random labels (as tf_cnn_benchmarks).
  const Shape& image_shape = graph.nodes[graph.images].output;
  ASSIGN_OR_RETURN(Buffer images,
                   Buffer::Allocate(Device::Cpu(), image_shape.num_elements() * sizeof(float)));
  ASSIGN_OR_RETURN(Buffer labels, Buffer::Allocate(Device::Cpu(), c.batch * sizeof(int32_t)));
  Rng rng(1234);
  float* pixels = static_cast<float*>(images.data());
  for (int64_t i = 0; i < image_shape.num_elements(); ++i)
    pixels[i] = static_cast<float>(rng.Normal());
  int32_t* label = static_cast<int32_t*>(labels.data());
  for (int64_t i = 0; i < c.batch; ++i) label[i] = static_cast<int32_t>(rng.Next() % graph.classes);
  RETURN_IF_ERROR(w->trainer_->SetBatch(pixels, label));
  for (int i = 0; i < options.warmup_steps; ++i) RETURN_IF_ERROR(w->trainer_->Step());
  RETURN_IF_ERROR(w->trainer_->Synchronize());
  return std::unique_ptr<Workload>(std::move(w));
}

absl::Status TrainWorkload::Report(benchmark::State& state) {
  ASSIGN_OR_RETURN(const float loss, trainer_->LastLoss());
  const int devices = std::max(1, case_.gpus);
  state.counters["images_per_second"] = benchmark::Counter(
      static_cast<double>(case_.batch * devices), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_memory_bytes"] =
      benchmark::Counter(static_cast<double>(trainer_->peak_memory_bytes()));
  // Google Benchmark writes a NaN counter as a bare NaN, which is not JSON.
  if (std::isfinite(loss)) state.counters["loss"] = benchmark::Counter(loss);
  state.SetLabel(absl::StrCat(backend_->name(), " batch ", case_.batch, " x ", devices,
                              std::isfinite(loss) ? "" : ", loss not finite"));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterTrainCases(const SuiteOptions& options, Harness& harness) {
  for (const std::string& model : options.models) {
    ASSIGN_OR_RETURN(ModelInfo info, FindModel(model));
    std::vector<int64_t> batches = options.batch_sizes;
    if (batches.empty()) batches = {info.default_batch};
    for (const std::string& precision_name : options.precisions) {
      ASSIGN_OR_RETURN(Precision precision, ParsePrecision(precision_name));
      for (const std::string& data : options.data) {
        for (int64_t batch : batches) {
          for (int gpus : options.gpus) {
            const TrainCase c{model, precision, data, batch, gpus};
            TimedCase timed;
            timed.name = TrainCaseName(model, precision_name, data, batch, gpus);
            timed.family = "train";
            timed.iterations = options.steps;
            timed.iterations_flag = "--steps";
            timed.unit = benchmark::kMillisecond;
            timed.prepare = [c, &options] { return TrainWorkload::Prepare(c, options); };
            harness.Register(std::move(timed));
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
