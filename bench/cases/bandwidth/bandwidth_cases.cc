// The bandwidth cases (see bandwidth_cases.h).
#include "bench/cases/bandwidth/bandwidth_cases.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/status.h"

namespace cnnbench::bench {
namespace {

constexpr double kScalar = 3.0;  // triad's q

// b[i] and c[i]: small integers, so b + q c is exact in fp64 and checkable.
double B(size_t i) { return static_cast<double>(i % 1000); }
double C(size_t i) { return static_cast<double>(i % 7); }

class CpuBandwidthWorkload : public Workload {
 public:
  CpuBandwidthWorkload(std::string kind, int64_t bytes, int threads)
      : kind_(std::move(kind)), bytes_(bytes), threads_(threads) {}

  absl::Status Prepare() {
    const size_t n = static_cast<size_t>(bytes_) / sizeof(double);
    for (Buffer* array : {&a_, &b_, &c_}) {
      ASSIGN_OR_RETURN(*array, Buffer::Allocate(Device::Cpu(), bytes_));
    }
    double* a = A();
    double* b = Bv();
    double* c = Cv();
    int ran = 0;
    // First touch in the timed loops' static schedule: each thread's part
    // of every array is on its own NUMA node.
#pragma omp parallel num_threads(threads_) reduction(+ : ran)
    {
      ran += 1;
#pragma omp for schedule(static)
      for (size_t i = 0; i < n; ++i) {
        a[i] = -1;
        b[i] = B(i);
        c[i] = C(i);
      }
    }
    if (ran != threads_)
      return absl::FailedPreconditionError(
          absl::StrCat("the OpenMP team had ", ran, " thread(s), not the ", threads_,
                       " the case names (OMP_THREAD_LIMIT or OMP_DYNAMIC?)"));
    return Run();  // one untimed iteration
  }

  const Stream& stream() const override { return stream_; }

  absl::Status Run() override {
    const size_t n = static_cast<size_t>(bytes_) / sizeof(double);
    double* __restrict a = A();
    const double* __restrict b = Bv();
    const double* __restrict c = Cv();
    if (kind_ == "copy") {
#pragma omp parallel for num_threads(threads_) schedule(static)
      for (size_t i = 0; i < n; ++i) a[i] = b[i];
    } else {
#pragma omp parallel for num_threads(threads_) schedule(static)
      for (size_t i = 0; i < n; ++i) a[i] = b[i] + kScalar * c[i];
    }
    return absl::OkStatus();
  }

  absl::Status Report(benchmark::State& state) override {
    const size_t n = static_cast<size_t>(bytes_) / sizeof(double);
    const double* a = A();
    for (size_t i = 0; i < n; ++i) {
      const double want = kind_ == "copy" ? B(i) : B(i) + kScalar * C(i);
      if (a[i] != want)
        return absl::InternalError(
            absl::StrCat(kind_, " wrong at element ", i, ": ", a[i], " vs ", want));
    }
    state.counters["bytes_per_second"] = benchmark::Counter(
        BandwidthBytesCounted(kind_, bytes_), benchmark::Counter::kIsIterationInvariantRate);
    state.SetLabel(absl::StrCat("STREAM ", kind_, ", fp64, ", threads_,
                                " thread(s), static schedule; counted: ",
                                kind_ == "copy" ? "read + write" : "2 reads + write",
                                " (write-allocate not counted), result checked"));
    return absl::OkStatus();
  }

 private:
  double* A() const { return static_cast<double*>(a_.data()); }
  double* Bv() const { return static_cast<double*>(b_.data()); }
  double* Cv() const { return static_cast<double*>(c_.data()); }

  std::string kind_;
  int64_t bytes_;
  int threads_;
  Buffer a_, b_, c_;
  Stream stream_ = Stream::Cpu();
};

class CudaCopyWorkload : public Workload {
 public:
  CudaCopyWorkload(std::string kind, Device device, int64_t bytes)
      : kind_(std::move(kind)), device_(device), bytes_(bytes) {}

  absl::Status Prepare() {
    ASSIGN_OR_RETURN(stream_, Stream::Create(device_));
    const size_t n = static_cast<size_t>(bytes_);
    // The source holds a pattern (written through the host); the
    // destination starts as something else.
    std::vector<unsigned char> pattern(n);
    for (size_t i = 0; i < n; ++i) pattern[i] = static_cast<unsigned char>(i * 131 + 7);
    const bool src_host = kind_ == "h2d";
    const bool dst_host = kind_ == "d2h";
    ASSIGN_OR_RETURN(src_, src_host ? Buffer::AllocatePinnedHost(n) : Buffer::Allocate(device_, n));
    ASSIGN_OR_RETURN(dst_, dst_host ? Buffer::AllocatePinnedHost(n) : Buffer::Allocate(device_, n));
    RETURN_IF_ERROR(CopyBytes(src_.data(), src_.device(), pattern.data(), Device::Cpu(), n));
    RETURN_IF_ERROR(Memset(dst_.data(), dst_.device(), 0xEE, n));
    RETURN_IF_ERROR(Run());
    return stream_.Synchronize();
  }

