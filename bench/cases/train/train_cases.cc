// train/<model>/<precision>/<data>/batch:<B>/gpus:<G>[/replicas:<R>]: one
// full training step of a zoo model per iteration, `--steps` of them per
// repetition; with several GPUs or CPU replicas, data-parallel replicas
// (train/data_parallel.h), the global batch being replicas * B.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/cases/input/input_cases.h"
#include "bench/cases/train/train_parts.h"
#include "bench/harness/harness.h"
#include "bench/harness/iteration_stats.h"
#include "bench/harness/rank_threads.h"
#include "bench/suite/names.h"
#include "bench/suite/suite.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/random.h"
#include "core/status.h"
#include "input/pipeline/dataset_maker.h"
#include "input/pipeline/pipeline.h"
#include "input/pipeline/sources.h"
#include "kernels/collectives/communicator.h"
#include "kernels/kernel.h"
#include "models/summary.h"
#include "models/zoo.h"
#include "train/data_parallel.h"
#include "train/inference.h"
#include "train/trace.h"
#include "train/trainer.h"

namespace cnnbench::bench {
namespace {

using train_parts::AddTrainCounters;
using train_parts::CaseNameOf;
using train_parts::FeedNextBatch;
using train_parts::MakeSyntheticBatch;
using train_parts::MakeTrainPipeline;
using train_parts::ReportInput;
using train_parts::ReportTrainingAccuracy;
using train_parts::StepFlopsPerImage;
using train_parts::StepOptions;
using train_parts::SyntheticBatch;
using train_parts::TrainCase;
using train_parts::WriteCaseTrace;

class TrainWorkload : public Workload {
 public:
  static absl::StatusOr<std::unique_ptr<Workload>> Prepare(const TrainCase& c,
                                                           const SuiteOptions& options);

  // The backend's stream: every kernel of the step is enqueued there.
  const Stream& stream() const override { return backend_->stream(); }
  // Enqueues one step; the harness's timer waits for it. With real data the
  // next batch is then set while the step runs (on a GPU its copy goes on
  // the side stream, beside the step): a pipeline slower than the step
  // shows as a longer step.
  absl::Status Run() override {
    ++steps_;
    RETURN_IF_ERROR(trainer_->Step());
    if (pipeline_ != nullptr) {
      std::swap(step_labels_, next_labels_);  // the labels of the batch this step reads
      RETURN_IF_ERROR(FeedNextBatch(*pipeline_, *trainer_, &next_labels_));
    }
    return absl::OkStatus();
  }
  absl::Status Report(benchmark::State& state) override;
  double items_per_iteration() const override {
    return static_cast<double>(case_.batch * std::max(1, case_.gpus));
  }
  // The last step's loss (read between steps: the timer has waited for it).
  std::string ProgressNote() override {
    absl::StatusOr<float> loss = trainer_->LastLoss();
    return loss.ok() ? absl::StrFormat("loss %.3f", *loss) : "";
  }
  ~TrainWorkload() override {
    if (saved_threads_ > 0) omp_set_num_threads(saved_threads_);
  }

 private:
  TrainWorkload(const TrainCase& c, const SuiteOptions& options) : case_(c), options_(options) {}

