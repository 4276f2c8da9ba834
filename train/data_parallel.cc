#include "train/data_parallel.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/random.h"
#include "core/status.h"

namespace cnnbench {

absl::StatusOr<std::vector<GradientBucket>> PlanBuckets(const std::vector<GradientRange>& ranges,
                                                        size_t total_bytes, size_t bucket_bytes) {
  if (bucket_bytes == 0) return absl::InvalidArgumentError("bucket size must be positive");
  std::vector<GradientBucket> buckets;
  size_t reported_end = total_bytes, unbucketed_end = total_bytes;
  for (const GradientRange& r : ranges) {
    if (r.offset + r.bytes != reported_end)
      return absl::InternalError(absl::StrCat(
          "gradient ranges are not contiguous in backward order: node ", r.node, " covers [",
          r.offset, ", ", r.offset + r.bytes, ") but the previous range began at ", reported_end));
    reported_end = r.offset;
    if (unbucketed_end - r.offset >= bucket_bytes) {
      buckets.push_back({r.offset, unbucketed_end - r.offset});
      unbucketed_end = r.offset;
    }
  }
  if (unbucketed_end > 0) buckets.push_back({0, unbucketed_end});
  return buckets;
}

// The CPU's communication thread: all-reduces buckets in the order given,
// while the replica's own thread goes on with backward.
class Replica::CpuWorker {
 public:
  // At most `max_buckets` buckets are started between two Finish calls (one
  // per layer with parameters, plus the rest): their slots are allocated
  // here, so a step allocates nothing.
  CpuWorker(Communicator* comm, char* grads, size_t max_buckets)
      : comm_(comm), grads_(grads), queue_(max_buckets) {
    thread_ = std::thread([this] { Run(); });
  }
  ~CpuWorker() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      quit_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  absl::Status Start(const GradientBucket& bucket) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (posted_ == queue_.size())
        return absl::InternalError(
            absl::StrCat("more than ", queue_.size(), " gradient buckets in one step"));
      queue_[posted_++] = bucket;
    }
    wake_.notify_all();
    return absl::OkStatus();
  }

  // While on, each bucket's start and end on the host's clock are kept
  // (times()); set between steps.
  void SetTracing(bool on) {
    std::lock_guard<std::mutex> lock(mutex_);
    tracing_ = on;
  }
  using Span =
      std::pair<std::chrono::steady_clock::time_point, std::chrono::steady_clock::time_point>;
  // The buckets of the last Finish, in the order they were reduced (while tracing).
  const std::vector<Span>& times() const { return times_; }

  // Waits until every started bucket is reduced; the first error, if any
  // (the buckets after a failed one are not reduced).
  absl::Status Finish() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return taken_ == posted_ && !busy_; });
    if (tracing_) times_.assign(spans_.begin(), spans_.begin() + posted_);
    posted_ = taken_ = 0;
    absl::Status status = std::move(error_);
    error_ = absl::OkStatus();
    return status;
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return quit_ || taken_ < posted_; });
      if (taken_ == posted_) return;  // quit
      const size_t index = taken_++;
      const GradientBucket bucket = queue_[index];
      busy_ = true;
      const bool skip = !error_.ok();
      const bool tracing = tracing_;
      lock.unlock();
      absl::Status status = absl::OkStatus();
      if (!skip) {
        const auto begun =
            tracing ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
        char* data = grads_ + bucket.offset;
        status = comm_->AllReduce(data, data, bucket.bytes / sizeof(float), DType::kF32,
                                  ReduceOp::kAvg, cpu_stream_);
        if (tracing) spans_[index] = {begun, std::chrono::steady_clock::now()};
      }
      lock.lock();
      if (!status.ok() && error_.ok())
        error_ = absl::Status(status.code(),
                              absl::StrCat("all-reduce of gradient bytes [", bucket.offset, ", ",
                                           bucket.offset + bucket.bytes, "): ", status.message()));
      busy_ = false;
      if (taken_ == posted_) idle_.notify_all();
    }
  }

  Communicator* comm_;
  char* grads_;
  Stream cpu_stream_ = Stream::Cpu();
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::vector<GradientBucket> queue_;  // [taken_, posted_): started, not yet reduced
  std::vector<Span> spans_ = std::vector<Span>(queue_.size());  // per queue slot, while tracing
  std::vector<Span> times_;
  size_t posted_ = 0, taken_ = 0;
  bool busy_ = false, quit_ = false, tracing_ = false;
  absl::Status error_;
};

