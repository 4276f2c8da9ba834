// grads/<model>/<local|mpi|nccl>/bucket_mb:<M>/ranks:<N>: one training step's gradient
// all-reduce of a zoo model, exactly as the data-parallel trainer makes it
// (the same gradient block, the same buckets in the same order, in-place
// average in fp32), without the compute around it: what the communication
// alone costs per step, as tf_cnn_benchmarks' all-reduce benchmark measured.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/cases/collective/collective_cases.h"
#include "bench/harness/harness.h"
#include "bench/suite/names.h"
#include "bench/harness/rank_threads.h"
#include "bench/suite/suite.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/status.h"
#include "kernels/collectives/communicator.h"
#include "kernels/collectives/nccl.h"
#include "models/zoo.h"
#include "train/data_parallel.h"
#include "train/trainer.h"

namespace cnnbench::bench {
namespace {

// Rank r's gradient element i starts as (r + 1) * (i % 7); the average over
// n ranks is (n + 1) / 2 * (i % 7), exact in fp32, and stays so: averaging
// equal values changes nothing, however many steps run. (NCCL's average
// may scale each input by 1/n before summing, which rounds: on GPUs the
// check allows a relative 1e-5.)
float Pattern(int rank, size_t i) { return static_cast<float>((rank + 1) * (i % 7)); }
float Averaged(int ranks, size_t i) { return static_cast<float>((ranks + 1) * (i % 7)) / 2; }

class GradsWorkload : public Workload {
 public:
  // `gpus`: the ranks on GPUs through NCCL (device memory), else the host's
  // group (local threads or mpi processes).
  static absl::StatusOr<std::unique_ptr<Workload>> Prepare(const std::string& model, int ranks,
                                                           size_t bucket_bytes, bool gpus,
                                                           const SuiteOptions& options);
  const Stream& stream() const override { return streams_[0]; }
  absl::Status Run() override { return RunIterations(1); }
  absl::Status RunIterations(int64_t count) override;
  absl::Status Report(benchmark::State& state) override;

 private:
  explicit GradsWorkload(const SuiteOptions& options) : options_(&options) {}
  // One step's buckets on `rank`, enqueued on its stream.
  absl::Status Step(int rank);
  // Waits for `rank`'s stream, at most the communicator's timeout.
  absl::Status Wait(int rank);

  const SuiteOptions* options_;
  std::vector<Device> devices_;  // per rank
  std::vector<Stream> streams_;  // per rank
  std::vector<GradientBucket> buckets_;
  size_t total_bytes_ = 0;
  std::vector<std::unique_ptr<Communicator>> group_;
  std::vector<Buffer> grads_;  // per rank
  bool gpus_ = false;
  bool running_ = false;                  // ranks 1..N-1 still on the last timed span
  std::unique_ptr<RankThreads> threads_;  // declared last: joined first
};

absl::StatusOr<std::unique_ptr<Workload>> GradsWorkload::Prepare(const std::string& model,
                                                                 int ranks, size_t bucket_bytes,
                                                                 bool gpus,
                                                                 const SuiteOptions& options) {
  std::unique_ptr<GradsWorkload> w(new GradsWorkload(options));
  w->gpus_ = gpus;
  if (gpus && options.mpi == nullptr && ranks > options.gpu_count)
    return absl::UnimplementedError(absl::StrCat("unsupported: ranks:", ranks, " needs ", ranks,
                                                 " GPUs, ", options.gpu_count, " visible"));
  absl::StatusOr<ReplicaPlacement> placed = PlaceReplicas(options, gpus ? ranks : 0, ranks);
  if (!placed.ok()) return EndJobOnTimeout(options, placed.status());
  ReplicaPlacement placement = *std::move(placed);
  w->group_ = std::move(placement.group);
  w->devices_ = std::move(placement.devices);
  // The gradient block and its ranges as the trainer lays them out on this
  // device's backend (the layout does not depend on the batch: batch 1 is
  // the cheapest to compile).
  {
    ModelOptions mo;
    mo.batch = 1;
    mo.image_size = options.image_size;
    ASSIGN_OR_RETURN(const Graph graph, BuildModel(model, mo));
    ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, CreateCaseBackend(options, w->devices_[0]));
    ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer,
                     Trainer::Compile(graph, backend.get(), TrainOptions()));
    w->total_bytes_ = trainer->gradient_bytes();
    ASSIGN_OR_RETURN(w->buckets_,
                     PlanBuckets(trainer->GradientRanges(), w->total_bytes_, bucket_bytes));
  }
  const int local = static_cast<int>(w->group_.size());  // ranks in this process
  w->grads_.resize(local);
  for (int r = 0; r < local; ++r) {
    ASSIGN_OR_RETURN(Stream stream,
                     w->devices_[r].is_cpu() ? Stream::Cpu() : Stream::Create(w->devices_[r]));
    w->streams_.push_back(std::move(stream));
    ASSIGN_OR_RETURN(w->grads_[r], Buffer::Allocate(w->devices_[r], w->total_bytes_));
  }
  w->threads_ = std::make_unique<RankThreads>(local);
  RETURN_IF_ERROR(w->threads_->status());
  GradsWorkload* self = w.get();
  // Each rank fills its own buffer (on the host, its pages faulted in by
  // the thread that uses them), then one untimed step.
  RETURN_IF_ERROR(EndJobOnTimeout(options, w->threads_->RunEverywhere([self](int r) {
    const size_t count = self->total_bytes_ / sizeof(float);
    std::vector<float> host(count);
    for (size_t i = 0; i < count; ++i) host[i] = Pattern(self->group_[r]->rank(), i);
    RETURN_IF_ERROR(CopyBytes(self->grads_[r].data(), self->devices_[r], host.data(), Device::Cpu(),
                              self->total_bytes_));
    RETURN_IF_ERROR(self->Step(r));
    return self->Wait(r);
  })));
  return std::unique_ptr<Workload>(std::move(w));
}

