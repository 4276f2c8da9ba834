// //bench:all under an MPI launcher: joining the job, the ranks' agreement
// before any case and on stopping, and the end of a job whose collective
// timed out (docs/benchmarks.md, "Processes and hosts").
#ifndef CNNBENCH_BENCH_CLI_MPI_RUN_H_
#define CNNBENCH_BENCH_CLI_MPI_RUN_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/harness/harness.h"
#include "bench/output/result_output.h"
#include "bench/suite/suite.h"
#include "kernels/collectives/communicator.h"

namespace cnnbench::bench {

// Exit statuses (docs/benchmarks.md): 0 the run finished and its output was
// written; 1 the output could not be written (Abseil also exits 1 on an
// unknown flag), or an MPI job ended on a timed-out collective; 2 a bad
// flag value, or no case to run; 3 (kCaseFailedExit) the output was
// written but a case failed (not unsupported, not OOM); 128 + signal when
// interrupted.
inline constexpr int kOutputFailed = 1;
inline constexpr int kCollectiveTimedOut = 1;
inline constexpr int kBadUsage = 2;

// Under an MPI launcher this process is one rank (rank 0 alone prints and
// writes the output): its place in the job, the world communicator, and
// the families that span ranks only (the others would time the same thing
// on every process). Null outside one.
absl::StatusOr<std::unique_ptr<Communicator>> JoinMpiJob(SuiteOptions& options,
                                                         MpiRanks& mpi_ranks);

// Every rank must be about to make the same collectives: the same binary,
// flags, cases, GPUs and libraries. A rank that never answers ends the job.
// Then gathers each host's facts (mpi_ranks.host_facts).
absl::Status AgreeAcrossRanks(Communicator& world, MpiRanks& mpi_ranks, const SuiteOptions& options,
                              const std::vector<std::string>& selected_names, int argc,
                              char** argv);

// Under MPI: the stop agreed across ranks (the signal and the highest rank
// it reached, a two-value max all-reduce on the world communicator), so a
// signal to any one rank stops every rank at the same point. A failed
// agreement leaves each rank its own view.
std::function<bool(bool)> AgreeOnStopping(Communicator& world, int rank);

// True once this rank is ending the job on a timed-out collective.
bool JobEnding();

// What a rank needs to end the job when a collective times out.
struct JobEnd {
  const MpiRanks* mpi = nullptr;
  Harness* harness = nullptr;  // the case running
  ResultFile* out = nullptr;   // rank 0's results (null elsewhere, or none)
  std::string out_path;
  std::string store_format;  // the results' format, for the store (only JSON is stored)
};

// Ends the job on `why` (a timed-out collective), once, whichever thread
// calls first; never returns. It says one line on stderr naming this rank,
// its host, the case and the error (which names the ranks that did not
// arrive, and their hosts); on rank 0 writes the results file whole (the
// finished cases; the context's `interrupted` says which case timed out
// and why: the case itself is left out, as an interrupted run leaves out
// the case it stopped), keeps the run in the store, and says where; then
// MPI_Abort ends every rank (exit status kCollectiveTimedOut).
[[noreturn]] void EndJobOnCollectiveTimeout(const JobEnd& end, const absl::Status& why);

// The `interrupted` entry for a job ended by EndJobOnCollectiveTimeout ("" until then).
std::string JobEndNote();

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_CLI_MPI_RUN_H_
