// A traced training step as a Chrome trace event file (the JSON array
// format that Perfetto and chrome://tracing open): one lane per stream the
// step uses, one complete ("X") slice per layer and pass, with the layer's
// descriptor and implementation as arguments, and the edges' work (input
// reorders, gradient sums and casts) and the optimizer update as slices of
// their own.
#ifndef CNNBENCH_TRAIN_TRACE_H_
#define CNNBENCH_TRAIN_TRACE_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/device.h"
#include "core/gpu_runtime.h"
#include "train/step_plan.h"

namespace cnnbench {

struct TraceSlice {
  std::string name;      // the layer's name, or "(edges)", "(update)", "(all-reduce ...)"
  std::string category;  // "forward", "backward", "update", "input", "all-reduce"
  std::string lane;      // "compute", "upload", "communication"
  std::string op;        // the descriptor string, where the slice is a layer's
  std::string implementation;
  double start_us = 0;  // since the traced step began
  double duration_us = 0;
};

// Times the layer work of a plan's steps on a stream, for the profile sums
// (LayerTime) and, while a trace is on, as trace slices (each starting
// when the host enqueued it, the previous one having been waited for, and
// lasting what the stream's timer measured; an NVTX range on GPUs). The
// Trainer and the Inferencer each hold one.
class StepTimer {
 public:
  // Profiling: every Time() call is timed and summed.
  absl::Status SetProfiling(bool on, const Stream& stream);
  // From now on every Time() and HostSpan() call also becomes a slice in
  // `*sink`, its start measured from `origin` (replicas traced together
  // share one); until StopTrace.
  absl::Status StartTrace(std::vector<TraceSlice>* sink, const Stream& stream,
                          std::chrono::steady_clock::time_point origin);
  absl::Status StartTrace(std::vector<TraceSlice>* sink, const Stream& stream) {
    return StartTrace(sink, stream, std::chrono::steady_clock::now());
  }
  void StopTrace() { trace_ = nullptr; }
  bool on() const { return profiling_ || trace_ != nullptr; }
  bool tracing() const { return trace_ != nullptr; }
  std::chrono::steady_clock::time_point origin() const { return origin_; }

  // Runs `work`, which the host does itself and which has finished when it
  // returns (waiting for the input pipeline's next batch, copying it into
  // the device's input slot, waiting for the gradients' all-reduce); while
  // tracing, as a slice `name` on `lane` timed by the host's clock. Never
  // in the profile sums.
  template <typename Work>
  absl::Status HostSpan(const char* name, const char* category, const char* lane, Work&& work) {
    if (trace_ == nullptr) return work();
    const auto begun = std::chrono::steady_clock::now();
    absl::Status status = work();
    AddSlice({name, category, lane, "", "", Since(begun),
              std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - begun)
                  .count()});
    return status;
  }
  // Microseconds from the trace's origin to `t`.
  double Since(std::chrono::steady_clock::time_point t) const {
    return std::chrono::duration<double, std::micro>(t - origin_).count();
  }
  // Adds a slice timed elsewhere (the communication thread's buckets), while tracing.
  void AddSlice(TraceSlice slice) {
    if (trace_ != nullptr) trace_->push_back(std::move(slice));
  }

  // Runs `work`; when on, between the timer's start and stop, adding the
  // seconds to `time`'s forward or backward sum and (tracing) a slice
  // named after `time` ("(name)" for the executor's own work, where
  // `executor` is set) in `category` ("forward", "backward", "update").
  // A template, not a std::function: wrapping the step's lambdas would
  // allocate every step.
  template <typename Work>
  absl::Status Time(LayerTime& time, bool forward, bool executor, const char* category,
                    Work&& work) {
    if (!on()) return work();
    const auto begun = std::chrono::steady_clock::now();
    if (trace_ != nullptr) gpu::RangePush(time.name.c_str());
    absl::Status started = timer_->Start();
    if (!started.ok()) return started;
    absl::Status status = work();
    absl::Status stopped = timer_->Stop();
    if (!stopped.ok()) return stopped;
    absl::StatusOr<double> seconds = timer_->ElapsedSeconds();
    if (trace_ != nullptr) gpu::RangePop();
    if (!seconds.ok()) return seconds.status();
    (forward ? time.forward_seconds : time.backward_seconds) += *seconds;
    if (trace_ != nullptr) Record(time, executor, category, begun, *seconds);
    return status;
  }

 private:
  absl::Status EnsureTimer(const Stream& stream);
  void Record(const LayerTime& time, bool executor, const char* category,
              std::chrono::steady_clock::time_point begun, double seconds);

  bool profiling_ = false;
  std::unique_ptr<Timer> timer_;
  std::vector<TraceSlice>* trace_ = nullptr;
  std::chrono::steady_clock::time_point origin_;
};

// One process row of a trace: a replica's slices (or the only ones).
struct TraceProcess {
  std::string name;  // the case, e.g. "train/resnet50/...", and the rank where there are several
  std::vector<TraceSlice> slices;
};

// The trace file's text: each process's name and lane names as metadata
// (lanes numbered in order of first use, the same numbers in every
// process), then every slice.
std::string ChromeTraceJson(const std::vector<TraceProcess>& processes);
inline std::string ChromeTraceJson(const std::vector<TraceSlice>& slices,
                                   const std::string& process) {
  return ChromeTraceJson({TraceProcess{process, slices}});
}

// Whether a trace can be written at `path`, checked before anything is
// measured: a file name (not a folder, not ending in '/'), not an existing
// folder or special file (a device such as /dev/full), in a folder that
// exists and can be written. `flag` names the option in the error
// ("--trace_file").
absl::Status CheckTraceFilePath(const std::string& path, const std::string& flag);

// Writes ChromeTraceJson to `path`; errors name the file and the system's reason.
absl::Status WriteChromeTrace(const std::string& path, const std::vector<TraceProcess>& processes);
inline absl::Status WriteChromeTrace(const std::string& path, const std::vector<TraceSlice>& slices,
                                     const std::string& process) {
  return WriteChromeTrace(path, {TraceProcess{process, slices}});
}

}  // namespace cnnbench

#endif  // CNNBENCH_TRAIN_TRACE_H_
