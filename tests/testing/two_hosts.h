// Two hosts on this machine, for tests of jobs that cross a network: two
// network namespaces joined by a veth pair (10.231.0.1 and 10.231.0.2, a
// subnet private to the pair, with no route out of it), each with its own
// host name, resolvable in both (/etc/netns/<name>/hosts, which `ip netns
// exec` puts in place of /etc/hosts). A command runs on a host through the
// launch agent, a script that enters the host's network namespace and a
// fresh UTS namespace named after it; OpenMPI's `mpirun` uses the same
// script as its remote shell (`--mca plm_rsh_agent`), so a job started on
// one host starts its ranks on the other as over ssh.
//
// Root only (namespaces and links are the system's): Make() says why not
// elsewhere, for the test to skip with. The destructor removes what Make
// made; Make first removes what a killed test left (names carry the pid).
#ifndef CNNBENCH_TESTS_TESTING_TWO_HOSTS_H_
#define CNNBENCH_TESTS_TESTING_TWO_HOSTS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace cnnbench::testing {

// How soon mpirun gives up on a daemon it cannot reach (a link down): TCP
// keepalive after 2 s idle, then 2 probes 1 s apart, ~4 s in all, under
// the tests' --collective_timeout, so that mpirun ends the job before a
// rank's MPI_Abort (a kill order that TCP would retransmit for 15 minutes
// to the host it cannot reach). Open MPI's defaults (300 s, 9 x 20 s) hold
// mpirun 8 minutes; docs/benchmarks.md gives users options for theirs.
inline constexpr char kKeepalive[] =
    "--mca oob_tcp_keepalive_time 2 --mca oob_tcp_keepalive_intvl 1 "
    "--mca oob_tcp_keepalive_probes 2";
inline constexpr int kKeepaliveSeconds = 4;

class TwoHosts {
 public:
  // The hosts, their link and the agent script under `folder`.
  static absl::StatusOr<std::unique_ptr<TwoHosts>> Make(const std::string& folder);
  ~TwoHosts();
  TwoHosts(const TwoHosts&) = delete;
  TwoHosts& operator=(const TwoHosts&) = delete;

  // Host 0 or 1's name (also its network namespace's): "cnb<pid>a", "...b".
  const std::string& host(int i) const { return hosts_[i]; }
  // The words that run a command on host `i`: "<agent> <host>".
  std::string On(int i) const;
  // mpirun's options for one rank per host over TCP: the hostfile, the
  // agent, the TCP transports bound to the pair's subnet, and kKeepalive.
  std::string MpirunOptions() const;
  // Takes the link between the hosts down (both ends) or up again; the
  // shell line that does it, for a script to run.
  std::string LinkLine(bool up) const;

 private:
  TwoHosts() = default;
  std::string hosts_[2];
  std::string agent_;     // the launch agent's path
  std::string hostfile_;  // one slot per host
};

}  // namespace cnnbench::testing

#endif  // CNNBENCH_TESTS_TESTING_TWO_HOSTS_H_
