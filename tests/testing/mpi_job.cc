#include "tests/testing/mpi_job.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace cnnbench::testing {
namespace {

// The environment and mpirun's options that make OpenMPI work in a test
// sandbox, then mpirun itself, ready for its apps.
std::string MpirunLine(const std::string& mpirun, const std::string& dir) {
  return absl::StrCat(
      // The ranks are not the test: they must not write its result files.
      "env -u XML_OUTPUT_FILE -u TEST_PREMATURE_EXIT_FILE -u GTEST_OUTPUT ",
      "-u TEST_SHARD_STATUS_FILE -u TEST_SHARD_INDEX -u TEST_TOTAL_SHARDS ",
      "-u GTEST_SHARD_INDEX -u GTEST_SHARD_STATUS_FILE -u GTEST_TOTAL_SHARDS ",
      // Shared memory and loopback only; no single-copy transfers (CMA needs
      // ptrace rights a container may lack); session files under the test's
      // tmp; PMIx's shared-memory store off (it fails in some sandboxes).
      "OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none ",
      "OMPI_MCA_orte_tmpdir_base=", dir, " PMIX_MCA_gds=hash ",
      // Under LeakSanitizer the ranks would fail on OpenMPI's allocations
      // left at exit (MPI_Finalize unloads the components that made them).
      "LSAN_OPTIONS=detect_leaks=0 ", mpirun, " --oversubscribe --allow-run-as-root ");
}

std::string TempDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return tmp != nullptr ? tmp : "/tmp";
}

std::string LogPath(const std::string& dir) {
  static std::atomic<int> jobs{0};
  return absl::StrCat(dir, "/mpi_job_", getpid(), "_", jobs++, ".log");
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

MpiJob Run(const std::string& mpirun, const std::string& apps, int timeout_seconds) {
  const std::string dir = TempDir();
  const std::string log = LogPath(dir);
  // A rank stuck despite the communicators' timeouts still ends.
  return Finish(absl::StrCat("timeout -k 5 ", timeout_seconds, " ", MpirunLine(mpirun, dir), apps,
                             " >", log, " 2>&1"),
                log);
}

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
                 int timeout_seconds) {
  return Run(mpirun, absl::StrCat("-np ", ranks, " ", command_per_rank), timeout_seconds);
}

// The shell line that signals mpirun ($pid), or the one of its children
// (OpenMPI starts a host's ranks as mpirun's children) that is `rank`.
static std::string SignalLine(int signal, int rank) {
  if (rank == kMpirunGroup) return absl::StrCat("kill -", signal, " -$pid;");
  if (rank < 0) return absl::StrCat("kill -", signal, " $pid;");
  return absl::StrCat("for c in $(pgrep -P $pid); do if tr '\\0' '\\n' < /proc/$c/environ | ",
                      "grep -qx OMPI_COMM_WORLD_RANK=", rank, "; then kill -", signal,
                      " $c; fi; done;");
}

MpiJob RunMpiJobSignalled(const std::string& mpirun, int ranks,
                          const std::string& command_per_rank, const std::string& wait_for,
                          int signal, int timeout_seconds, int rank) {
  const std::string dir = TempDir();
  const std::string log = LogPath(dir);
  const int tenths = timeout_seconds * 10;
  // mpirun in the background (its pid is the one signalled), a watchdog
  // that kills it at the limit, and the signal once the log shows `wait_for`.
  // For its group, mpirun leads a session of its own (setsid execs it:
  // $pid is mpirun's and its group's).
  const std::string script = absl::StrCat(
      rank == kMpirunGroup ? "setsid " : "", MpirunLine(mpirun, dir), "-np ", ranks, " ", command_per_rank, " >", log, " 2>&1 & pid=$!; ",
      "( trap 'kill $s 2>/dev/null; exit 0' TERM; sleep ", timeout_seconds,
      " & s=$!; wait $s; kill -9 $pid 2>/dev/null ) >/dev/null 2>&1 & dog=$!; i=0; ",
      "while ! grep -q -F -e '", wait_for, "' ", log, "; do i=$((i+1)); ",
      "if [ $i -gt ", tenths, " ]; then echo 'mpi_job: never saw: ", wait_for, "' >>", log,
      "; break; fi; sleep 0.1; done; ", SignalLine(signal, rank), " wait $pid; rc=$?; ",
      "kill $dog 2>/dev/null; exit $rc");
  const std::string script_path = log + ".sh";
  {
    std::ofstream file(script_path);
    file << script << "\n";
  }
  return Finish(absl::StrCat("sh ", script_path), log);
}

MpiJob RunMpmdJob(const std::string& mpirun, const std::string& apps, int timeout_seconds) {
  return Run(mpirun, apps, timeout_seconds);
}

}  // namespace cnnbench::testing
