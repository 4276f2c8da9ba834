// A one-node Slurm cluster for a test: Debian's slurmctld and slurmd
// (slurm-wlm 22.05) configured in a fresh folder under /tmp (short: the
// daemons' sockets live there), on free ports, with auth/none (no munge),
// this machine's CPUs as the one node, started by Start and stopped by the
// destructor. Client commands (srun, salloc, sinfo) find it through
// SLURM_CONF (Env()).
//
// Root only (slurmd starts the tasks); Start says why not elsewhere, or
// when the packages are missing, for the test to skip with.
#ifndef CNNBENCH_TESTS_TESTING_SLURM_CLUSTER_H_
#define CNNBENCH_TESTS_TESTING_SLURM_CLUSTER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace cnnbench::testing {

class SlurmCluster {
 public:
  // KillWait: the seconds between a time limit's SIGTERM and its SIGKILL.
  static absl::StatusOr<std::unique_ptr<SlurmCluster>> Start(int kill_wait_seconds = 10);
  ~SlurmCluster();
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  // "SLURM_CONF=<its slurm.conf>": put before srun, salloc (in `env`).
  std::string Env() const;
  const std::string& node() const { return node_; }
  // The daemons' logs, for a failing test's message.
  std::string Logs() const;

 private:
  SlurmCluster() = default;
  std::string folder_;
  std::string conf_;
  std::string node_;
};

}  // namespace cnnbench::testing

#endif  // CNNBENCH_TESTS_TESTING_SLURM_CLUSTER_H_