  TrainCase case_;
  const SuiteOptions& options_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Trainer> trainer_;                // after backend_: destroyed first
  std::unique_ptr<input::InputPipeline> pipeline_;  // data:real
  input::PipelineStats last_stats_;
  int64_t steps_ = 0;
  bool traced_ = false;    // --trace_file: written once, after the first repetition
  int saved_threads_ = 0;  // the harness thread's OpenMP team, when changed
  double step_flops_per_image_ = 0;
  // The labels of the batch the last step read, and of the one set after it.
  std::vector<int32_t> step_labels_, next_labels_;
};

absl::StatusOr<std::unique_ptr<Workload>> TrainWorkload::Prepare(const TrainCase& c,
                                                                 const SuiteOptions& options) {
  std::unique_ptr<TrainWorkload> w(new TrainWorkload(c, options));
  ModelOptions mo;
  mo.batch = c.batch;
  mo.image_size = options.image_size;
  ASSIGN_OR_RETURN(Graph graph, BuildModel(c.model, mo));
  w->step_flops_per_image_ = StepFlopsPerImage(graph);
  // gpus:1 runs on cuda:0; without a GPU (or CUDA) creating it says why.
  ASSIGN_OR_RETURN(w->backend_,
                   CreateCaseBackend(options, c.gpus > 0 ? Device::Cuda(0) : Device::Cpu()));
  ASSIGN_OR_RETURN(w->trainer_,
                   Trainer::Compile(graph, w->backend_.get(), StepOptions(c, options)));
  if (c.data == "real") {
    // The cores given to the input pipeline are taken from the compute's team.
    if (c.gpus == 0 && options.train.input_cores > 0) {
      w->saved_threads_ = omp_get_max_threads();
      omp_set_num_threads(std::max(1, omp_get_num_procs() - options.train.input_cores));
    }
    ASSIGN_OR_RETURN(w->pipeline_, MakeTrainPipeline(graph, options, 0, 1));
    // A batch is always set ahead: each step is followed by the next's.
    RETURN_IF_ERROR(FeedNextBatch(*w->pipeline_, *w->trainer_, &w->next_labels_));
    for (int i = 0; i < options.train.warmup_steps; ++i) RETURN_IF_ERROR(w->Run());
    w->steps_ = 0;
    w->last_stats_ = w->pipeline_->stats();
  } else {
    ASSIGN_OR_RETURN(SyntheticBatch batch, MakeSyntheticBatch(graph, c.batch, 1234));
    RETURN_IF_ERROR(w->trainer_->SetBatch(static_cast<const float*>(batch.images.data()),
                                          static_cast<const int32_t*>(batch.labels.data())));
    const int32_t* labels = static_cast<const int32_t*>(batch.labels.data());
    w->step_labels_.assign(labels, labels + c.batch);
    for (int i = 0; i < options.train.warmup_steps; ++i) RETURN_IF_ERROR(w->trainer_->Step());
  }
  RETURN_IF_ERROR(w->trainer_->Synchronize());
  return std::unique_ptr<Workload>(std::move(w));
}

// N replicas in this process, one thread each (rank 0 on the harness's
// thread): the CPU's over the local group, GPUs over NCCL. A repetition's
// steps run as one span on every rank (time_span), as collectives require.
class ReplicatedTrainWorkload : public Workload {
 public:
  static absl::StatusOr<std::unique_ptr<Workload>> Prepare(const TrainCase& c,
                                                           const SuiteOptions& options);
  ~ReplicatedTrainWorkload() override;

  const Stream& stream() const override { return ranks_[0].backend->stream(); }
  absl::Status Run() override { return RunIterations(1); }
  absl::Status RunIterations(int64_t count) override;
  absl::Status Report(benchmark::State& state) override;
  // CPU replicas: local rank 0's steps, each timed on the host as it ends
  // (a CPU step ends when its last all-reduce has, so no wait is added).
  // GPU replicas: none, the span only (timing each step would make the
  // host wait on the device between steps).
  std::vector<double> StepSeconds() const override { return rank0_step_seconds_; }
  // CPU replicas: every rank's arrival at each step's all-reduce (under MPI
  // gathered from every process at Report), so the slowest host shows.
  std::vector<std::vector<double>> RankArrivalSeconds() const override { return arrivals_; }
  // Every local replica's GPU (the case's power is theirs together).
  std::vector<int> gpu_ordinals() const override {
    std::vector<int> ordinals;
    for (const Rank& rank : ranks_)
      if (rank.backend != nullptr && !rank.backend->device().is_cpu())
        ordinals.push_back(rank.backend->device().ordinal);
    return ordinals;
  }

