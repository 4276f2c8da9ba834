#include "tests/testing/slurm_cluster.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tests/testing/shell.h"

namespace cnnbench::testing {
namespace {

// A daemon's or command's path: on PATH, or in the sbin folders a test's
// PATH may leave out; "" when absent.
std::string Find(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string folders = absl::StrCat(path != nullptr ? path : "", ":/usr/sbin:/sbin:/usr/bin");
  size_t at = 0;
  while (at <= folders.size()) {
    const size_t end = std::min(folders.find(':', at), folders.size());
    const std::string candidate = absl::StrCat(folders.substr(at, end - at), "/", name);
    if (end > at && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    at = end + 1;
  }
  return "";
}

// A TCP port free now (the kernel's pick for port 0).
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
    port = ntohs(address.sin_port);
  ::close(fd);
  return port;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Stops the daemon whose pid file is `pid_file`: SIGTERM, then SIGKILL
// after 10 s.
void Stop(const std::string& pid_file) {
  int pid = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(Read(pid_file)), &pid) || pid <= 1) return;
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::kill(pid, SIGKILL);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SlurmCluster>> SlurmCluster::Start(int kill_wait_seconds) {
  if (::geteuid() != 0)
    return absl::FailedPreconditionError("not root: slurmd must run as root to start tasks");
  const std::string slurmctld = Find("slurmctld"), slurmd = Find("slurmd");
  if (slurmctld.empty() || slurmd.empty() || Find("srun").empty() || Find("salloc").empty())
    return absl::FailedPreconditionError(
        "Slurm is not installed (Debian's slurmctld, slurmd and slurm-client: ./bazelw installs "
        "them)");
  std::unique_ptr<SlurmCluster> cluster(new SlurmCluster);
  char folder[] = "/tmp/cnbslurm-XXXXXX";
  if (::mkdtemp(folder) == nullptr) return absl::InternalError("cannot make a folder under /tmp");
  cluster->folder_ = folder;
  for (const char* sub : {"state", "spool", "tmp"})
    std::filesystem::create_directories(absl::StrCat(cluster->folder_, "/", sub));
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  cluster->node_ = host;
  const int ctld_port = FreePort(), slurmd_port = FreePort();
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  const std::string& f = cluster->folder_;
  cluster->conf_ = f + "/slurm.conf";
  std::ofstream conf(cluster->conf_);
  conf << "ClusterName=cnnbench\n"
       << "SlurmctldHost=" << host << "(127.0.0.1)\n"
       << "SlurmctldPort=" << ctld_port << "\nSlurmdPort=" << slurmd_port << "\n"
       << "SlurmUser=root\nSlurmdUser=root\nAuthType=auth/none\nCredType=cred/none\n"
       << "StateSaveLocation=" << f << "/state\nSlurmdSpoolDir=" << f << "/spool\n"
       << "SlurmctldPidFile=" << f << "/slurmctld.pid\nSlurmdPidFile=" << f << "/slurmd.pid\n"
       << "SlurmctldLogFile=" << f << "/slurmctld.log\nSlurmdLogFile=" << f << "/slurmd.log\n"
       << "TmpFS=" << f << "/tmp\n"
       << "ProctrackType=proctrack/pgid\nTaskPlugin=task/none\n"
       << "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
       << "SchedulerType=sched/builtin\nMpiDefault=none\nReturnToService=2\n"
       << "KillWait=" << kill_wait_seconds << "\n"
       << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
       << "NodeName=" << host << " NodeAddr=127.0.0.1 CPUs=" << cpus << " State=UNKNOWN\n"
       << "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP "
          "OverSubscribe=YES\n";
  conf.close();
  if (!conf) return absl::InternalError(absl::StrCat("cannot write ", cluster->conf_));
  // Both daemonize; the destructor stops them by their pid files.
  for (const std::string& daemon : {slurmctld, slurmd}) {
    const std::string start = absl::StrCat(daemon, " -f ", cluster->conf_);
    if (std::system(start.c_str()) != 0)
      return absl::InternalError(absl::StrCat("`", start, "` failed\n", cluster->Logs()));
  }
  // Ready when the node is idle.
  for (int i = 0; i < 300; ++i) {
    const std::string state =
        CaptureOutput(absl::StrCat(cluster->Env(), " sinfo -h -N -o %T 2>/dev/null"));
    if (absl::StartsWith(absl::StripAsciiWhitespace(state), "idle")) return cluster;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("the Slurm node never became idle in 30 s\n", cluster->Logs()));
}

SlurmCluster::~SlurmCluster() {
  if (folder_.empty()) return;
  Stop(folder_ + "/slurmd.pid");
  Stop(folder_ + "/slurmctld.pid");
  std::error_code ignored;
  std::filesystem::remove_all(folder_, ignored);
}

std::string SlurmCluster::Env() const { return absl::StrCat("SLURM_CONF=", conf_); }

std::string SlurmCluster::Logs() const {
  return absl::StrCat("--- slurmctld.log ---\n", Read(folder_ + "/slurmctld.log"),
                      "--- slurmd.log ---\n", Read(folder_ + "/slurmd.log"));
}

}  // namespace cnnbench::testing
