// The `mpi` group: one rank per process, over MPI_COMM_WORLD (OpenMPI),
// host buffers. MpiEnvironment is the process-wide MPI state (initialized
// once, finalized once); CreateMpiCommunicator gives this process's
// communicator. Launch with `mpirun -np N <binary>`; a process started
// without a launcher is a world of one rank.
#ifndef CNNBENCH_KERNELS_COLLECTIVES_MPI_H_
#define CNNBENCH_KERNELS_COLLECTIVES_MPI_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels/collectives/communicator.h"

namespace cnnbench {

// MPI for this process: MPI_Init_thread (MPI_THREAD_SERIALIZED: any thread
// may call, one at a time) on the first Get(), MPI_Finalize on Finalize() or
// at exit, whichever comes first.
class MpiEnvironment {
 public:
  // The environment, initializing MPI on the first call. After Finalize()
  // (MPI cannot be initialized twice in a process) a FailedPrecondition.
  static absl::StatusOr<MpiEnvironment*> Get();
  // True when an MPI launcher started this process (mpirun sets
  // OMPI_COMM_WORLD_SIZE; PMI/PMIx launchers PMI_SIZE or PMIX_RANK).
  static bool Launched();

  int rank() const { return rank_; }              // in MPI_COMM_WORLD
  int size() const { return size_; }              // ranks in MPI_COMM_WORLD
  int local_rank() const { return local_rank_; }  // among the ranks on this host
  int local_size() const { return local_size_; }  // ranks on this host
  // Host name of every rank (MPI_Get_processor_name), element r being rank r.
  const std::vector<std::string>& host_names() const { return host_names_; }
  const std::string& host_name() const { return host_names_[rank_]; }
  // MPI_Get_library_version's first line, e.g. "Open MPI v4.1.4, ...".
  const std::string& library_version() const { return library_version_; }

  // MPI_Finalize, once; every rank should call it (or let exit do it).
  // Communicators left then are unusable. Calling it twice is OK.
  absl::Status Finalize();

 private:
  MpiEnvironment() = default;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::vector<std::string> host_names_;
  std::string library_version_;
};

// Ends every process of the job: MPI_Abort(MPI_COMM_WORLD, exit_code) after
// printing `reason` to stderr. The way out after a collective timed out: the
// others may be stuck inside a collective that will never complete. Without
// MPI initialized, exits with `exit_code`.
[[noreturn]] void AbortMpiJob(int exit_code, absl::string_view reason);

// This process's communicator over a duplicate of MPI_COMM_WORLD (its own
// message space: collectives on it never match anyone else's). Collective:
// every rank calls it; a rank that does not within options.timeout makes it
// fail with DeadlineExceeded.
//
// AllReduce: fp32, fp64, int32, int64 natively; fp16 and bf16 are widened to
// fp32, reduced, and rounded once; sum, avg (sum, then divided by size()),
// max, min, prod. Broadcast and AllGather: every dtype (bytes). Counts (in bytes
// for Broadcast and AllGather) above INT_MAX: InvalidArgument, MPI counts
// being ints. The stream must be the CPU's; the work is done when the call
// returns.
//
// Timeout: a rank that waits longer than options.timeout fails with
// DeadlineExceeded naming the ranks that did not arrive (as far as it can
// tell: rank 0 tracks every rank, the others only rank 0); the communicator
// is then broken and every later call fails at once. MPI cannot take back a
// collective that was started, so the caller should end the job with
// AbortMpiJob; until then the buffers of the call that timed out must stay
// allocated.
absl::StatusOr<std::unique_ptr<Communicator>> CreateMpiCommunicator(
    const CommunicatorOptions& options = CommunicatorOptions());

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_COLLECTIVES_MPI_H_
