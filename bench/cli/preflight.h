// The check every rank of an MPI job makes before any case runs: each rank's
// settings (binary, flags, cases, devices, library versions) gathered on
// every rank and compared with rank 0's, so a job whose ranks would not make
// the same collectives fails at once, on every rank, with the same message,
// instead of hanging in its first collective.
#ifndef CNNBENCH_BENCH_PREFLIGHT_H_
#define CNNBENCH_BENCH_PREFLIGHT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "kernels/collectives/communicator.h"

namespace cnnbench::bench {

// One field of a rank's settings: a name ("flags") and its value.
using PreflightField = std::pair<std::string, std::string>;

// Gathers every rank's `fields` (the same names in the same order on every
// rank) over `comm` and compares them with rank 0's. OK when all agree;
// otherwise FailedPrecondition on every rank naming each rank and field
// that differs, with both values (long values shortened). A value longer
// than kPreflightValueBytes is compared through its digest.
absl::Status Preflight(Communicator& comm, const std::vector<PreflightField>& fields);

inline constexpr size_t kPreflightValueBytes = 240;

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_PREFLIGHT_H_
