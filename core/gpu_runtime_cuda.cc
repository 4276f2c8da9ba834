// gpu_runtime over the CUDA runtime, cuDNN, cuBLAS and NCCL.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "core/cuda_status.h"
#include "core/gpu_runtime.h"

namespace cnnbench::gpu {

bool BuiltIn() { return true; }

int DeviceCount() {
  int count = 0;
  // With no driver this is cudaErrorInsufficientDriver: any error means no GPU.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return 0;
  }
  return count;
}

absl::Status SetDevice(int ordinal) {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal));
  return absl::OkStatus();
}

absl::StatusOr<void*> Malloc(int ordinal, size_t bytes) {
  RETURN_IF_ERROR(SetDevice(ordinal));
  void* ptr = nullptr;
  cudaError_t err = cudaMalloc(&ptr, bytes);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return OutOfMemoryError(absl::StrCat("cudaMalloc of ", bytes, " bytes on cuda:", ordinal));
  }
  CUDA_RETURN_IF_ERROR(err);
  return ptr;
}

void Free(void* ptr) { cudaFree(ptr); }

absl::StatusOr<void*> MallocHost(size_t bytes) {
  void* ptr = nullptr;
  CUDA_RETURN_IF_ERROR(cudaMallocHost(&ptr, bytes));
  return ptr;
}

void FreeHost(void* ptr) { cudaFreeHost(ptr); }

absl::Status Memcpy(void* dst, const void* src, size_t bytes) {
  CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, cudaStreamPerThread));
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(cudaStreamPerThread));
  return absl::OkStatus();
}

absl::Status Memset(void* dst, int value, size_t bytes) {
  CUDA_RETURN_IF_ERROR(cudaMemsetAsync(dst, value, bytes, cudaStreamPerThread));
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(cudaStreamPerThread));
  return absl::OkStatus();
}

absl::Status MemcpyAsync(void* dst, const void* src, size_t bytes, void* stream) {
  CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream)));
  return absl::OkStatus();
}

absl::Status MemsetAsync(void* dst, int value, size_t bytes, void* stream) {
  CUDA_RETURN_IF_ERROR(cudaMemsetAsync(dst, value, bytes, static_cast<cudaStream_t>(stream)));
  return absl::OkStatus();
}

absl::Status MemGetInfo(int ordinal, size_t* free_bytes, size_t* total_bytes) {
  RETURN_IF_ERROR(SetDevice(ordinal));
  CUDA_RETURN_IF_ERROR(cudaMemGetInfo(free_bytes, total_bytes));
  return absl::OkStatus();
}

absl::StatusOr<void*> StreamCreate(int ordinal) {
  RETURN_IF_ERROR(SetDevice(ordinal));
  cudaStream_t stream;
  CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  return static_cast<void*>(stream);
}

void StreamDestroy(void* stream) { cudaStreamDestroy(static_cast<cudaStream_t>(stream)); }

absl::Status StreamSynchronize(void* stream) {
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  return absl::OkStatus();
}

absl::Status StreamWaitEvent(void* stream, void* event) {
  CUDA_RETURN_IF_ERROR(
      cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0));
  return absl::OkStatus();
}

// A failed capture's error stays CUDA's "last error" of the thread, which
// the next kernel launch's check would report as its own: cleared here,
// after the status that names it is made.
absl::Status StreamBeginCapture(void* stream) {
  // Thread-local: other threads' CUDA calls (an input pipeline's copies)
  // neither join nor break this capture.
  const cudaError_t err =
      cudaStreamBeginCapture(static_cast<cudaStream_t>(stream), cudaStreamCaptureModeThreadLocal);
  if (err != cudaSuccess) cudaGetLastError();
  CUDA_RETURN_IF_ERROR(err);
  return absl::OkStatus();
}

absl::StatusOr<void*> StreamEndCapture(void* stream) {
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &graph);
  if (ended != cudaSuccess) {
    cudaGetLastError();
    if (graph != nullptr) cudaGraphDestroy(graph);
  }
  CUDA_RETURN_IF_ERROR(ended);
  cudaGraphExec_t exec = nullptr;
  const cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  if (err != cudaSuccess) cudaGetLastError();
  CUDA_RETURN_IF_ERROR(err);
  return static_cast<void*>(exec);
}

absl::Status GraphLaunch(void* exec, void* stream) {
  CUDA_RETURN_IF_ERROR(
      cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec), static_cast<cudaStream_t>(stream)));
  return absl::OkStatus();
}

void GraphDestroy(void* exec) { cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec)); }

absl::StatusOr<void*> EventCreate(int ordinal) {
  RETURN_IF_ERROR(SetDevice(ordinal));
  cudaEvent_t event;
  CUDA_RETURN_IF_ERROR(cudaEventCreate(&event));
  return static_cast<void*>(event);
}

void EventDestroy(void* event) { cudaEventDestroy(static_cast<cudaEvent_t>(event)); }

absl::Status EventRecord(void* event, void* stream) {
  CUDA_RETURN_IF_ERROR(
      cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)));
  return absl::OkStatus();
}

absl::Status EventSynchronize(void* event) {
  CUDA_RETURN_IF_ERROR(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
  return absl::OkStatus();
}

absl::StatusOr<double> EventElapsedSeconds(void* start, void* stop) {
  float ms = 0;
  CUDA_RETURN_IF_ERROR(
      cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(stop)));
  return ms * 1e-3;
}

absl::StatusOr<DeviceProperties> GetDeviceProperties(int ordinal) {
  cudaDeviceProp prop;
  CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, ordinal));
  DeviceProperties out;
  out.name = prop.name;
  out.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  out.compute_capability_major = prop.major;
  out.compute_capability_minor = prop.minor;
  out.multiprocessors = prop.multiProcessorCount;
  char bus[32] = {0};
  if (cudaDeviceGetPCIBusId(bus, sizeof(bus), ordinal) == cudaSuccess) out.pci_bus_id = bus;
  return out;
}

Versions GetVersions() {
  Versions v;
  if (cudaDriverGetVersion(&v.driver) != cudaSuccess) v.driver = 0;
  if (cudaRuntimeGetVersion(&v.runtime) != cudaSuccess) v.runtime = 0;
  cudaGetLastError();
  v.toolkit = CUDART_VERSION;
  v.cudnn = static_cast<int>(cudnnGetVersion());
  v.cudnn_header = CUDNN_VERSION;
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
    v.cublas = major * 10000 + minor * 100 + patch;
  if (ncclGetVersion(&v.nccl) != ncclSuccess) v.nccl = 0;
  return v;
}

void RangePush(const char* name) { nvtxRangePushA(name); }
void RangePop() { nvtxRangePop(); }

}  // namespace cnnbench::gpu
