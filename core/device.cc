#include "core/device.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <malloc.h>
#include <optional>
#include <cstring>
#include <new>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "core/gpu_runtime.h"
#include "core/status.h"

namespace cnnbench {

std::string Device::ToString() const {
  return is_cpu() ? "cpu" : absl::StrCat("cuda:", ordinal);
}

absl::StatusOr<Device> Device::Parse(absl::string_view text) {
  if (text == "cpu") return Device::Cpu();
  absl::string_view rest = text;
  int ordinal = 0;
  if (rest == "cuda" || rest == "gpu") return Device::Cuda(0);
  if ((absl::ConsumePrefix(&rest, "cuda:") || absl::ConsumePrefix(&rest, "gpu:")) &&
      absl::SimpleAtoi(rest, &ordinal) && ordinal >= 0)
    return Device::Cuda(ordinal);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown device '", text, "' (expected cpu or cuda:N)"));
}

bool CudaBuiltIn() { return gpu::BuiltIn(); }
int CudaDeviceCount() { return gpu::DeviceCount(); }

absl::Status CheckDevice(const Device& device) {
  if (device.is_cpu()) return absl::OkStatus();
  if (!gpu::BuiltIn())
    return absl::FailedPreconditionError(
        absl::StrCat(device.ToString(), ": this build has no CUDA"));
  const int count = gpu::DeviceCount();
  if (device.ordinal >= count)
    return absl::FailedPreconditionError(
        absl::StrCat(device.ToString(), ": not present (", count, " GPU(s) visible)"));
  return absl::OkStatus();
}

namespace {

// A number from a one-value file such as cgroup's memory.max ("max": none).
std::optional<size_t> ReadSizeFile(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return std::nullopt;
  size_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) return std::nullopt;
  return value;
}

}  // namespace

size_t HeldFreeHeapBytes() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  return mallinfo2().fordblks;
#else
  return 0;
#endif
}

absl::StatusOr<size_t> AvailableMemory(const Device& device) {
  if (device.is_cuda()) {
    RETURN_IF_ERROR(CheckDevice(device));
    size_t free_bytes = 0, total_bytes = 0;
    RETURN_IF_ERROR(gpu::MemGetInfo(device.ordinal, &free_bytes, &total_bytes));
    return free_bytes;
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  size_t kib = 0;
  std::optional<size_t> available;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);
    if (key == "MemAvailable:") available = kib * 1024;
  }
  if (!available)
    return absl::UnavailableError("cannot read MemAvailable from /proc/meminfo");
  // A container's memory limit (cgroup v2) may be tighter than the host's.
  const std::optional<size_t> limit = ReadSizeFile("/sys/fs/cgroup/memory.max");
  const std::optional<size_t> used = ReadSizeFile("/sys/fs/cgroup/memory.current");
  if (limit && used) available = std::min(*available, *limit > *used ? *limit - *used : 0);
  // Memory this process freed but malloc keeps (an earlier case's arena,
  // under MALLOC_TRIM_THRESHOLD_/MALLOC_MMAP_THRESHOLD_ that keep freed
  // memory mapped) is not in MemAvailable, yet the next allocation reuses it.
  return *available + HeldFreeHeapBytes();
}

std::string FormatBytes(size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return absl::StrCat(bytes, " B");
  return absl::StrFormat("%.*f %s", value < 10 ? 2 : value < 100 ? 1 : 0, value, units[unit]);
}

// ---- Buffer ----

Buffer::~Buffer() { Release(); }

Buffer::Buffer(Buffer&& other) noexcept { *this = std::move(other); }

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    device_ = other.device_;
    kind_ = std::exchange(other.kind_, Kind::kNone);
  }
  return *this;
}

void Buffer::Release() {
  switch (kind_) {
    case Kind::kHost: std::free(data_); break;
    case Kind::kPinned: gpu::FreeHost(data_); break;
    case Kind::kCuda: gpu::Free(data_); break;
    case Kind::kNone: break;
  }
  data_ = nullptr;
  bytes_ = 0;
  kind_ = Kind::kNone;
}

