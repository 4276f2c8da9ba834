// The thin layer over the CUDA runtime that core/ uses. Implemented by
// gpu_runtime_cuda.cc when CUDA is built in and by gpu_runtime_none.cc
// otherwise, so that nothing above core/ needs an #ifdef for device basics.
#ifndef CNNBENCH_CORE_GPU_RUNTIME_H_
#define CNNBENCH_CORE_GPU_RUNTIME_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cnnbench::gpu {

bool BuiltIn();
// 0 when there is no driver or no device (any error there means "no GPU").
int DeviceCount();
absl::Status SetDevice(int ordinal);

absl::StatusOr<void*> Malloc(int ordinal, size_t bytes);
void Free(void* ptr);
absl::StatusOr<void*> MallocHost(size_t bytes);  // page-locked
void FreeHost(void* ptr);
// Synchronous copy and fill on the per-thread default stream (never the
// legacy default stream, which would serialise with every other stream).
absl::Status Memcpy(void* dst, const void* src, size_t bytes);  // any direction
absl::Status Memset(void* dst, int value, size_t bytes);
// Enqueued on `stream` (a cudaStream_t); they return before the work is done.
absl::Status MemcpyAsync(void* dst, const void* src, size_t bytes, void* stream);
absl::Status MemsetAsync(void* dst, int value, size_t bytes, void* stream);

// Free and total bytes of device memory (cudaMemGetInfo).
absl::Status MemGetInfo(int ordinal, size_t* free_bytes, size_t* total_bytes);

absl::StatusOr<void*> StreamCreate(int ordinal);
void StreamDestroy(void* stream);
absl::Status StreamSynchronize(void* stream);
// Work enqueued on `stream` after this waits for `event` to complete.
absl::Status StreamWaitEvent(void* stream, void* event);

// Stream capture into a CUDA graph, instantiated for replay.
absl::Status StreamBeginCapture(void* stream);
absl::StatusOr<void*> StreamEndCapture(void* stream);  // the cudaGraphExec_t
absl::Status GraphLaunch(void* exec, void* stream);
void GraphDestroy(void* exec);

absl::StatusOr<void*> EventCreate(int ordinal);
void EventDestroy(void* event);
absl::Status EventRecord(void* event, void* stream);
absl::Status EventSynchronize(void* event);
absl::StatusOr<double> EventElapsedSeconds(void* start, void* stop);

struct DeviceProperties {
  std::string name;
  int64_t memory_bytes = 0;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int multiprocessors = 0;
  std::string pci_bus_id;
};

struct Versions {
  int driver = 0;        // cudaDriverGetVersion (0: no driver)
  int runtime = 0;       // cudaRuntimeGetVersion
  int toolkit = 0;       // CUDART_VERSION the build used
  int cudnn = 0;         // cudnnGetVersion
  int cudnn_header = 0;  // CUDNN_VERSION the build used
  int cublas = 0;        // major*10000 + minor*100 + patch
  int nccl = 0;          // ncclGetVersion
};

absl::StatusOr<DeviceProperties> GetDeviceProperties(int ordinal);

// An NVTX range on this thread (Nsight Systems shows it on the timeline;
// NVTX v3 is header-only and does nothing unless a tool is attached).
// No-ops without CUDA.
void RangePush(const char* name);
void RangePop();
Versions GetVersions();

}  // namespace cnnbench::gpu

#endif  // CNNBENCH_CORE_GPU_RUNTIME_H_
