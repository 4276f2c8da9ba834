// The MPI process state behind kernels/collectives/mpi.h: initialization
// once, finalization once (at exit when nobody did), the abort, and what the
// communicator needs of them. Internal to //kernels/collectives:mpi.
#ifndef CNNBENCH_KERNELS_COLLECTIVES_MPI_PROCESS_H_
#define CNNBENCH_KERNELS_COLLECTIVES_MPI_PROCESS_H_

#include <memory>

#include "absl/status/status.h"

namespace cnnbench::mpi_internal {

// An MPI call's failure as an Internal error naming the call, file:line and
// MPI's own text for `code`.
absl::Status MpiError(const char* call, int code, const char* file, int line);

// Whether MPI_Finalize has run in this process.
bool MpiFinalized();

// Keeps the internal buffers of a broken communicator alive until the
// process exits: MPI may still write into them.
void KeepUntilExit(std::shared_ptr<void> buffers);

}  // namespace cnnbench::mpi_internal

// Returns MpiError from the enclosing function when an MPI call fails.
#define MPI_RETURN_IF_ERROR(expr)                                                             \
  do {                                                                                        \
    const int cnnbench_mpi_rc_ = (expr);                                                      \
    if (cnnbench_mpi_rc_ != MPI_SUCCESS)                                                      \
      return ::cnnbench::mpi_internal::MpiError(#expr, cnnbench_mpi_rc_, __FILE__, __LINE__); \
  } while (0)

#endif  // CNNBENCH_KERNELS_COLLECTIVES_MPI_PROCESS_H_