 private:
  ReplicatedTrainWorkload(const TrainCase& c, const SuiteOptions& options)
      : case_(c), options_(options) {}
  // Sets this thread's OpenMP team size for the CPU's kernels.
  void PinThreads() const;
  // `count` steps of local rank r (each fed a batch first on real data);
  // each step's seconds into `seconds` when given.
  absl::Status Steps(int r, int64_t count, std::vector<double>* seconds = nullptr);
  // Every rank's arrivals of this repetition in arrivals_ (a collective
  // under MPI), and each host's mean as a counter (host<i>_arrival_ms, the
  // hosts in the order of their first rank).
  absl::Status GatherArrivals(benchmark::State& state);
  // One more step on every rank, traced (after the timed ones: never in the
  // figures), each local replica a process row of the file; under MPI,
  // rank 0 writes its own.
  absl::Status TraceOneStep();

  struct Rank {
    std::unique_ptr<Backend> backend;
    std::unique_ptr<Replica> replica;  // after backend: destroyed first
    SyntheticBatch batch;
    std::unique_ptr<input::InputPipeline> pipeline;  // data:real
    input::PipelineStats last_stats;
    std::vector<double> arrivals;  // this repetition's, CPU replicas
  };
  TrainCase case_;
  const SuiteOptions& options_;
  double step_flops_per_image_ = 0;
  int threads_per_replica_ = 0;             // CPU: OpenMP threads of each replica
  int saved_threads_ = 0;                   // the harness thread's team size before the case
  int64_t steps_ = 0;                       // since the last Report
  std::vector<double> rank0_step_seconds_;  // this repetition's (StepSeconds)
  bool traced_ = false;     // --trace_file: written once, after the first repetition
  bool recording_ = false;  // Steps keeps each rank's arrivals
  std::vector<std::vector<double>> arrivals_;  // every rank's, by rank (RankArrivalSeconds)
  std::vector<std::unique_ptr<Communicator>> group_;
  std::vector<Rank> ranks_;               // sized once, before the threads start
  std::unique_ptr<RankThreads> threads_;  // declared last: joined first
};

absl::StatusOr<std::unique_ptr<Workload>> ReplicatedTrainWorkload::Prepare(
    const TrainCase& c, const SuiteOptions& options) {
  std::unique_ptr<ReplicatedTrainWorkload> w(new ReplicatedTrainWorkload(c, options));
  absl::StatusOr<ReplicaPlacement> placed = PlaceReplicas(options, c.gpus, c.ranks());
  if (!placed.ok()) return EndJobOnTimeout(options, placed.status());
  ReplicaPlacement placement = *std::move(placed);
  w->group_ = std::move(placement.group);
  const std::vector<Device> devices = std::move(placement.devices);
  const int local = static_cast<int>(w->group_.size());  // ranks in this process
  w->saved_threads_ = omp_get_max_threads();
  const int per_host =
      options.mpi != nullptr ? std::max(1, options.mpi->size / options.mpi->hosts) : local;
  const int input_cores = c.data == "real" ? options.train.input_cores : 0;
  w->threads_per_replica_ = options.train.threads_per_replica > 0
                                ? options.train.threads_per_replica
                                : std::max(1, (omp_get_num_procs() - input_cores) / per_host);
  ModelOptions mo;
  mo.batch = c.batch;
  mo.image_size = options.image_size;
  ASSIGN_OR_RETURN(const Graph graph, BuildModel(c.model, mo));
  w->step_flops_per_image_ = StepFlopsPerImage(graph);
  DataParallelOptions dp;
  dp.bucket_bytes = options.train.bucket_bytes;
  dp.overlap = options.train.overlap;
  w->ranks_.resize(local);
  w->threads_ = std::make_unique<RankThreads>(local);
  RETURN_IF_ERROR(w->threads_->status());
  ReplicatedTrainWorkload* self = w.get();
  RETURN_IF_ERROR(EndJobOnTimeout(options, w->threads_->RunEverywhere([&](int r) -> absl::Status {
    self->PinThreads();
    Rank& rank = self->ranks_[r];
    Communicator* comm = self->group_[r].get();
    ASSIGN_OR_RETURN(rank.backend, CreateCaseBackend(options, devices[r]));
    // CPU replicas of one process share the process's choices; MPI ranks take rank 0's.
    const bool share = options.mpi != nullptr && c.gpus == 0 && options.backend == "onednn" &&
                       options.cpu_conv_algorithm == CpuConvAlgorithm::kTimed;
    if (share && comm->rank() != 0)
      RETURN_IF_ERROR(ShareConvChoices(*comm, ConvChoices::Process()));
    ASSIGN_OR_RETURN(rank.replica,
                     Replica::Create(graph, rank.backend.get(), StepOptions(c, options), comm, dp));
    if (share && comm->rank() == 0)
      RETURN_IF_ERROR(ShareConvChoices(*comm, ConvChoices::Process()));
    RETURN_IF_ERROR(rank.replica->SyncInitialWeights().status());
    if (c.data == "real") {
      ASSIGN_OR_RETURN(rank.pipeline, MakeTrainPipeline(graph, options, comm->rank(), local));
      return absl::OkStatus();
    }
    // Each replica its own batch: the global batch is ranks * batch examples.
    ASSIGN_OR_RETURN(rank.batch, MakeSyntheticBatch(graph, c.batch, 1234 + comm->rank()));
    return rank.replica->SetBatch(static_cast<const float*>(rank.batch.images.data()),
                                  static_cast<const int32_t*>(rank.batch.labels.data()));
  })));
  RETURN_IF_ERROR(EndJobOnTimeout(
      options, w->threads_->RunEverywhere([self, steps = options.train.warmup_steps](int r) {
        RETURN_IF_ERROR(self->Steps(r, steps));
        if (self->ranks_[r].pipeline != nullptr)
          self->ranks_[r].last_stats = self->ranks_[r].pipeline->stats();
        return self->ranks_[r].replica->Synchronize();
      })));
  return std::unique_ptr<Workload>(std::move(w));
}

ReplicatedTrainWorkload::~ReplicatedTrainWorkload() {
  threads_.reset();
  omp_set_num_threads(saved_threads_);
}

void ReplicatedTrainWorkload::PinThreads() const {
  if (case_.gpus == 0) omp_set_num_threads(threads_per_replica_);
}

absl::Status ReplicatedTrainWorkload::Steps(int r, int64_t count, std::vector<double>* seconds) {
  Rank& rank = ranks_[r];
  for (int64_t i = 0; i < count; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (rank.pipeline != nullptr)
      RETURN_IF_ERROR(FeedNextBatch(*rank.pipeline, rank.replica->trainer()));
    RETURN_IF_ERROR(rank.replica->Step());
    if (recording_) rank.arrivals.push_back(rank.replica->arrival_seconds());
    if (seconds != nullptr)
      seconds->push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return absl::OkStatus();
}

absl::Status ReplicatedTrainWorkload::RunIterations(int64_t count) {
  steps_ += count;
  // Room for every step before the span: nothing allocates inside it.
  rank0_step_seconds_.clear();
  rank0_step_seconds_.reserve(static_cast<size_t>(count));
  for (Rank& rank : ranks_) {
    rank.arrivals.clear();
    rank.arrivals.reserve(static_cast<size_t>(count));
  }
  recording_ = case_.gpus == 0;
  std::vector<double>* timed = case_.gpus == 0 ? &rank0_step_seconds_ : nullptr;
  return EndJobOnTimeout(options_, threads_->RunEverywhere([this, count, timed](int r) {
    PinThreads();
    return Steps(r, count, r == 0 ? timed : nullptr);
  }));
}

absl::Status ReplicatedTrainWorkload::GatherArrivals(benchmark::State& state) {
  arrivals_.clear();
  for (const Rank& rank : ranks_) arrivals_.push_back(rank.arrivals);
  const MpiRanks* mpi = options_.mpi;
  if (mpi != nullptr && mpi->size > 1) {
    // One rank per process, the same steps on each: all-gathered.
    const std::vector<double>& mine = ranks_[0].arrivals;
    const size_t steps = mine.size();
    std::vector<double> all(steps * mpi->size);
    RETURN_IF_ERROR(
        EndJobOnTimeout(options_, ranks_[0].replica->communicator().AllGather(
                                      mine.data(), all.data(), steps, DType::kF64, Stream::Cpu())));
    arrivals_.assign(mpi->size, {});
    for (int r = 0; r < mpi->size; ++r)
      arrivals_[r].assign(all.begin() + r * steps, all.begin() + (r + 1) * steps);
  }
  // Each host's mean over its ranks and steps, the hosts in the order of
  // their first rank (host_facts' order).
  std::vector<std::string> hosts;
  std::vector<double> sums, counts;
  for (size_t r = 0; r < arrivals_.size(); ++r) {
    const std::string host =
        mpi != nullptr && r < mpi->host_names.size() ? mpi->host_names[r] : std::string();
    const size_t h = std::find(hosts.begin(), hosts.end(), host) - hosts.begin();
    if (h == hosts.size()) hosts.push_back(host), sums.push_back(0), counts.push_back(0);
    for (double s : arrivals_[r]) sums[h] += s, counts[h] += 1;
  }
  for (size_t h = 0; h < hosts.size(); ++h)
    if (counts[h] > 0)
      state.counters[absl::StrCat("host", h, "_arrival_ms")] =
          benchmark::Counter(1e3 * sums[h] / counts[h]);
  return absl::OkStatus();
}

absl::Status ReplicatedTrainWorkload::TraceOneStep() {
  const std::string name = CaseNameOf(case_);
  std::vector<TraceProcess> processes(ranks_.size());
  const auto origin = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(EndJobOnTimeout(options_, threads_->RunEverywhere([&](int r) -> absl::Status {
    PinThreads();
    Rank& rank = ranks_[r];
    // Real data: the step's batch is fed first (traced), as in Steps.
    std::function<absl::Status(StepTimer&)> feed;
    if (rank.pipeline != nullptr)
      feed = [&rank](StepTimer&) { return FeedNextBatch(*rank.pipeline, rank.replica->trainer()); };
    processes[r].name =
        absl::StrCat(name, " rank ", rank.replica->communicator().rank(), " of ", case_.ranks());
    ASSIGN_OR_RETURN(processes[r].slices, rank.replica->TraceStep(origin, feed));
    return absl::OkStatus();
  })));
  if (options_.mpi != nullptr && options_.mpi->rank != 0) return absl::OkStatus();
  return WriteCaseTrace(options_, case_, processes);
}

absl::Status ReplicatedTrainWorkload::Report(benchmark::State& state) {
  const int n = case_.ranks();
  if (!options_.trace_file.empty() && !traced_) {
    traced_ = true;
    RETURN_IF_ERROR(TraceOneStep());
  }
  std::vector<float> losses(ranks_.size());
  RETURN_IF_ERROR(EndJobOnTimeout(options_, threads_->RunEverywhere([&](int r) -> absl::Status {
    ASSIGN_OR_RETURN(losses[r], ranks_[r].replica->GlobalLoss());
    return absl::OkStatus();
  })));
  Replica& first = *ranks_[0].replica;
  std::optional<StepSummary> steps;
  if (!rank0_step_seconds_.empty()) {
    ASSIGN_OR_RETURN(steps,
                     SummarizeSteps(rank0_step_seconds_, static_cast<double>(case_.batch * n)));
  }
  AddTrainCounters(state, case_,
                   {steps ? &*steps : nullptr, step_flops_per_image_,
                    first.trainer().peak_memory_bytes(), n, losses[0]},
                   options_.drift_threshold);
  state.counters["images_per_second_per_replica"] = benchmark::Counter(
      static_cast<double>(case_.batch), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["hosts"] = benchmark::Counter(options_.mpi != nullptr ? options_.mpi->hosts : 1);
  if (recording_) RETURN_IF_ERROR(GatherArrivals(state));
  if (ranks_[0].pipeline != nullptr)
    ReportInput(state, ranks_[0].pipeline->stats(), ranks_[0].last_stats, steps_);
  steps_ = 0;
  state.counters["buckets"] = benchmark::Counter(static_cast<double>(first.buckets().size()));
  // Rank 0's batch (synthetic data: its labels are fixed).
  if (options_.train.accuracy && ranks_[0].pipeline == nullptr) {
    const int32_t* labels = static_cast<const int32_t*>(ranks_[0].batch.labels.data());
    RETURN_IF_ERROR(ReportTrainingAccuracy(state, first.trainer(),
                                           std::vector<int32_t>(labels, labels + case_.batch)));
  }
  state.SetLabel(absl::StrCat(
      ranks_[0].backend->name(), " batch ", case_.batch, " x ", n, " replicas (",
      first.communicator().name(),
      options_.mpi != nullptr
          ? absl::StrCat(", one per process on ", options_.mpi->hosts, " host(s)")
          : "",
      ", ", options_.train.bucket_bytes >> 20, " MiB buckets, overlap ",
      options_.train.overlap ? "on" : "off",
      case_.gpus == 0 ? absl::StrCat(", ", threads_per_replica_, " thread(s) each")
                      : ", no CUDA graph",
      ")", ConvAlgorithmNote(options_, *ranks_[0].backend, first.trainer().step_plan()),
      std::isfinite(losses[0]) ? "" : ", loss not finite",
      steps ? absl::StrCat(", step times: rank 0's", DriftNote(*steps, options_.drift_threshold))
            : ", step times: the span only",
      ThrottleNote(power())));
  return absl::OkStatus();
}

absl::Status TrainWorkload::Report(benchmark::State& state) {
  // One more step, traced (after the timed ones: never in the figures).
  if (!options_.trace_file.empty() && !traced_) {
    traced_ = true;
    // With real data the next batch is fed after the step, as in the timed steps.
    std::function<absl::Status(StepTimer&)> feed;
    if (pipeline_ != nullptr)
      feed = [this](StepTimer&) {
        std::swap(step_labels_, next_labels_);
        return FeedNextBatch(*pipeline_, *trainer_, &next_labels_);
      };
    ASSIGN_OR_RETURN(std::vector<TraceSlice> slices, trainer_->TraceStep(feed));
    RETURN_IF_ERROR(
        WriteCaseTrace(options_, case_, {TraceProcess{CaseNameOf(case_), std::move(slices)}}));
  }
  ASSIGN_OR_RETURN(const float loss, trainer_->LastLoss());
  const int devices = case_.ranks();
  ASSIGN_OR_RETURN(const StepSummary summary,
                   SummarizeSteps(StepSeconds(), static_cast<double>(case_.batch * devices)));
  AddTrainCounters(state, case_,
                   {&summary, step_flops_per_image_, trainer_->peak_memory_bytes(), 1, loss},
                   options_.drift_threshold);
  if (pipeline_ != nullptr) {
    ReportInput(state, pipeline_->stats(), last_stats_, steps_);
    steps_ = 0;
  }
  if (options_.train.accuracy)
    RETURN_IF_ERROR(ReportTrainingAccuracy(state, *trainer_, step_labels_));
  // Whether the steps were replayed CUDA graphs: the flag asks, but
  // profiling, for one, runs the steps eagerly.
  const std::string graph = backend_->device().is_cpu()     ? ""
                            : trainer_->cuda_graph_active() ? ", CUDA graph"
                            : !trainer_->cuda_graph_failure().empty()
                                ? absl::StrCat(", no CUDA graph (capture failed: ",
                                               trainer_->cuda_graph_failure().substr(0, 200), ")")
                                : ", no CUDA graph";
  state.SetLabel(absl::StrCat(
      backend_->name(), " batch ", case_.batch, " x ", devices, graph,
      pipeline_ != nullptr
          ? absl::StrCat(
                ", ", input::DataFormatName(pipeline_->options().format), " data, ",
                pipeline_->options().decode_threads, " decode thread(s)",
                pipeline_->options().color != input::ColorDistortion::kNone
                    ? absl::StrCat(", ", input::ColorDistortionName(pipeline_->options().color),
                                   " colour distortion")
                    : "")
          : "",
      ConvAlgorithmNote(options_, *backend_, trainer_->step_plan()),
      std::isfinite(loss) ? "" : ", loss not finite", DriftNote(summary, options_.drift_threshold),
      ThrottleNote(power())));
  return absl::OkStatus();
}

}  // namespace

namespace {

// Where the options put a training case: {gpus, replicas} pairs. Under MPI
// one replica per process: the CPU case takes every rank as a replica, a
// GPU case (any gpus > 0 asked for) every rank's GPU. Otherwise the CPU
// cases take each replica count and a GPU case one replica per GPU.
struct Placement {
  int gpus = 0, replicas = 1;
  bool operator==(const Placement& o) const { return gpus == o.gpus && replicas == o.replicas; }
};
std::vector<Placement> Placements(const SuiteOptions& options) {
  std::vector<Placement> out;
  auto add = [&out](Placement p) {
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  for (int gpus : options.gpus) {
    if (options.mpi != nullptr)
      add(gpus == 0 ? Placement{0, options.mpi->size} : Placement{options.mpi->size, 1});
    else if (gpus > 0)
      add({gpus, 1});
    else
      for (int replicas : options.train.replicas) add({0, replicas});
  }
  return out;
}

// Every training case the options ask for, in the order they register:
// model, precision, data, batch, placement.
absl::StatusOr<std::vector<TrainCase>> TrainCases(const SuiteOptions& options) {
  std::vector<TrainCase> cases;
  const std::vector<Placement> placements = Placements(options);
  for (const std::string& model : options.train.models) {
    ASSIGN_OR_RETURN(ModelInfo info, FindModel(model));
    std::vector<int64_t> batches = options.train.batch_sizes;
    if (batches.empty()) batches = {info.default_batch};
    for (const std::string& precision_name : options.precisions) {
      ASSIGN_OR_RETURN(Precision precision, ParsePrecision(precision_name));
      for (const std::string& data : options.train.data)
        for (int64_t batch : batches)
          for (const Placement& p : placements)
            cases.push_back({model, precision, data, batch, p.gpus, p.replicas});
    }
  }
  return cases;
}

}  // namespace

absl::Status RegisterTrainCases(const SuiteOptions& options, Harness& harness) {
  // Real data: the user's folder is checked before any case runs.
  if (std::find(options.train.data.begin(), options.train.data.end(), "real") !=
          options.train.data.end() &&
      !options.data_dir.empty())
    RETURN_IF_ERROR_AS_IS(input::DetectDataFormats(options.data_dir, "train").status());
  ASSIGN_OR_RETURN_AS_IS(const std::vector<TrainCase> cases, TrainCases(options));
  for (const TrainCase& c : cases) {
    TimedCase timed;
    timed.name =
        TrainCaseName(c.model, PrecisionName(c.precision), c.data, c.batch, c.gpus, c.replicas);
    timed.family = FamilyName(Family::kTrain);
    timed.iterations = options.train.steps;
    timed.iterations_flag = "--steps";
    timed.unit = benchmark::kMillisecond;
    timed.keeps_step_times = true;
    if (c.ranks() > 1 || options.mpi != nullptr) {
      timed.time_span = true;  // every rank makes all its steps in one go
      timed.prepare = [c, &options] { return ReplicatedTrainWorkload::Prepare(c, options); };
    } else {
      timed.prepare = [c, &options] { return TrainWorkload::Prepare(c, options); };
    }
    harness.Register(std::move(timed));
  }
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
