// Data-parallel training: one Replica per rank, each with its own executor
// (Trainer) on its own device, the same seed and the same initial weights
// (rank 0's, broadcast and then checked). In a step, as backward writes each
// layer's weight gradients, the gradient block is cut into buckets (in
// backward order, each at least `bucket_bytes`, cut only between layers) and
// each bucket's all-reduce (average) starts as soon as the bucket is
// complete, overlapping the rest of backward; the update waits for every
// bucket. With overlap off the same buckets are reduced in the same order
// after backward, so both give bit-identical weights.
//
// Where the all-reduce runs: on a GPU, on a communication stream that waits
// for an event recorded after the bucket's last gradient; on the CPU, on a
// communication thread of the replica (CPU collectives run on the calling
// thread), so backward goes on while the bucket is reduced.
//
// Every rank must make the same calls in the same order (Create,
// SyncInitialWeights, SetBatch, Step, GlobalLoss): they hold collectives.
#ifndef CNNBENCH_TRAIN_DATA_PARALLEL_H_
#define CNNBENCH_TRAIN_DATA_PARALLEL_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/collectives/communicator.h"
#include "kernels/kernel.h"
#include "models/graph.h"
#include "train/trainer.h"

namespace cnnbench {

struct DataParallelOptions {
  // A bucket is closed (and its all-reduce started) once it holds at least
  // this many bytes of gradients; the last bucket of a step takes the rest.
  size_t bucket_bytes = size_t{25} << 20;
  // Start each bucket's all-reduce during backward (true), or all of them
  // after backward (false: the baseline that shows what overlap gains).
  bool overlap = true;
};

// One bucket of the fp32 gradient block, in bytes.
struct GradientBucket {
  size_t offset = 0;
  size_t bytes = 0;
};

// Cuts a step's gradient ranges (in the order the hook reports them: from
// the end of the block to its start, each ending where the previous began)
// into buckets of at least `bucket_bytes`; the last bucket ends at offset 0.
// A pure function, shared by the replica and the gradient all-reduce case.
absl::StatusOr<std::vector<GradientBucket>> PlanBuckets(const std::vector<GradientRange>& ranges,
                                                        size_t total_bytes, size_t bucket_bytes);

class Replica {
 public:
  // Compiles the graph on `backend` (this rank's device) at the per-replica
  // batch (graph.batch). options.batch_offset is set to rank * batch, so
  // dropout draws the masks of one replica at ranks * batch. `comm` is this
  // rank's communicator and must outlive the replica.
  static absl::StatusOr<std::unique_ptr<Replica>> Create(const Graph& graph, Backend* backend,
                                                         TrainOptions options, Communicator* comm,
                                                         const DataParallelOptions& dp);
  ~Replica();
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  // Every rank takes rank 0's initial parameters, then checks that all
  // ranks hold the same bytes (an error names the ranks that differ).
  // Returns whether the ranks' own initial weights already agreed.
  absl::StatusOr<bool> SyncInitialWeights();

  // This replica's share of the global batch (see Trainer::SetBatch).
  absl::Status SetBatch(const float* images, const int32_t* labels);
  // Forward and backward with the bucketed all-reduce, then the update once
  // every bucket is reduced. Enqueues on a GPU; on the CPU it returns when
  // the step is done.
  absl::Status Step();
  // The last Step()'s seconds from its start until this replica had handed
  // its last gradient bucket to the all-reduce and began to wait for the
  // others: its arrival at the step's all-reduce. Host-timed, so CPU
  // replicas only (0 on a GPU, whose steps are enqueued).
  double arrival_seconds() const { return arrival_seconds_; }
  // This replica's loss of the most recent step (waits for it).
  absl::StatusOr<float> LastLoss() { return trainer_->LastLoss(); }
  // The mean of every replica's loss (a collective: every rank calls it).
  absl::StatusOr<float> GlobalLoss();
  absl::Status Synchronize();

  // One more step (a collective, like Step: every rank calls it), traced:
  // the trainer's slices on the "compute" lane, each bucket's all-reduce
  // as a slice on the "communication" lane (the CPU's communication
  // thread timed by the host's clock; on a GPU by events on the
  // communication stream, placed against one recorded on the compute stream
  // at `origin`), and the wait for the buckets before the update as
  // "(wait for all-reduce)" on the compute lane. `origin` is shared by the
  // replicas traced together. `before`, where given, runs first, traced (a
  // real-data case feeds the step's batch there, as its timed steps do).
  // Trains like any step; the profile sums are left as they were.
  absl::StatusOr<std::vector<TraceSlice>> TraceStep(
      std::chrono::steady_clock::time_point origin,
      const std::function<absl::Status(StepTimer&)>& before = nullptr);

  Trainer& trainer() { return *trainer_; }
  Communicator& communicator() { return *comm_; }
  // The buckets of the most recent step, in the order they were reduced.
  const std::vector<GradientBucket>& buckets() const { return buckets_; }

 private:
  class CpuWorker;
  Replica() = default;
  absl::Status OnGradientsReady(const GradientRange& range);
  absl::Status StartBucket(const GradientBucket& bucket);
  // Waits for (CPU) or orders the update after (GPU) every started bucket.
  absl::Status FinishBuckets();
  // The traced step's buckets as slices on the communication lane.
  absl::Status AddBucketSlices(StepTimer& timer);

  std::unique_ptr<Trainer> trainer_;
  Communicator* comm_ = nullptr;
  DataParallelOptions dp_;
  bool on_cpu_ = true;
  double arrival_seconds_ = 0;
  // Step state: the start of the gradients not yet in a bucket (buckets
  // grow from the end of the block down), and the buckets so far.
  size_t unbucketed_end_ = 0;
  size_t reported_end_ = 0;
  std::vector<GradientBucket> buckets_;  // capacity kept: a step allocates nothing
  std::unique_ptr<CpuWorker> worker_;    // CPU
  // GPU: the communication stream, the event after each bucket's gradients
  // and the event after the last all-reduce.
  std::unique_ptr<Stream> comm_stream_;
  std::unique_ptr<Event> grads_ready_, reduced_;
  // Loss all-reduce buffer (one float, device memory).
  Buffer loss_buffer_;
  // TraceStep: buckets started this step, and on a GPU an event pair per
  // bucket on the communication stream and one on the compute stream at the
  // trace's origin (created on the first trace).
  bool tracing_ = false;
  size_t started_ = 0;
  std::vector<std::pair<Event, Event>> bucket_events_;
  std::unique_ptr<Event> trace_origin_;
  double trace_origin_us_ = 0;  // when trace_origin_ was recorded, from the trace's origin
};

}  // namespace cnnbench

#endif  // CNNBENCH_TRAIN_DATA_PARALLEL_H_