absl::StatusOr<Buffer> Buffer::Allocate(const Device& device, size_t bytes) {
  Buffer buffer;
  buffer.bytes_ = bytes;
  buffer.device_ = device;
  if (device.is_cpu()) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    buffer.data_ = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
    if (buffer.data_ == nullptr)
      return OutOfMemoryError(absl::StrCat("host allocation of ", bytes, " bytes"));
    buffer.kind_ = Kind::kHost;
    return buffer;
  }
  RETURN_IF_ERROR(CheckDevice(device));
  ASSIGN_OR_RETURN(buffer.data_, gpu::Malloc(device.ordinal, bytes == 0 ? 1 : bytes));
  buffer.kind_ = Kind::kCuda;
  return buffer;
}

absl::StatusOr<Buffer> Buffer::AllocatePinnedHost(size_t bytes) {
  if (gpu::DeviceCount() == 0) return Allocate(Device::Cpu(), bytes);
  Buffer buffer;
  ASSIGN_OR_RETURN(buffer.data_, gpu::MallocHost(bytes == 0 ? 1 : bytes));
  buffer.bytes_ = bytes;
  buffer.kind_ = Kind::kPinned;
  return buffer;
}

absl::Status CopyBytes(void* dst, const Device& dst_device, const void* src,
                       const Device& src_device, size_t bytes) {
  if (dst_device.is_cpu() && src_device.is_cpu()) {
    if (bytes > 0) std::memcpy(dst, src, bytes);
    return absl::OkStatus();
  }
  return gpu::Memcpy(dst, src, bytes);
}

absl::Status Memset(void* dst, const Device& device, int value, size_t bytes) {
  if (device.is_cpu()) {
    if (bytes > 0) std::memset(dst, value, bytes);
    return absl::OkStatus();
  }
  return gpu::Memset(dst, value, bytes);
}

absl::Status CopyAsync(void* dst, const void* src, size_t bytes, const Stream& stream) {
  if (stream.device().is_cpu()) {
    if (bytes > 0 && dst != src) std::memcpy(dst, src, bytes);
    return absl::OkStatus();
  }
  return gpu::MemcpyAsync(dst, src, bytes, stream.native_handle());
}

absl::Status MemsetAsync(void* dst, int value, size_t bytes, const Stream& stream) {
  if (stream.device().is_cpu()) {
    if (bytes > 0) std::memset(dst, value, bytes);
    return absl::OkStatus();
  }
  return gpu::MemsetAsync(dst, value, bytes, stream.native_handle());
}

// ---- Stream ----

Stream::~Stream() {
  if (handle_ != nullptr) gpu::StreamDestroy(handle_);
}

Stream::Stream(Stream&& other) noexcept
    : device_(other.device_), handle_(std::exchange(other.handle_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) gpu::StreamDestroy(handle_);
    device_ = other.device_;
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

absl::StatusOr<Stream> Stream::Create(const Device& device) {
  if (device.is_cpu()) return Stream(device, nullptr);
  RETURN_IF_ERROR(CheckDevice(device));
  ASSIGN_OR_RETURN(void* handle, gpu::StreamCreate(device.ordinal));
  return Stream(device, handle);
}

absl::Status Stream::Synchronize() const {
  if (device_.is_cpu()) return absl::OkStatus();
  return gpu::StreamSynchronize(handle_);
}

absl::Status Stream::Wait(const Event& event) const {
  if (event.device() != device_)
    return absl::InvalidArgumentError(absl::StrCat("a stream of ", device_.ToString(),
                                                   " cannot wait for an event of ",
                                                   event.device().ToString()));
  if (device_.is_cpu()) return absl::OkStatus();
  return gpu::StreamWaitEvent(handle_, event.native_handle());
}

// ---- Event ----

Event::~Event() {
  if (handle_ != nullptr) gpu::EventDestroy(handle_);
}

Event::Event(Event&& other) noexcept
    : device_(other.device_), handle_(std::exchange(other.handle_, nullptr)), time_(other.time_) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) gpu::EventDestroy(handle_);
    device_ = other.device_;
    handle_ = std::exchange(other.handle_, nullptr);
    time_ = other.time_;
  }
  return *this;
}

