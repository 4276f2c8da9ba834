// gpu_runtime for builds without CUDA: no devices; every device call says so.
#include "core/gpu_runtime.h"

namespace cnnbench::gpu {
namespace {
absl::Status NotBuilt() {
  return absl::UnimplementedError("this build has no CUDA (no toolkit found, or --config=nocuda)");
}
}  // namespace

bool BuiltIn() { return false; }
int DeviceCount() { return 0; }
absl::Status SetDevice(int) { return NotBuilt(); }
absl::StatusOr<void*> Malloc(int, size_t) { return NotBuilt(); }
void Free(void*) {}
absl::StatusOr<void*> MallocHost(size_t) { return NotBuilt(); }
void FreeHost(void*) {}
absl::Status Memcpy(void*, const void*, size_t) { return NotBuilt(); }
absl::Status Memset(void*, int, size_t) { return NotBuilt(); }
absl::Status MemcpyAsync(void*, const void*, size_t, void*) { return NotBuilt(); }
absl::Status MemsetAsync(void*, int, size_t, void*) { return NotBuilt(); }
absl::Status MemGetInfo(int, size_t*, size_t*) { return NotBuilt(); }
absl::StatusOr<void*> StreamCreate(int) { return NotBuilt(); }
void StreamDestroy(void*) {}
absl::Status StreamSynchronize(void*) { return NotBuilt(); }
absl::Status StreamWaitEvent(void*, void*) { return NotBuilt(); }
absl::Status StreamBeginCapture(void*) { return NotBuilt(); }
absl::StatusOr<void*> StreamEndCapture(void*) { return NotBuilt(); }
absl::Status GraphLaunch(void*, void*) { return NotBuilt(); }
void GraphDestroy(void*) {}
absl::StatusOr<void*> EventCreate(int) { return NotBuilt(); }
void EventDestroy(void*) {}
absl::Status EventRecord(void*, void*) { return NotBuilt(); }
absl::Status EventSynchronize(void*) { return NotBuilt(); }
absl::StatusOr<double> EventElapsedSeconds(void*, void*) { return NotBuilt(); }
absl::StatusOr<DeviceProperties> GetDeviceProperties(int) { return NotBuilt(); }
Versions GetVersions() { return {}; }

void RangePush(const char*) {}
void RangePop() {}

}  // namespace cnnbench::gpu
