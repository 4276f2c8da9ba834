#include "tests/testing/mpi_job.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cnnbench::testing {
namespace {

// Every job's ranks carry this variable (mpirun's -x), set to the job's
// log: how the actions find a rank's processes on either host.
constexpr char kJobTag[] = "CNNBENCH_MPI_JOB";

// The environment and mpirun's options that make OpenMPI work in a test
// sandbox, then mpirun itself, ready for its apps.
std::string MpirunLine(const std::string& mpirun, const std::string& dir, const std::string& tag,
                       const MpiLaunch& launch) {
  return absl::StrCat(launch.prefix, launch.prefix.empty() ? "" : " ", JobEnvironment(dir), kJobTag,
                      "=", tag, " ", mpirun, " --oversubscribe --allow-run-as-root -x ", kJobTag,
                      " ", launch.options, launch.options.empty() ? "" : " ");
}

}  // namespace

std::string JobEnvironment(const std::string& dir) {
  return absl::StrCat(
      // The ranks are not the test: they must not write its result files.
      "env -u XML_OUTPUT_FILE -u TEST_PREMATURE_EXIT_FILE -u GTEST_OUTPUT ",
      "-u TEST_SHARD_STATUS_FILE -u TEST_SHARD_INDEX -u TEST_TOTAL_SHARDS ",
      "-u GTEST_SHARD_INDEX -u GTEST_SHARD_STATUS_FILE -u GTEST_TOTAL_SHARDS ",
      // Shared memory and loopback only (a launch's --mca btl overrides it);
      // no single-copy transfers (CMA needs ptrace rights a container may
      // lack); session files under the test's tmp; PMIx's shared-memory
      // store off (it fails in some sandboxes).
      "OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none ",
      "OMPI_MCA_orte_tmpdir_base=", dir, " PMIX_MCA_gds=hash ",
      // Under LeakSanitizer the ranks would fail on OpenMPI's allocations
      // left at exit (MPI_Finalize unloads the components that made them).
      "LSAN_OPTIONS=detect_leaks=0 ");
}

namespace {

std::string TempDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return tmp != nullptr ? tmp : "/tmp";
}

std::string LogPath(const std::string& dir) {
  static std::atomic<int> jobs{0};
  return absl::StrCat(dir, "/mpi_job_", getpid(), "_", jobs++, ".log");
}

// The times the action script wrote ("mpi_job: mpirun ended N ms after the
// action", "mpi_job: rank R ended N ms after the action").
void ReadTimes(MpiJob& job, int ranks) {
  job.rank_ms_after_action.assign(static_cast<size_t>(ranks), -1);
  for (absl::string_view line : absl::StrSplit(job.output, '\n')) {
    if (!absl::ConsumePrefix(&line, "mpi_job: ")) continue;
    const std::vector<absl::string_view> words = absl::StrSplit(line, ' ');
    double ms = 0;
    int rank = 0;
    if (words.size() >= 4 && words[0] == "mpirun" && words[1] == "ended" &&
        absl::SimpleAtod(words[2], &ms))
      job.mpirun_ms_after_action = ms;
    if (words.size() >= 5 && words[0] == "rank" && absl::SimpleAtoi(words[1], &rank) &&
        words[2] == "ended" && absl::SimpleAtod(words[3], &ms) && rank >= 0 && rank < ranks)
      job.rank_ms_after_action[static_cast<size_t>(rank)] = ms;
  }
}

MpiJob Finish(const std::string& command, const std::string& log) {
  const int status = std::system(command.c_str());
  MpiJob job;
  job.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(log);
  job.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  job.output = absl::StrCat("$ ", command, "\n", job.output);
  return job;
}

MpiJob Run(const std::string& mpirun, const std::string& apps, int timeout_seconds,
           const MpiLaunch& launch) {
  const std::string dir = TempDir();
  const std::string log = LogPath(dir);
  // A rank stuck despite the communicators' timeouts still ends.
  return Finish(absl::StrCat("timeout -k 5 ", timeout_seconds, " ",
                             MpirunLine(mpirun, dir, log, launch), apps, " >>", log, " 2>&1"),
                log);
}

