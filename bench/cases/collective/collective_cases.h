// The collective cases (<collective>/<transport>/<dtype>/<op>/bytes:<S>/ranks:<N>,
// bench/cases/collective/collective_cases.cc): one workload for every collective, the flags
// that set their sweep, and what the suite's main and tests call.
#ifndef CNNBENCH_BENCH_COLLECTIVE_CASES_H_
#define CNNBENCH_BENCH_COLLECTIVE_CASES_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/harness/harness.h"
#include "bench/suite/suite.h"
#include "core/device.h"
#include "core/dtype.h"
#include "kernels/collectives/communicator.h"

namespace cnnbench::bench {

// One case: which collective, its reduction (ignored by all-gather and
// broadcast), element type, nccl-tests' size (ShapeOf) and root, and the
// untimed calls of each variant made when it is prepared.
struct CollectiveCase {
  Collective collective = Collective::kAllReduce;
  ReduceOp op = ReduceOp::kSum;
  DType dtype = DType::kF32;
  int64_t bytes = 0;
  int root = 0;  // broadcast, reduce
  int warmup = 0;
  // Timed calls per variant and repetition; with `graph` (GPU ranks only)
  // each variant's loop of that many is captured once as a CUDA graph
  // after the warm-up and replayed as one launch, as nccl-tests' -G.
  int64_t iterations = 20;
  bool graph = false;
};

// The ranks of this process in one group (element r: its r-th rank, on
// devices[r]), shared by the cases of a sweep.
struct CommunicatorGroup {
  std::vector<std::unique_ptr<Communicator>> comms;
  std::vector<Device> devices;
};

// A case's workload over `group`: a thread per rank but the first, every
// rank's buffers on its device, `spec.warmup` untimed calls of each
// variant before it returns. Each repetition times `iterations`
// out-of-place calls as the harness's span and as many in place on its own
// timer, then checks one call of each variant on every rank against the
// exact expected values (floating averages within 2 units in the last
// place, as nccl-tests allows), failing with the first wrong element and
// the count of wrong ones.
absl::StatusOr<std::unique_ptr<Workload>> PrepareCollectiveWorkload(
    std::shared_ptr<CommunicatorGroup> group, const CollectiveCase& spec);
// The same over host-memory communicators (local, mpi).
absl::StatusOr<std::unique_ptr<Workload>> PrepareCollectiveWorkload(
    std::vector<std::unique_ptr<Communicator>> comms, const CollectiveCase& spec);

// A span on the host transports stops when the run is to stop
// (Workload::StopRequested): its ranks agree on it every
// CallsBetweenStopChecks(bytes) calls, about kStopCheckBytes of the size
// moved (at least one call), all leaving at the same call; the case is then
// skipped as interrupted. A Ctrl-C in a sweep of a million 64-byte calls
// ends it within one such stretch, not at the span's end.
inline constexpr int64_t kStopCheckBytes = int64_t{16} << 20;
int64_t CallsBetweenStopChecks(int64_t bytes);

// The element types --collective_dtypes names (or, when it is empty,
// `preset`), by name, each once; an unknown name is an error naming the flag.
absl::StatusOr<std::vector<std::pair<std::string, DType>>> CollectiveDTypes(
    const std::string& flag, const std::vector<std::string>& preset);
// The reductions --collective_ops names (or `preset`): "all" is every one,
// in nccl-tests' order (sum, prod, max, min, avg).
absl::StatusOr<std::vector<ReduceOp>> CollectiveOps(const std::string& flag,
                                                    const std::vector<std::string>& preset);

// The element types every transport reduces.
inline bool ReducedType(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16 ||
         dtype == DType::kF64 || dtype == DType::kI32 || dtype == DType::kI64;
}

// The most ranks --collective_ranks may ask for: each is a thread of the
// process (a thread the system still refuses makes the case unsupported).
inline constexpr int kMaxThreadRanks = 1024;
// Folds the --collective_* flags (and their older --allreduce_* names) into
// options.collectives; errors name the flag.
absl::Status ApplyCollectiveFlags(SuiteOptions& options);
// The JSON context's collective_warmup, collective_iters and collective_root.
void AddCollectiveContext(const SuiteOptions& options);

// The harness's settings of a collective case named `name` running `spec`
// (prepare left to the caller): a fixed count, never a min time (every
// rank must know how many collectives to make), each rank making them in
// one go, timed as a span.
TimedCase CollectiveTimedCase(const std::string& name, const CollectiveCase& spec);

// The transports and their rank counts, for the collective and grads
// sweeps alike: host memory over threads (local, --collective_ranks) or one
// process per rank (mpi: the job's ranks); with a GPU, NCCL over the
// non-zero --gpus counts of GPUs in this process, or one GPU per process
// under MPI.
std::vector<std::pair<std::string, std::vector<int>>> CollectiveTransports(
    const SuiteOptions& options);

// One case of a sweep, before anything is allocated.
struct PlannedCollectiveCase {
  std::string name;
  std::string transport;  // local, mpi (host memory), nccl (device memory)
  int ranks = 0;
  CollectiveCase spec;
  CollectiveShape shape;      // what each rank passes and holds
  double bytes_per_rank = 0;  // its send and receive buffers
};
// `collective`'s sweep: per transport (local over --collective_ranks, or
// mpi's one rank per process; with a GPU, nccl over the non-zero --gpus, or
// one GPU per process under MPI), rank count, type, reduction (the copies:
// none) and size (ShapeOf's, each once). A size stops the sweep once its
// buffers do not fit in half the memory: every rank's of this machine's
// `host_memory` for the host transports, one rank's of one GPU's
// `gpu_memory` for nccl (0: unknown, no cap). What the sweep left out is
// said in `notes` (when given), one line per transport and rank count, as
// nccl-tests says "Reducing maxBytes to N due to memory limitation": sizes
// past the memory, sizes that leave a rank nothing (ShapeOf), and a sweep with
// nothing left.
absl::StatusOr<std::vector<PlannedCollectiveCase>> PlanCollectiveCases(
    Collective collective, const SuiteOptions& options, double host_memory, double gpu_memory,
    std::vector<std::string>* notes = nullptr);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_COLLECTIVE_CASES_H_