absl::StatusOr<std::unique_ptr<Replica>> Replica::Create(const Graph& graph, Backend* backend,
                                                         TrainOptions options, Communicator* comm,
                                                         const DataParallelOptions& dp) {
  if (comm == nullptr) return absl::InvalidArgumentError("Replica: no communicator");
  if (dp.bucket_bytes == 0)
    return absl::InvalidArgumentError("Replica: bucket size must be positive");
  std::unique_ptr<Replica> r(new Replica());
  r->comm_ = comm;
  r->dp_ = dp;
  r->on_cpu_ = backend->device().is_cpu();
  options.batch_offset = static_cast<int64_t>(comm->rank()) * graph.batch;
  // A captured step would hold the collectives' launches; replicas run the
  // step's parts directly.
  options.cuda_graph = false;
  ASSIGN_OR_RETURN(r->trainer_, Trainer::Compile(graph, backend, options));
  const Device device = backend->device();
  ASSIGN_OR_RETURN(r->loss_buffer_,
                   Buffer::Allocate(device, sizeof(uint64_t) * (comm->size() + 1)));
  if (r->on_cpu_) {
    r->worker_ = std::make_unique<CpuWorker>(comm, static_cast<char*>(r->trainer_->gradients()),
                                             r->trainer_->GradientRanges().size() + 1);
  } else {
    ASSIGN_OR_RETURN(Stream stream, Stream::Create(device));
    r->comm_stream_ = std::make_unique<Stream>(std::move(stream));
    ASSIGN_OR_RETURN(Event ready, Event::Create(device));
    r->grads_ready_ = std::make_unique<Event>(std::move(ready));
    ASSIGN_OR_RETURN(Event reduced, Event::Create(device));
    r->reduced_ = std::make_unique<Event>(std::move(reduced));
  }
  r->buckets_.reserve(r->trainer_->GradientRanges().size() + 1);
  Replica* self = r.get();
  r->trainer_->SetGradientReadyHook(
      [self](const GradientRange& range) { return self->OnGradientsReady(range); });
  return r;
}

Replica::~Replica() = default;

namespace {

// A 64-bit digest of `bytes` of host memory (order-sensitive).
uint64_t Digest(const std::vector<char>& bytes) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ bytes.size();
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    h = MixBits64(h ^ word);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
  return MixBits64(h ^ tail);
}

}  // namespace

absl::StatusOr<bool> Replica::SyncInitialWeights() {
  const Device device = trainer_->backend()->device();
  const Stream& stream = on_cpu_ ? trainer_->backend()->stream() : *comm_stream_;
  const size_t bytes = trainer_->gradient_bytes();
  const int ranks = comm_->size();
  std::vector<char> host(bytes);
  // Every rank's digest of its parameters, gathered on every rank.
  auto gather_digests = [&]() -> absl::StatusOr<std::vector<uint64_t>> {
    RETURN_IF_ERROR(trainer_->Synchronize());
    RETURN_IF_ERROR(CopyBytes(host.data(), Device::Cpu(), trainer_->parameters(), device, bytes));
    const uint64_t digest = Digest(host);
    // The buffer: this rank's digest, then every rank's.
    char* send = static_cast<char*>(loss_buffer_.data());
    char* gathered = send + 8;
    RETURN_IF_ERROR(CopyBytes(send, device, &digest, Device::Cpu(), 8));
    RETURN_IF_ERROR(comm_->AllGather(send, gathered, 1, DType::kI64, stream));
    RETURN_IF_ERROR(stream.Synchronize());
    std::vector<uint64_t> digests(ranks);
    RETURN_IF_ERROR(CopyBytes(digests.data(), Device::Cpu(), gathered, device, 8 * ranks));
    return digests;
  };
  ASSIGN_OR_RETURN(std::vector<uint64_t> before, gather_digests());
  bool agreed = true;
  for (uint64_t d : before) agreed = agreed && d == before[0];

  RETURN_IF_ERROR(trainer_->Synchronize());
  RETURN_IF_ERROR(comm_->Broadcast(trainer_->parameters(), trainer_->parameters(),
                                   bytes / sizeof(float), DType::kF32, /*root=*/0, stream));
  RETURN_IF_ERROR(stream.Synchronize());
  RETURN_IF_ERROR(trainer_->ParametersChanged());

  ASSIGN_OR_RETURN(std::vector<uint64_t> after, gather_digests());
  std::vector<int> differ;
  for (int r = 0; r < ranks; ++r)
    if (after[r] != after[0]) differ.push_back(r);
  if (!differ.empty())
    return absl::InternalError(
        absl::StrCat("replicas hold different weights after the broadcast from rank 0: ranks ",
                     absl::StrJoin(differ, ", "), " differ"));
  return agreed;
}