// The pids of rank $r's processes of this job ($tag), on either host (the
// hosts share this machine's processes).
constexpr char kRankPids[] =
    "rank_pids() { for e in $(grep -lzx \"CNNBENCH_MPI_JOB=$tag\" /proc/[0-9]*/environ "
    "2>/dev/null); do if grep -qzx \"OMPI_COMM_WORLD_RANK=$1\" $e 2>/dev/null; then "
    "p=${e#/proc/}; echo ${p%/environ}; fi; done; }; ";

}  // namespace

std::string FindMpirun() {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "", ':')) {
    if (dir.empty()) continue;
    std::string candidate = absl::StrCat(dir, "/mpirun");
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

MpiJob RunMpiJob(const std::string& mpirun, int ranks, const std::string& command_per_rank,
                 int timeout_seconds, const MpiLaunch& launch) {
  return Run(mpirun, absl::StrCat("-np ", ranks, " ", command_per_rank), timeout_seconds, launch);
}

std::string SignalAction(int signal, int rank) {
  if (rank == kMpirunGroup) return absl::StrCat("kill -", signal, " -$pid;");
  if (rank < 0) return absl::StrCat("kill -", signal, " $pid;");
  return absl::StrCat("kill -", signal, " $(rank_pids ", rank, ");");
}

MpiJob RunMpiJobAndAct(const std::string& mpirun, int ranks, const std::string& command_per_rank,
                       const std::string& wait_for, const std::string& action, int timeout_seconds,
                       const MpiLaunch& launch) {
  const std::string dir = TempDir();
  const std::string log = LogPath(dir);
  const int tenths = timeout_seconds * 10;
  const bool group = absl::StrContains(action, "-$pid");
  // mpirun in the background (its pid is the one signalled), a watchdog
  // that kills it at the limit, and the action once the log shows
  // `wait_for`; then a watcher per rank notes when its processes are gone.
  // For its group, mpirun leads a session of its own (setsid execs it:
  // $pid is mpirun's and its group's).
  const std::string script = absl::StrCat(
      "tag='", log, "'; ", kRankPids, "ms() { echo $(( ($(date +%s%N) - t0) / 1000000 )); }; ",
      group ? "setsid " : "", MpirunLine(mpirun, dir, log, launch), "-np ", ranks, " ",
      command_per_rank, " >>", log, " 2>&1 & pid=$!; ",
      "( trap 'kill $s 2>/dev/null; exit 0' TERM; sleep ", timeout_seconds,
      " & s=$!; wait $s; kill -9 $pid 2>/dev/null ) >/dev/null 2>&1 & dog=$!; i=0; ",
      "while ! grep -q -F -e '", wait_for, "' ", log, "; do i=$((i+1)); ", "if [ $i -gt ", tenths,
      " ] || ! kill -0 $pid 2>/dev/null; then echo 'mpi_job: never saw: ", wait_for, "' >>", log,
      "; break; fi; sleep 0.1; done; t0=$(date +%s%N); ", action, " echo 'mpi_job: acted' >>", log,
      "; ", "for r in $(seq 0 ", ranks - 1,
      "); do ( j=0; while [ -n \"$(rank_pids $r)\" ] && [ $j -lt ", tenths,
      " ]; do j=$((j+1)); sleep 0.1; done; [ $j -lt ", tenths,
      " ] && echo \"mpi_job: rank $r ended $(ms) ms after the action\" >>", log,
      " ) & done; wait $pid; rc=$?; echo \"mpi_job: mpirun ended $(ms) ms after the action\" >>",
      log, "; kill $dog 2>/dev/null; wait; for r in $(seq 0 ", ranks - 1,
      "); do kill -9 $(rank_pids $r) 2>/dev/null; done; exit $rc");
  const std::string script_path = log + ".sh";
  {
    std::ofstream file(script_path);
    file << script << "\n";
  }
  MpiJob job = Finish(absl::StrCat("sh ", script_path), log);
  ReadTimes(job, ranks);
  return job;
}

MpiJob RunMpiJobSignalled(const std::string& mpirun, int ranks, const std::string& command_per_rank,
                          const std::string& wait_for, int signal, int timeout_seconds, int rank) {
  return RunMpiJobAndAct(mpirun, ranks, command_per_rank, wait_for, SignalAction(signal, rank),
                         timeout_seconds);
}

MpiJob RunMpmdJob(const std::string& mpirun, const std::string& apps, int timeout_seconds,
                  const MpiLaunch& launch) {
  return Run(mpirun, apps, timeout_seconds, launch);
}

}  // namespace cnnbench::testing
