// train/<model>/<precision>/<data>/batch:<B>/gpus:<G>: one full training
// step of a zoo model per iteration, timed with the device's clock.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/names.h"
#include "bench/suite.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/status.h"
#include "kernels/backends.h"
#include "models/zoo.h"
#include "train/init.h"
#include "train/trainer.h"

namespace cnnbench::bench {
namespace {

struct TrainCase {
  std::string name;
  std::string model;
  Precision precision = Precision::kFp32;
  std::string data;
  int64_t batch = 0;
  int gpus = 0;
  const SuiteOptions* options = nullptr;
  int progress_index = 0;
  // Built on the first repetition, released after the last one.
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Trainer> trainer;
  int repetitions_done = 0;
  absl::Status failure;  // a case that failed to prepare fails every repetition the same way
};

absl::Status Prepare(TrainCase& c) {
  if (c.gpus > 0)
    return absl::UnimplementedError(
        "unsupported: GPU training steps need the CUDA backend, which this build lacks");
  if (c.data == "real")
    return absl::UnimplementedError("unsupported: real data needs the input pipeline (--data=synthetic)");
  ModelOptions mo;
  mo.batch = c.batch;
  mo.image_size = c.options->image_size;
  ASSIGN_OR_RETURN(Graph graph, BuildModel(c.model, mo));
  ASSIGN_OR_RETURN(c.backend, CreateBackend(c.options->backend, Device::Cpu()));
  TrainOptions to;
  to.precision = c.precision;
  // Linear scaling of the learning rate with the global batch (0.1 at 256),
  // so synthetic-data runs stay finite at every batch size.
  to.learning_rate = 0.1 * static_cast<double>(c.batch * std::max(1, c.gpus)) / 256.0;
  to.momentum = 0.9;
  ASSIGN_OR_RETURN(c.trainer, Trainer::Compile(graph, c.backend.get(), to));
  // Synthetic data: one batch made once, random labels (as tf_cnn_benchmarks).
  const Shape& image_shape = graph.nodes[graph.images].output;
  ASSIGN_OR_RETURN(Buffer images, Buffer::Allocate(Device::Cpu(), image_shape.num_elements() * sizeof(float)));
  ASSIGN_OR_RETURN(Buffer labels, Buffer::Allocate(Device::Cpu(), c.batch * sizeof(int32_t)));
  Rng rng(1234);
  float* pixels = static_cast<float*>(images.data());
  for (int64_t i = 0; i < image_shape.num_elements(); ++i) pixels[i] = static_cast<float>(rng.Normal());
  int32_t* label = static_cast<int32_t*>(labels.data());
  for (int64_t i = 0; i < c.batch; ++i) label[i] = static_cast<int32_t>(rng.Next() % graph.classes);
  RETURN_IF_ERROR(c.trainer->SetBatch(pixels, label));
  for (int i = 0; i < c.options->warmup_steps; ++i) RETURN_IF_ERROR(c.trainer->Step().status());
  return absl::OkStatus();
}

void RunTrainCase(benchmark::State& state, TrainCase* c, Progress* progress) {
  progress->Announce(c->progress_index);
  if (c->trainer == nullptr && c->failure.ok()) {
    c->failure = Prepare(*c);
    if (!c->failure.ok()) {
      c->trainer.reset();
      c->backend.reset();
    }
  }
  if (!c->failure.ok()) {
    state.SkipWithError(SkipMessage(c->failure).c_str());
    return;
  }
  float loss = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    auto step = c->trainer->Step();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!step.ok()) {
      state.SkipWithError(SkipMessage(step.status()).c_str());
      break;
    }
    loss = *step;
    state.SetIterationTime(seconds);
  }
  const int devices = std::max(1, c->gpus);
  state.counters["images_per_second"] = benchmark::Counter(
      static_cast<double>(c->batch * devices), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_memory_bytes"] =
      benchmark::Counter(static_cast<double>(c->trainer->peak_memory_bytes()));
  // Google Benchmark writes a NaN counter as a bare NaN, which is not JSON.
  if (std::isfinite(loss)) state.counters["loss"] = benchmark::Counter(loss);
  state.SetLabel(absl::StrCat(c->options->backend, " batch ", c->batch, " x ", devices,
                              std::isfinite(loss) ? "" : ", loss not finite"));
  if (++c->repetitions_done >= c->options->repetitions) {
    c->trainer.reset();  // free the memory before the next case
    c->backend.reset();
  }
}

}  // namespace

absl::Status RegisterTrainCases(const SuiteOptions& options, Progress& progress) {
  for (const std::string& model : options.models) {
    ASSIGN_OR_RETURN(ModelInfo info, FindModel(model));
    std::vector<int64_t> batches = options.batch_sizes;
    if (batches.empty()) batches = {info.default_batch};
    for (const std::string& precision_name : options.precisions) {
      ASSIGN_OR_RETURN(Precision precision, ParsePrecision(precision_name));
      for (const std::string& data : options.data) {
        for (int64_t batch : batches) {
          for (int gpus : options.gpus) {
            auto* c = new TrainCase();
            c->name = TrainCaseName(model, precision_name, data, batch, gpus);
            c->model = model;
            c->precision = precision;
            c->data = data;
            c->batch = batch;
            c->gpus = gpus;
            c->options = &options;
            c->progress_index = progress.Add(c->name);
            benchmark::RegisterBenchmark(c->name.c_str(), RunTrainCase, c, &progress)
                ->Iterations(options.steps)
                ->Repetitions(options.repetitions)
                ->UseManualTime()
                ->Unit(benchmark::kMillisecond);
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