absl::Status GradsWorkload::Step(int rank) {
  char* grads = static_cast<char*>(grads_[rank].data());
  for (const GradientBucket& b : buckets_)
    RETURN_IF_ERROR(group_[rank]->AllReduce(grads + b.offset, grads + b.offset,
                                            b.bytes / sizeof(float), DType::kF32, ReduceOp::kAvg,
                                            streams_[rank]));
  return absl::OkStatus();
}

absl::Status GradsWorkload::Wait(int rank) {
  if (!gpus_) return absl::OkStatus();  // the host's collectives are done when they return
  return NcclSynchronize(*group_[rank], streams_[rank]);
}

absl::Status GradsWorkload::RunIterations(int64_t count) {
  // Rank 0 only enqueues (the harness stops its timer on rank 0's stream);
  // the others wait for theirs before reporting back, outside the span.
  running_ = true;
  return EndJobOnTimeout(*options_, threads_->Start([this, count](int r) {
    for (int64_t i = 0; i < count; ++i) RETURN_IF_ERROR(Step(r));
    return r == 0 ? absl::OkStatus() : Wait(r);
  }));
}

absl::Status GradsWorkload::Report(benchmark::State& state) {
  if (running_) {
    running_ = false;
    RETURN_IF_ERROR_AS_IS(EndJobOnTimeout(*options_, threads_->Finish()));
  }
  const int ranks = group_[0]->size();
  const size_t count = total_bytes_ / sizeof(float);
  std::vector<float> host(count);
  for (size_t r = 0; r < grads_.size(); ++r) {
    RETURN_IF_ERROR(Wait(static_cast<int>(r)));
    RETURN_IF_ERROR(
        CopyBytes(host.data(), Device::Cpu(), grads_[r].data(), devices_[r], total_bytes_));
    for (size_t i = 0; i < count; ++i) {
      const float want = Averaged(ranks, i);
      const float tolerance = gpus_ ? 1e-5f * want : 0.0f;
      if (!(std::fabs(host[i] - want) <= tolerance))
        return absl::InternalError(absl::StrCat("gradient all-reduce wrong at rank ",
                                                group_[r]->rank(), " element ", i, ": ", host[i],
                                                " vs ", want));
    }
  }
  const double bytes = static_cast<double>(total_bytes_);
  state.counters["algbw"] =
      benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["busbw"] = benchmark::Counter(bytes * AllReduceBusFactor(ranks),
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.counters["gradient_bytes"] = benchmark::Counter(bytes);
  state.counters["buckets"] = benchmark::Counter(static_cast<double>(buckets_.size()));
  state.SetLabel(absl::StrCat(group_[0]->name(), gpus_ ? ", device memory" : ", host memory", ", ",
                              buckets_.size(), " bucket(s) of ", FormatBytes(total_bytes_),
                              " per step, result checked"));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterGradsCases(const SuiteOptions& options, Harness& harness) {
  // The collectives' transports and rank counts (CollectiveTransports).
  const auto transports = CollectiveTransports(options);
  for (const std::string& model : options.train.models) {
    RETURN_IF_ERROR(FindModel(model).status());
    for (const auto& [impl, rank_counts] : transports)
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
        const bool gpus = impl == "nccl";
        timed.prepare = [model, ranks, gpus, &options] {
          return GradsWorkload::Prepare(model, ranks, options.train.bucket_bytes, gpus, options);
        };
        harness.Register(std::move(timed));
      }
  }
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
