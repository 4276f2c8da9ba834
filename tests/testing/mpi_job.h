// Starts a program as an OpenMPI job from a test (`mpirun -np N ...`), with
// the settings that make OpenMPI work inside a test sandbox, and collects
// its exit status and output.
#ifndef CNNBENCH_TESTS_TESTING_MPI_JOB_H_
#define CNNBENCH_TESTS_TESTING_MPI_JOB_H_

#include <string>

namespace cnnbench::testing {

// mpirun's path on PATH, or "" when OpenMPI is not installed (tests skip).
std::string FindMpirun();

struct MpiJob {
  int exit_code = -1;  // mpirun's; 128 + signal when it was killed
  std::string output;  // the command, then stdout and stderr of every rank and mpirun
};

// Runs `command_per_rank` (a program and its arguments; several programs
// joined with " : " for an MPMD job, each then starting with "-np K") as
// one job of `ranks` ranks, with a wall-clock limit of `timeout_seconds`.
// The ranks do not inherit the test's result files (XML, shard status), so
// they may be GoogleTest binaries themselves.
MpiJob RunMpiJob(const std::string& mpirun, int ranks, const std::string& command_per_rank,
                 int timeout_seconds = 90);
// `rank` for RunMpiJobSignalled: mpirun's process group (as GNU timeout and
// a terminal's Ctrl-C signal it).
inline constexpr int kMpirunGroup = -2;
// The same job, sent `signal` (mpirun's pid, as `kill -SIGNAL` would; with
// `rank` >= 0 that rank's process alone; kMpirunGroup: its process group)
// once its output contains
// `wait_for` (or after `timeout_seconds` without it). `exit_code` is
// mpirun's; `output` also says whether `wait_for` was seen.
MpiJob RunMpiJobSignalled(const std::string& mpirun, int ranks,
                          const std::string& command_per_rank, const std::string& wait_for,
                          int signal, int timeout_seconds = 90, int rank = -1);
// An MPMD job: `apps` is "-np 1 prog args : -np 1 prog other_args".
MpiJob RunMpmdJob(const std::string& mpirun, const std::string& apps, int timeout_seconds = 90);

}  // namespace cnnbench::testing

#endif  // CNNBENCH_TESTS_TESTING_MPI_JOB_H_
