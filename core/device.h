// Devices (cpu, cuda:N), device memory, streams and events, and a timer that
// uses device events on GPUs and a steady clock on the CPU.
#ifndef CNNBENCH_CORE_DEVICE_H_
#define CNNBENCH_CORE_DEVICE_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cnnbench {

enum class DeviceType { kCpu, kCuda };

struct Device {
  DeviceType type = DeviceType::kCpu;
  int ordinal = 0;

  static Device Cpu() { return {DeviceType::kCpu, 0}; }
  static Device Cuda(int ordinal) { return {DeviceType::kCuda, ordinal}; }
  bool is_cpu() const { return type == DeviceType::kCpu; }
  bool is_cuda() const { return type == DeviceType::kCuda; }

  std::string ToString() const;  // "cpu" or "cuda:0"
  static absl::StatusOr<Device> Parse(absl::string_view text);

  bool operator==(const Device& o) const { return type == o.type && ordinal == o.ordinal; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

// True when this build has CUDA compiled in (not whether a GPU is present).
bool CudaBuiltIn();
// Number of usable GPUs: 0 when CUDA is not built in, no driver or no device.
int CudaDeviceCount();
// OK when `device` exists here; a clear error otherwise.
absl::Status CheckDevice(const Device& device);
// Bytes `device` can still give: on the CPU the kernel's MemAvailable, or
// the cgroup's remaining limit when that is smaller, plus the free bytes
// this process's malloc holds (HeldFreeHeapBytes); on a GPU the free device
// memory.
absl::StatusOr<size_t> AvailableMemory(const Device& device);
// Bytes freed by this process that glibc's malloc keeps in its arenas
// (mallinfo2's fordblks; 0 elsewhere): reused by the next allocations, so
// counted as available.
size_t HeldFreeHeapBytes();
// "1.50 GiB", "12.0 MiB", "512 B": for messages.
std::string FormatBytes(size_t bytes);

// Owning device (or host) memory. Host memory is 64-byte aligned; `pinned`
// host memory is page-locked when a GPU is present. Allocation failures are
// OOM errors.
class Buffer {
 public:
  Buffer() = default;
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  static absl::StatusOr<Buffer> Allocate(const Device& device, size_t bytes);
  static absl::StatusOr<Buffer> AllocatePinnedHost(size_t bytes);

  void* data() const { return data_; }
  size_t size() const { return bytes_; }
  const Device& device() const { return device_; }

 private:
  void Release();
  enum class Kind { kNone, kHost, kPinned, kCuda };
  void* data_ = nullptr;
  size_t bytes_ = 0;
  Device device_;
  Kind kind_ = Kind::kNone;
};

// Copies `bytes` between host and/or device memory, synchronously (on the
// GPU through the per-thread default stream, never the legacy one).
absl::Status CopyBytes(void* dst, const Device& dst_device, const void* src,
                       const Device& src_device, size_t bytes);
// Fills `bytes` of `device` memory with the byte `value`, synchronously.
absl::Status Memset(void* dst, const Device& device, int value, size_t bytes);

class Stream;
class Event;
// Enqueued on `stream`: on a GPU they return before the work is done (host
// memory must stay valid, and is only truly asynchronous when pinned); on the
// CPU they run at once on the calling thread.
absl::Status CopyAsync(void* dst, const void* src, size_t bytes, const Stream& stream);
absl::Status MemsetAsync(void* dst, int value, size_t bytes, const Stream& stream);

// An ordered queue of work on a device: a cudaStream_t on GPUs, a no-op on
// the CPU (CPU work runs on the calling thread).
class Stream {
 public:
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  static absl::StatusOr<Stream> Create(const Device& device);
  // The CPU's stream (cannot fail).
  static Stream Cpu() { return Stream(Device::Cpu(), nullptr); }
  absl::Status Synchronize() const;
  // Work enqueued after this call waits until `event` (recorded on any stream
  // of the same device) completes. On the CPU work is already in order.
  absl::Status Wait(const Event& event) const;

  const Device& device() const { return device_; }
  // The cudaStream_t, or nullptr on the CPU.
  void* native_handle() const { return handle_; }

 private:
  Stream(Device device, void* handle) : device_(device), handle_(handle) {}
  Device device_;
  void* handle_ = nullptr;
};

// A point in a stream's work: a cudaEvent_t on GPUs, a steady-clock reading
// on the CPU.
class Event {
 public:
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  static absl::StatusOr<Event> Create(const Device& device);
  absl::Status Record(const Stream& stream);
  absl::Status Synchronize() const;
  // Seconds from `start` to this event (both recorded and complete).
  absl::StatusOr<double> SecondsSince(const Event& start) const;
  const Device& device() const { return device_; }
  // The cudaEvent_t, or nullptr on the CPU.
  void* native_handle() const { return handle_; }

 private:
  explicit Event(Device device, void* handle) : device_(device), handle_(handle) {}
  Device device_;
  void* handle_ = nullptr;
  std::chrono::steady_clock::time_point time_;
};

// A stream's work recorded once and replayed as one launch (a CUDA graph):
// between BeginCapture and End, work enqueued on the stream is recorded, not
// run. GPUs only: on the CPU, BeginCapture is unsupported.
class CapturedWork {
 public:
  CapturedWork() = default;
  ~CapturedWork();
  CapturedWork(CapturedWork&& other) noexcept;
  CapturedWork& operator=(CapturedWork&& other) noexcept;
  CapturedWork(const CapturedWork&) = delete;
  CapturedWork& operator=(const CapturedWork&) = delete;

  static absl::Status BeginCapture(const Stream& stream);
  // Ends the capture begun on `stream` and makes the work replayable.
  static absl::StatusOr<CapturedWork> EndCapture(const Stream& stream);
  // Begins a capture, runs `enqueue`, and ends the capture whatever happened
  // (the stream is usable again). Errors say which part failed: "capturing
  // <what> as a CUDA graph: ..." or "enqueuing <what> inside a CUDA graph
  // capture: ...", with the code kept.
  template <typename Enqueue>
  static absl::StatusOr<CapturedWork> Capture(const Stream& stream, absl::string_view what,
                                              Enqueue&& enqueue);
  // Enqueues one replay on `stream`.
  absl::Status Launch(const Stream& stream) const;
  bool valid() const { return exec_ != nullptr; }

 private:
  void* exec_ = nullptr;  // cudaGraphExec_t
};

template <typename Enqueue>
absl::StatusOr<CapturedWork> CapturedWork::Capture(const Stream& stream, absl::string_view what,
                                                   Enqueue&& enqueue) {
  auto failed = [what](const char* how, const absl::Status& s) {
    return absl::Status(
        s.code(), std::string(how) + std::string(what) +
                      (how[0] == 'c' ? " as a CUDA graph: " : " inside a CUDA graph capture: ") +
                      std::string(s.message()));
  };
  absl::Status begun = BeginCapture(stream);
  if (!begun.ok()) return failed("capturing ", begun);
  absl::Status enqueued = enqueue();
  absl::StatusOr<CapturedWork> captured = EndCapture(stream);
  if (!enqueued.ok()) return failed("enqueuing ", enqueued);
  if (!captured.ok()) return failed("capturing ", captured.status());
  return captured;
}

// Times work on a stream: device events on GPUs, the steady clock on the CPU.
class Timer {
 public:
  static absl::StatusOr<Timer> Create(const Stream& stream);
  absl::Status Start();
  // An error unless Start came first.
  absl::Status Stop();
  // Waits for the stop event and returns the seconds between Start and Stop;
  // an error before a Start/Stop pair.
  absl::StatusOr<double> ElapsedSeconds() const;

 private:
  enum class State { kIdle, kStarted, kStopped };
  Timer(const Stream* stream, Event start, Event stop)
      : stream_(stream), start_(std::move(start)), stop_(std::move(stop)) {}
  const Stream* stream_;
  Event start_;
  Event stop_;
  State state_ = State::kIdle;
};

}  // namespace cnnbench

#endif  // CNNBENCH_CORE_DEVICE_H_