absl::Status Replica::SetBatch(const float* images, const int32_t* labels) {
  return trainer_->SetBatch(images, labels);
}

absl::Status Replica::OnGradientsReady(const GradientRange& range) {
  if (range.offset + range.bytes != reported_end_)
    return absl::InternalError(
        absl::StrCat("gradient ranges are not contiguous in backward order: node ", range.node,
                     " covers [", range.offset, ", ", range.offset + range.bytes,
                     ") but the previous range began at ", reported_end_));
  reported_end_ = range.offset;
  if (unbucketed_end_ - range.offset < dp_.bucket_bytes) return absl::OkStatus();
  const GradientBucket bucket{range.offset, unbucketed_end_ - range.offset};
  unbucketed_end_ = range.offset;
  buckets_.push_back(bucket);
  return dp_.overlap ? StartBucket(bucket) : absl::OkStatus();
}

absl::Status Replica::StartBucket(const GradientBucket& bucket) {
  const size_t index = started_++;
  if (on_cpu_) return worker_->Start(bucket);
  // The bucket's gradients are enqueued on the compute stream: the
  // communication stream waits for them, then reduces in place.
  RETURN_IF_ERROR(grads_ready_->Record(trainer_->backend()->stream()));
  RETURN_IF_ERROR(comm_stream_->Wait(*grads_ready_));
  const bool traced = tracing_ && index < bucket_events_.size();
  if (traced) RETURN_IF_ERROR(bucket_events_[index].first.Record(*comm_stream_));
  char* data = static_cast<char*>(trainer_->gradients()) + bucket.offset;
  RETURN_IF_ERROR(comm_->AllReduce(data, data, bucket.bytes / sizeof(float), DType::kF32,
                                   ReduceOp::kAvg, *comm_stream_));
  if (traced) RETURN_IF_ERROR(bucket_events_[index].second.Record(*comm_stream_));
  return absl::OkStatus();
}

absl::Status Replica::FinishBuckets() {
  if (on_cpu_) return worker_->Finish();
  return reduced_->Record(*comm_stream_);
}

absl::Status Replica::Step() {
  const auto start = std::chrono::steady_clock::now();
  buckets_.clear();
  started_ = 0;
  reported_end_ = unbucketed_end_ = trainer_->gradient_bytes();
  absl::Status status = trainer_->ForwardBackward();
  if (status.ok() && unbucketed_end_ > 0) {
    const GradientBucket rest{0, unbucketed_end_};
    unbucketed_end_ = 0;
    buckets_.push_back(rest);
    if (dp_.overlap) status = StartBucket(rest);
  }
  if (status.ok() && !dp_.overlap)
    for (const GradientBucket& bucket : buckets_) {
      status = StartBucket(bucket);
      if (!status.ok()) break;
    }
  if (on_cpu_)
    arrival_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Whatever happened, wait for the buckets already handed to the worker
  // (on the CPU, the time backward's end waits for the last all-reduce).
  absl::Status finished =
      on_cpu_ ? trainer_->step_timer().HostSpan("(wait for all-reduce)", "all-reduce", "compute",
                                                [this] { return FinishBuckets(); })
              : FinishBuckets();
  RETURN_IF_ERROR(status);
  RETURN_IF_ERROR(finished);
  return trainer_->Update(on_cpu_ ? nullptr : reduced_.get());
}

