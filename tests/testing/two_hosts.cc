#include "tests/testing/two_hosts.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/testing/shell.h"

namespace cnnbench::testing {
namespace {

constexpr char kPrefix[] = "cnb";
constexpr char kSubnet[] = "10.231.0.0/24";
const char* const kAddress[2] = {"10.231.0.1", "10.231.0.2"};

// Runs `command` under sh; its status, with what it printed when it failed.
absl::Status Sh(const std::string& command, std::string* out = nullptr) {
  int exit_code = -1;
  const std::string text = CaptureOutput(command, &exit_code);
  if (out != nullptr) *out = text;
  if (exit_code == 0) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat("`", command, "` failed: ", text));
}

// Removes a namespace's folder under /etc/netns.
void RemoveEtc(const std::string& name) {
  std::error_code ignored;
  std::filesystem::remove_all(absl::StrCat("/etc/netns/", name), ignored);
}

// Namespaces a test process that has gone left behind (it was killed before
// its destructor ran): "cnb<pid>x<k>a" whose pid is not running.
void RemoveStale() {
  std::string list;
  if (!Sh("ip netns list", &list).ok()) return;
  for (absl::string_view line : absl::StrSplit(list, '\n', absl::SkipEmpty())) {
    const std::string name(line.substr(0, line.find(' ')));
    absl::string_view rest = name;
    if (!absl::ConsumePrefix(&rest, kPrefix)) continue;
    int pid = 0;
    if (!absl::SimpleAtoi(rest.substr(0, rest.find('x')), &pid) || pid <= 0) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;
    Sh(absl::StrCat("ip netns del ", name)).IgnoreError();
    RemoveEtc(name);
  }
}

absl::Status WriteFile(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream file(path, std::ios::trunc);
  file << text;
  file.close();
  if (!file) return absl::InternalError(absl::StrCat("cannot write ", path));
  ::chmod(path.c_str(), mode);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<TwoHosts>> TwoHosts::Make(const std::string& folder) {
  if (::geteuid() != 0)
    return absl::FailedPreconditionError(
        "not root: network namespaces and links need root (the project's machines and CI run "
        "tests as root)");
  if (!Sh("ip -V").ok() || !Sh("unshare --version").ok())
    return absl::FailedPreconditionError("`ip` (iproute2) or `unshare` (util-linux) is missing");
  RemoveStale();
  static std::atomic<int> made{0};
  std::unique_ptr<TwoHosts> hosts(new TwoHosts);
  const std::string stem = absl::StrCat(kPrefix, ::getpid(), "x", made++);
  hosts->hosts_[0] = stem + "a";
  hosts->hosts_[1] = stem + "b";
  const std::string& a = hosts->hosts_[0];
  const std::string& b = hosts->hosts_[1];
  // Each end of the pair is named after its host and moved into it.
  for (const std::string& h : hosts->hosts_) {
    if (absl::Status made_ns = Sh(absl::StrCat("ip netns add ", h)); !made_ns.ok())
      return absl::FailedPreconditionError(
          absl::StrCat("cannot make a network namespace (a container without CAP_SYS_ADMIN?): ",
                       made_ns.message()));
  }
  std::string hosts_file = "127.0.0.1 localhost\n";
  for (int i = 0; i < 2; ++i)
    absl::StrAppend(&hosts_file, kAddress[i], " ", hosts->hosts_[i], "\n");
  absl::Status link = Sh(absl::StrCat("ip link add ", a, " type veth peer name ", b));
  for (int i = 0; i < 2 && link.ok(); ++i) {
    const std::string& h = hosts->hosts_[i];
    link = Sh(absl::StrCat("ip link set ", h, " netns ", h, " && ip -n ", h, " addr add ",
                           kAddress[i], "/24 dev ", h, " && ip -n ", h, " link set ", h,
                           " up && ip -n ", h, " link set lo up"));
    if (link.ok()) {
      std::error_code error;
      std::filesystem::create_directories(absl::StrCat("/etc/netns/", h), error);
      link = WriteFile(absl::StrCat("/etc/netns/", h, "/hosts"), hosts_file, 0644);
    }
  }
  if (!link.ok()) return link;  // the destructor removes what was made
  // The agent: `agent HOST COMMAND...` runs COMMAND (one shell line, as ssh
  // takes it) on HOST, in a UTS namespace of its own named after it.
  hosts->agent_ = absl::StrCat(folder, "/", stem, "_agent.sh");
  if (absl::Status s = WriteFile(hosts->agent_,
                                 "#!/bin/sh\n"
                                 "# Runs a command on one of the test's hosts: agent HOST "
                                 "COMMAND... (one shell line, as ssh runs it: mpirun's "
                                 "starts with PATH=...; export PATH; ...)\n"
                                 "host=$1; shift\n"
                                 "exec ip netns exec \"$host\" unshare --uts sh -c "
                                 "\"hostname $host && $*\"\n",
                                 0755);
      !s.ok())
    return s;
  hosts->hostfile_ = absl::StrCat(folder, "/", stem, "_hosts");
  if (absl::Status s =
          WriteFile(hosts->hostfile_, absl::StrCat(a, " slots=1\n", b, " slots=1\n"), 0644);
      !s.ok())
    return s;
  // The agent works: a command run through it sees the host's name.
  std::string name;
  if (absl::Status s = Sh(absl::StrCat(hosts->On(1), " hostname"), &name); !s.ok()) return s;
  if (absl::StripAsciiWhitespace(name) != b)
    return absl::InternalError(absl::StrCat("the agent ran on '", name, "', not ", b));
  return hosts;
}

TwoHosts::~TwoHosts() {
  for (const std::string& h : hosts_) {
    if (h.empty()) continue;
    // A daemon cut off by a link taken down may still be running there.
    Sh(absl::StrCat("ip netns pids ", h, " | xargs -r kill -9")).IgnoreError();
    Sh(absl::StrCat("ip netns del ", h)).IgnoreError();  // takes its end of the pair with it
    Sh(absl::StrCat("ip link del ", h)).IgnoreError();   // an end never moved
    RemoveEtc(h);
  }
  if (!agent_.empty()) std::remove(agent_.c_str());
  if (!hostfile_.empty()) std::remove(hostfile_.c_str());
}

std::string TwoHosts::On(int i) const { return absl::StrCat(agent_, " ", hosts_[i]); }

std::string TwoHosts::MpirunOptions() const {
  return absl::StrCat("--hostfile ", hostfile_, " --mca plm_rsh_agent ", agent_,
                      " --mca btl tcp,self --mca btl_tcp_if_include ", kSubnet,
                      " --mca oob_tcp_if_include ", kSubnet, " ", kKeepalive);
}

std::string TwoHosts::LinkLine(bool up) const {
  const char* state = up ? "up" : "down";
  return absl::StrCat("ip -n ", hosts_[0], " link set ", hosts_[0], " ", state, "; ip -n ",
                      hosts_[1], " link set ", hosts_[1], " ", state, ";");
}

}  // namespace cnnbench::testing
