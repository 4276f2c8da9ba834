// Starts a program as an OpenMPI job from a test (`mpirun -np N ...`), with
// the settings that make OpenMPI work inside a test sandbox, and collects
// its exit status and output: on this host over shared memory, or across
// the hosts of a TwoHosts fixture (tests/testing/two_hosts.h) over TCP.
#ifndef CNNBENCH_TESTS_TESTING_MPI_JOB_H_
#define CNNBENCH_TESTS_TESTING_MPI_JOB_H_

#include <string>
#include <vector>

namespace cnnbench::testing {

// mpirun's path on PATH, or "" when OpenMPI is not installed (tests skip).
std::string FindMpirun();

// The `env ...` words that start a job's processes from a test: without the
// test's result-file variables, with OpenMPI's sandbox settings, session
// files under `dir`. mpirun's line starts with them; so does srun's.
std::string JobEnvironment(const std::string& dir);

// Where mpirun runs and how it places the ranks. The default: here, every
// rank on this host over shared memory. For two hosts: `prefix` =
// TwoHosts::On(0) (mpirun runs on the first), `options` =
// TwoHosts::MpirunOptions() (its hostfile, agent and TCP transports).
struct MpiLaunch {
  std::string prefix;
  std::string options;
};

struct MpiJob {
  int exit_code = -1;  // mpirun's; 128 + signal when it was killed
  std::string output;  // the command, then stdout and stderr of every rank and mpirun
  // With an action (RunMpiJobAndAct): milliseconds from the action to
  // mpirun's exit, and to each rank's last process ending (by rank; -1:
  // the action never ran, or the rank was never seen).
  double mpirun_ms_after_action = -1;
  std::vector<double> rank_ms_after_action;
};

// Runs `command_per_rank` (a program and its arguments; several programs
// joined with " : " for an MPMD job, each then starting with "-np K") as
// one job of `ranks` ranks, with a wall-clock limit of `timeout_seconds`.
// The ranks do not inherit the test's result files (XML, shard status), so
// they may be GoogleTest binaries themselves.
MpiJob RunMpiJob(const std::string& mpirun, int ranks, const std::string& command_per_rank,
                 int timeout_seconds = 90, const MpiLaunch& launch = {});

// `rank` for SignalAction: mpirun's process group (as GNU timeout and a
// terminal's Ctrl-C signal it).
inline constexpr int kMpirunGroup = -2;
// The shell line that sends `signal` to mpirun ($pid in the job's script,
// as `kill -SIGNAL` would), with `rank` >= 0 to that rank's processes alone
// (found by their environment, on whichever host), with kMpirunGroup to
// mpirun's process group.
std::string SignalAction(int signal, int rank = -1);

// The job, with `action` (a shell line, e.g. SignalAction or
// TwoHosts::LinkLine) run once its output contains `wait_for` (or after
// `timeout_seconds` without it); the output also says whether `wait_for`
// was seen, and the times after the action are measured.
MpiJob RunMpiJobAndAct(const std::string& mpirun, int ranks, const std::string& command_per_rank,
                       const std::string& wait_for, const std::string& action,
                       int timeout_seconds = 90, const MpiLaunch& launch = {});
// The same with SignalAction(signal, rank).
MpiJob RunMpiJobSignalled(const std::string& mpirun, int ranks, const std::string& command_per_rank,
                          const std::string& wait_for, int signal, int timeout_seconds = 90,
                          int rank = -1);
// An MPMD job: `apps` is "-np 1 prog args : -np 1 prog other_args".
MpiJob RunMpmdJob(const std::string& mpirun, const std::string& apps, int timeout_seconds = 90,
                  const MpiLaunch& launch = {});

}  // namespace cnnbench::testing

#endif  // CNNBENCH_TESTS_TESTING_MPI_JOB_H_
