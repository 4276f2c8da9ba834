// grads/<model>/<impl>/bucket_mb:<M>/ranks:<N>: one training step's gradient
// all-reduce of a zoo model, exactly as the data-parallel trainer makes it
// (the same gradient block, the same buckets in the same order, in-place
// average in fp32), without the compute around it: what the communication
// alone costs per step, as tf_cnn_benchmarks' all-reduce benchmark measured.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "bench/harness.h"
#include "bench/names.h"
#include "bench/rank_threads.h"
#include "bench/suite.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/status.h"
#include "kernels/collectives/communicator.h"
#include "models/zoo.h"
#include "train/data_parallel.h"
#include "train/trainer.h"

namespace cnnbench::bench {
namespace {

// Rank r's gradient element i starts as (r + 1) * (i % 7); the average over
// n ranks is (n + 1) / 2 * (i % 7), exact in fp32, and stays so: averaging
// equal values changes nothing, however many steps run.
float Pattern(int rank, size_t i) { return static_cast<float>((rank + 1) * (i % 7)); }
float Averaged(int ranks, size_t i) { return static_cast<float>((ranks + 1) * (i % 7)) / 2; }

class GradsWorkload : public Workload {
 public:
  static absl::StatusOr<std::unique_ptr<Workload>> Prepare(const std::string& model, int ranks,
                                                           size_t bucket_bytes,
                                                           const SuiteOptions& options);
  const Stream& stream() const override { return stream_; }
  absl::Status Run() override { return RunIterations(1); }
  absl::Status RunIterations(int64_t count) override;
  absl::Status Report(benchmark::State& state) override;

 private:
  explicit GradsWorkload(const SuiteOptions& options) : options_(&options) {}
  // One step's buckets on `rank`.
  absl::Status Step(int rank);

  const SuiteOptions* options_;
  Stream stream_ = Stream::Cpu();
  std::vector<GradientBucket> buckets_;
  size_t total_bytes_ = 0;
  std::vector<std::unique_ptr<Communicator>> group_;
  std::vector<Buffer> grads_;             // per rank
  std::unique_ptr<RankThreads> threads_;  // declared last: joined first
};

absl::StatusOr<std::unique_ptr<Workload>> GradsWorkload::Prepare(const std::string& model,
                                                                 int ranks, size_t bucket_bytes,
                                                                 const SuiteOptions& options) {
  std::unique_ptr<GradsWorkload> w(new GradsWorkload(options));
  // The gradient block and its ranges as the trainer lays them out (the
  // layout does not depend on the batch: batch 1 is the cheapest to compile).
  {
    ModelOptions mo;
    mo.batch = 1;
    mo.image_size = options.image_size;
    ASSIGN_OR_RETURN(const Graph graph, BuildModel(model, mo));
    ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, CreateCaseBackend(options, Device::Cpu()));
    ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer,
                     Trainer::Compile(graph, backend.get(), TrainOptions()));
    w->total_bytes_ = trainer->gradient_bytes();
    ASSIGN_OR_RETURN(w->buckets_,
                     PlanBuckets(trainer->GradientRanges(), w->total_bytes_, bucket_bytes));
  }
  absl::StatusOr<ReplicaPlacement> placed = PlaceReplicas(options, 0, ranks);
  if (!placed.ok()) return EndJobOnTimeout(options, placed.status());
  ReplicaPlacement placement = *std::move(placed);
  w->group_ = std::move(placement.group);
  const int local = static_cast<int>(w->group_.size());  // ranks in this process
  w->grads_.resize(local);
  for (int r = 0; r < local; ++r) {
    ASSIGN_OR_RETURN(w->grads_[r], Buffer::Allocate(Device::Cpu(), w->total_bytes_));
  }
  w->threads_ = std::make_unique<RankThreads>(local);
  GradsWorkload* self = w.get();
  // Each rank fills its own buffer (its pages faulted in by the thread that
  // uses them), then one untimed step.
  RETURN_IF_ERROR(EndJobOnTimeout(options, w->threads_->RunEverywhere([self](int r) {
    float* g = static_cast<float*>(self->grads_[r].data());
    const size_t count = self->total_bytes_ / sizeof(float);
    for (size_t i = 0; i < count; ++i) g[i] = Pattern(self->group_[r]->rank(), i);
    return self->Step(r);
  })));
  return std::unique_ptr<Workload>(std::move(w));
}

absl::Status GradsWorkload::Step(int rank) {
  char* grads = static_cast<char*>(grads_[rank].data());
  for (const GradientBucket& b : buckets_)
    RETURN_IF_ERROR(group_[rank]->AllReduce(grads + b.offset, grads + b.offset,
                                            b.bytes / sizeof(float), DType::kF32, ReduceOp::kAvg,
                                            stream_));
  return absl::OkStatus();
}

absl::Status GradsWorkload::RunIterations(int64_t count) {
  return EndJobOnTimeout(*options_, threads_->RunEverywhere([this, count](int r) {
    for (int64_t i = 0; i < count; ++i) RETURN_IF_ERROR(Step(r));
    return absl::OkStatus();
  }));
}

absl::Status GradsWorkload::Report(benchmark::State& state) {
  const int ranks = group_[0]->size();
  const size_t count = total_bytes_ / sizeof(float);
  for (size_t r = 0; r < grads_.size(); ++r) {
    const float* g = static_cast<const float*>(grads_[r].data());
    for (size_t i = 0; i < count; ++i)
      if (g[i] != Averaged(ranks, i))
        return absl::InternalError(absl::StrCat("gradient all-reduce wrong at rank ",
                                                group_[r]->rank(), " element ", i, ": ", g[i],
                                                " vs ", Averaged(ranks, i)));
  }
  const double bytes = static_cast<double>(total_bytes_);
  state.counters["algbw"] =
      benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["busbw"] = benchmark::Counter(bytes * AllReduceBusFactor(ranks),
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.counters["gradient_bytes"] = benchmark::Counter(bytes);
  state.counters["buckets"] = benchmark::Counter(static_cast<double>(buckets_.size()));
  state.SetLabel(absl::StrCat(group_[0]->name(), ", ", buckets_.size(), " bucket(s) of ",
                              FormatBytes(total_bytes_), " per step, result checked"));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterGradsCases(const SuiteOptions& options, Harness& harness) {
  std::vector<int> rank_counts = options.collectives.ranks;
  if (options.mpi != nullptr) rank_counts = {options.mpi->size};  // one rank per process
  const char* impl = options.mpi != nullptr ? "mpi" : "local";
  for (const std::string& model : options.train.models) {
    RETURN_IF_ERROR(FindModel(model).status());
    for (int ranks : rank_counts) {
      TimedCase timed;
      timed.name = CaseName::Grads(model, impl,
                                   static_cast<int64_t>(options.train.bucket_bytes >> 20), ranks)
                       .ToString();
      timed.family = FamilyName(Family::kGrads);
      timed.iterations = options.collectives.iters;  // --collective_iters
      timed.iterations_flag = "--collective_iters";
      timed.time_span = true;  // every rank makes all its collectives in one go
      timed.unit = benchmark::kMillisecond;
      timed.prepare = [model, ranks, &options] {
        return GradsWorkload::Prepare(model, ranks, options.train.bucket_bytes, options);
      };
      harness.Register(std::move(timed));
    }
  }
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
