// bandwidth/<kind>/<device>/bytes:<S>/threads:<T>: the memory's own rates,
// the ceilings that collectives and memory-bound kernels are read against.
//   copy, triad on cpu: STREAM's kernels over fp64 arrays of S bytes each
//     (copy a[i] = b[i]; triad a[i] = b[i] + q c[i]) on an OpenMP team of T
//     threads, static schedule, each array first touched by the thread that
//     uses its part; counted as STREAM counts, the bytes the kernel reads and
//     writes (copy 2 S, triad 3 S), write-allocate traffic not counted.
//   d2d, h2d, d2h on cuda: one copy of S bytes on a stream (cudaMemcpyAsync):
//     device to device, counted as bytes read + written (2 S), as a device
//     copy's rate is quoted against the memory's; pinned host to device and
//     device to pinned host, counted once (S). T is 1, the host thread.
// Every case checks its destination against its source after the timing.
#ifndef CNNBENCH_BENCH_BANDWIDTH_CASES_H_
#define CNNBENCH_BENCH_BANDWIDTH_CASES_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bench/harness/harness.h"

namespace cnnbench::bench {

// Bytes one iteration of `kind` over arrays of `bytes` counts.
double BandwidthBytesCounted(absl::string_view kind, int64_t bytes);

// A case's workload: arrays (or buffers) allocated and filled, one untimed
// iteration run. InvalidArgument for a kind, device or size that does not
// fit; Unimplemented ("unsupported: ...") for a GPU kind without a GPU.
absl::StatusOr<std::unique_ptr<Workload>> PrepareBandwidthWorkload(absl::string_view kind,
                                                                   absl::string_view device,
                                                                   int64_t bytes, int threads);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_BANDWIDTH_CASES_H_
