// All-reduce (sum) over N ranks' buffers. Bandwidth as nccl-tests defines it:
// algbw = bytes / time, busbw = algbw * 2(n-1)/n.
#ifndef CNNBENCH_KERNELS_COLLECTIVES_ALL_REDUCE_H_
#define CNNBENCH_KERNELS_COLLECTIVES_ALL_REDUCE_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dtype.h"

namespace cnnbench {

class AllReduce {
 public:
  virtual ~AllReduce() = default;
  virtual absl::string_view name() const = 0;  // "local", "nccl", "mpi"
  virtual int ranks() const = 0;
  // recv[r][i] = sum over ranks of send[r][i], for `count` elements of
  // `dtype`. send[r] == recv[r] is the in-place variant.
  virtual absl::Status Run(const std::vector<const void*>& send, const std::vector<void*>& recv,
                           size_t count, DType dtype) = 0;
};

// Replicas in one process on the CPU, `ranks` buffers in host memory; the
// reduction is split into chunks spread over `threads` worker threads.
absl::StatusOr<std::unique_ptr<AllReduce>> CreateLocalAllReduce(int ranks, int threads);

// nccl-tests' bus bandwidth factor for all-reduce.
inline double AllReduceBusFactor(int ranks) { return ranks <= 1 ? 1.0 : 2.0 * (ranks - 1) / ranks; }

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_COLLECTIVES_ALL_REDUCE_H_