absl::StatusOr<Event> Event::Create(const Device& device) {
  if (device.is_cpu()) return Event(device, nullptr);
  RETURN_IF_ERROR(CheckDevice(device));
  ASSIGN_OR_RETURN(void* handle, gpu::EventCreate(device.ordinal));
  return Event(device, handle);
}

absl::Status Event::Record(const Stream& stream) {
  if (stream.device() != device_)
    return absl::InvalidArgumentError(absl::StrCat("event on ", device_.ToString(),
                                                   " recorded on a stream of ",
                                                   stream.device().ToString()));
  if (device_.is_cpu()) {
    time_ = std::chrono::steady_clock::now();
    return absl::OkStatus();
  }
  return gpu::EventRecord(handle_, stream.native_handle());
}

absl::Status Event::Synchronize() const {
  if (device_.is_cpu()) return absl::OkStatus();
  return gpu::EventSynchronize(handle_);
}

absl::StatusOr<double> Event::SecondsSince(const Event& start) const {
  if (device_.is_cpu()) return std::chrono::duration<double>(time_ - start.time_).count();
  return gpu::EventElapsedSeconds(start.handle_, handle_);
}

// ---- CapturedWork ----

CapturedWork::~CapturedWork() {
  if (exec_ != nullptr) gpu::GraphDestroy(exec_);
}

CapturedWork::CapturedWork(CapturedWork&& other) noexcept
    : exec_(std::exchange(other.exec_, nullptr)) {}

CapturedWork& CapturedWork::operator=(CapturedWork&& other) noexcept {
  if (this != &other) {
    if (exec_ != nullptr) gpu::GraphDestroy(exec_);
    exec_ = std::exchange(other.exec_, nullptr);
  }
  return *this;
}

absl::Status CapturedWork::BeginCapture(const Stream& stream) {
  if (stream.device().is_cpu())
    return absl::UnimplementedError("unsupported: capturing CPU work (CUDA graphs are GPU-only)");
  return gpu::StreamBeginCapture(stream.native_handle());
}

absl::StatusOr<CapturedWork> CapturedWork::EndCapture(const Stream& stream) {
  if (stream.device().is_cpu())
    return absl::UnimplementedError("unsupported: capturing CPU work (CUDA graphs are GPU-only)");
  CapturedWork work;
  ASSIGN_OR_RETURN(work.exec_, gpu::StreamEndCapture(stream.native_handle()));
  return work;
}

absl::Status CapturedWork::Launch(const Stream& stream) const {
  if (exec_ == nullptr) return absl::FailedPreconditionError("CapturedWork::Launch: nothing captured");
  return gpu::GraphLaunch(exec_, stream.native_handle());
}

// ---- Timer ----

absl::StatusOr<Timer> Timer::Create(const Stream& stream) {
  ASSIGN_OR_RETURN(Event start, Event::Create(stream.device()));
  ASSIGN_OR_RETURN(Event stop, Event::Create(stream.device()));
  return Timer(&stream, std::move(start), std::move(stop));
}

absl::Status Timer::Start() {
  RETURN_IF_ERROR(start_.Record(*stream_));
  state_ = State::kStarted;
  return absl::OkStatus();
}

absl::Status Timer::Stop() {
  if (state_ != State::kStarted)
    return absl::FailedPreconditionError("Timer::Stop without a Start before it");
  RETURN_IF_ERROR(stop_.Record(*stream_));
  state_ = State::kStopped;
  return absl::OkStatus();
}

absl::StatusOr<double> Timer::ElapsedSeconds() const {
  if (state_ != State::kStopped)
    return absl::FailedPreconditionError(
        "Timer::ElapsedSeconds before a Start and Stop were recorded");
  RETURN_IF_ERROR(stop_.Synchronize());
  return stop_.SecondsSince(start_);
}

}  // namespace cnnbench