absl::StatusOr<std::vector<TraceSlice>> Replica::TraceStep(
    std::chrono::steady_clock::time_point origin,
    const std::function<absl::Status(StepTimer&)>& before) {
  const size_t max_buckets = trainer_->GradientRanges().size() + 1;
  if (!on_cpu_ && bucket_events_.size() < max_buckets) {
    const Device device = trainer_->backend()->device();
    if (trace_origin_ == nullptr) {
      ASSIGN_OR_RETURN(Event e, Event::Create(device));
      trace_origin_ = std::make_unique<Event>(std::move(e));
    }
    while (bucket_events_.size() < max_buckets) {
      ASSIGN_OR_RETURN(Event start, Event::Create(device));
      ASSIGN_OR_RETURN(Event stop, Event::Create(device));
      bucket_events_.emplace_back(std::move(start), std::move(stop));
    }
  }
  RETURN_IF_ERROR(Synchronize());
  std::vector<TraceSlice> slices;
  RETURN_IF_ERROR(trainer_->BeginTrace(&slices, origin));
  StepTimer& timer = trainer_->step_timer();
  // The GPU's events are placed against this one, recorded now on the idle
  // compute stream.
  trace_origin_us_ = timer.Since(std::chrono::steady_clock::now());
  absl::Status status =
      on_cpu_ ? absl::OkStatus() : trace_origin_->Record(trainer_->backend()->stream());
  if (status.ok() && before) status = before(timer);
  tracing_ = true;
  if (on_cpu_) worker_->SetTracing(true);
  if (status.ok()) status = Step();
  if (status.ok()) status = Synchronize();
  tracing_ = false;
  if (on_cpu_) worker_->SetTracing(false);
  if (status.ok()) status = AddBucketSlices(timer);
  trainer_->EndTrace();
  RETURN_IF_ERROR(status);
  return slices;
}

absl::Status Replica::AddBucketSlices(StepTimer& timer) {
  for (size_t i = 0; i < started_ && i < buckets_.size(); ++i) {
    const GradientBucket& b = buckets_[i];
    TraceSlice slice;
    slice.name = absl::StrCat("(all-reduce ", b.bytes >> 10, " KiB)");
    slice.category = "all-reduce";
    slice.lane = "communication";
    slice.op = absl::StrCat("gradient bytes [", b.offset, ", ", b.offset + b.bytes, ")");
    slice.implementation = std::string(comm_->name());
    if (on_cpu_) {
      if (i >= worker_->times().size()) break;
      const auto& [begun, ended] = worker_->times()[i];
      slice.start_us = timer.Since(begun);
      slice.duration_us = std::chrono::duration<double, std::micro>(ended - begun).count();
    } else {
      ASSIGN_OR_RETURN(const double from_origin,
                       bucket_events_[i].first.SecondsSince(*trace_origin_));
      ASSIGN_OR_RETURN(const double seconds,
                       bucket_events_[i].second.SecondsSince(bucket_events_[i].first));
      slice.start_us = trace_origin_us_ + from_origin * 1e6;
      slice.duration_us = seconds * 1e6;
    }
    timer.AddSlice(std::move(slice));
  }
  return absl::OkStatus();
}

absl::StatusOr<float> Replica::GlobalLoss() {
  ASSIGN_OR_RETURN(float loss, trainer_->LastLoss());
  const Device device = trainer_->backend()->device();
  const Stream& stream = on_cpu_ ? trainer_->backend()->stream() : *comm_stream_;
  RETURN_IF_ERROR(CopyBytes(loss_buffer_.data(), device, &loss, Device::Cpu(), sizeof(float)));
  RETURN_IF_ERROR(comm_->AllReduce(loss_buffer_.data(), loss_buffer_.data(), 1, DType::kF32,
                                   ReduceOp::kAvg, stream));
  RETURN_IF_ERROR(stream.Synchronize());
  RETURN_IF_ERROR(CopyBytes(&loss, Device::Cpu(), loss_buffer_.data(), device, sizeof(float)));
  return loss;
}

absl::Status Replica::Synchronize() {
  if (comm_stream_ != nullptr) RETURN_IF_ERROR(comm_stream_->Synchronize());
  return trainer_->Synchronize();
}

}  // namespace cnnbench
