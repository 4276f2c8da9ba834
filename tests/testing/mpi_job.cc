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

MpiJob Run(const std::string& mpirun, const std::string& apps, int timeout_seconds) {
  static std::atomic<int> jobs{0};
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp != nullptr ? tmp : "/tmp";
  const std::string log = absl::StrCat(dir, "/mpi_job_", getpid(), "_", jobs++, ".log");
  const std::string command = absl::StrCat(
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
      "LSAN_OPTIONS=detect_leaks=0 ",
      // A rank stuck despite the communicators' timeouts still ends.
      "timeout -k 5 ", timeout_seconds, " ", mpirun, " --oversubscribe --allow-run-as-root ",
      apps, " >", log, " 2>&1");
  const int status = std::system(command.c_str());
  MpiJob job;
  job.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(log);
  job.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  job.output = absl::StrCat("$ ", command, "\n", job.output);
  return job;
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

MpiJob RunMpmdJob(const std::string& mpirun, const std::string& apps, int timeout_seconds) {
  return Run(mpirun, apps, timeout_seconds);
}

}  // namespace cnnbench::testing