  const Stream& stream() const override { return stream_; }
  absl::Status Run() override {
    return CopyAsync(dst_.data(), src_.data(), static_cast<size_t>(bytes_), stream_);
  }

  absl::Status Report(benchmark::State& state) override {
    RETURN_IF_ERROR(stream_.Synchronize());
    const size_t n = static_cast<size_t>(bytes_);
    std::vector<unsigned char> src(n), dst(n);
    RETURN_IF_ERROR(CopyBytes(src.data(), Device::Cpu(), src_.data(), src_.device(), n));
    RETURN_IF_ERROR(CopyBytes(dst.data(), Device::Cpu(), dst_.data(), dst_.device(), n));
    if (std::memcmp(src.data(), dst.data(), n) != 0) {
      size_t i = 0;
      while (src[i] == dst[i]) ++i;
      return absl::InternalError(absl::StrCat(kind_, " copy wrong at byte ", i, ": ",
                                              static_cast<int>(dst[i]), " vs ",
                                              static_cast<int>(src[i])));
    }
    state.counters["bytes_per_second"] = benchmark::Counter(
        BandwidthBytesCounted(kind_, bytes_), benchmark::Counter::kIsIterationInvariantRate);
    state.SetLabel(absl::StrCat("cudaMemcpyAsync ",
                                kind_ == "d2d"   ? "device to device"
                                : kind_ == "h2d" ? "pinned host to device"
                                                 : "device to pinned host",
                                " on ", device_.ToString(),
                                "; counted: ", kind_ == "d2d" ? "read + write" : "the bytes copied",
                                ", result checked"));
    return absl::OkStatus();
  }

 private:
  std::string kind_;
  Device device_;
  int64_t bytes_;
  Stream stream_ = Stream::Cpu();
  Buffer src_, dst_;
};

}  // namespace

double BandwidthBytesCounted(absl::string_view kind, int64_t bytes) {
  const double s = static_cast<double>(bytes);
  if (kind == "copy" || kind == "d2d") return 2 * s;
  if (kind == "triad") return 3 * s;
  return s;  // h2d, d2h
}

absl::StatusOr<std::unique_ptr<Workload>> PrepareBandwidthWorkload(absl::string_view kind,
                                                                   absl::string_view device,
                                                                   int64_t bytes, int threads) {
  if (bytes <= 0) return absl::InvalidArgumentError(absl::StrCat("bytes:", bytes, " is not > 0"));
  if (threads < 1)
    return absl::InvalidArgumentError(absl::StrCat("threads:", threads, " is not >= 1"));
  if (kind == "copy" || kind == "triad") {
    if (device != "cpu")
      return absl::InvalidArgumentError(absl::StrCat(kind, " runs on the cpu, not ", device));
    if (bytes % sizeof(double) != 0)
      return absl::InvalidArgumentError(
          absl::StrCat("bytes:", bytes, " is not a whole number of fp64 elements"));
    auto w = std::make_unique<CpuBandwidthWorkload>(std::string(kind), bytes, threads);
    RETURN_IF_ERROR(w->Prepare());
    return std::unique_ptr<Workload>(std::move(w));
  }
  if (kind != "d2d" && kind != "h2d" && kind != "d2h")
    return absl::InvalidArgumentError(
        absl::StrCat("no bandwidth kind '", kind, "' (copy, triad, d2d, h2d, d2h)"));
  ASSIGN_OR_RETURN(const Device dev, Device::Parse(device));
  if (!dev.is_cuda())
    return absl::InvalidArgumentError(absl::StrCat(kind, " runs on a GPU, not ", device));
  if (dev.ordinal >= CudaDeviceCount())
    return absl::UnimplementedError(absl::StrCat("unsupported: ", dev.ToString(),
                                                 " is not present (", CudaDeviceCount(),
                                                 " GPU(s) visible)"));
  auto w = std::make_unique<CudaCopyWorkload>(std::string(kind), dev, bytes);
  RETURN_IF_ERROR(w->Prepare());
  return std::unique_ptr<Workload>(std::move(w));
}

}  // namespace cnnbench::bench
