#include "kernels/collectives/mpi_process.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/collectives/mpi.h"

namespace cnnbench {
namespace mpi_internal {

absl::Status MpiError(const char* call, int code, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  return absl::InternalError(absl::StrCat(file, ":", line, ": ", call,
                                          " failed: ", absl::string_view(text, length),
                                          " (MPI error ", code, ")"));
}

void KeepUntilExit(std::shared_ptr<void> buffers) {
  static std::mutex* mutex = new std::mutex;
  static auto* kept = new std::vector<std::shared_ptr<void>>;  // reachable: not a leak
  std::lock_guard<std::mutex> lock(*mutex);
  kept->push_back(std::move(buffers));
}

bool MpiFinalized() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

}  // namespace mpi_internal

namespace {

using mpi_internal::MpiFinalized;

// The process-wide state behind MpiEnvironment.
struct Process {
  std::mutex mutex;
  MpiEnvironment* environment = nullptr;  // never deleted: lives until exit
  bool owns_init = false;                 // MPI_Init_thread was ours to call
  bool finalized = false;
};
Process& TheProcess() {
  static Process* process = new Process;  // never destroyed: atexit may use it
  return *process;
}

void FinalizeAtExit() {
  Process& process = TheProcess();
  std::lock_guard<std::mutex> lock(process.mutex);
  if (process.owns_init && !process.finalized && !MpiFinalized()) MPI_Finalize();
  process.finalized = true;
}

}  // namespace

bool MpiEnvironment::Launched() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

absl::StatusOr<MpiEnvironment*> MpiEnvironment::Get() {
  Process& process = TheProcess();
  std::lock_guard<std::mutex> lock(process.mutex);
  if (process.finalized)
    return absl::FailedPreconditionError(
        "MPI was finalized in this process and cannot be initialized again");
  if (process.environment != nullptr) return process.environment;
  int initialized = 0;
  MPI_RETURN_IF_ERROR(MPI_Initialized(&initialized));
  if (!initialized) {
    int provided = 0;
    MPI_RETURN_IF_ERROR(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided));
    process.owns_init = true;
    std::atexit(FinalizeAtExit);
    if (provided < MPI_THREAD_SERIALIZED)
      return absl::FailedPreconditionError(
          absl::StrCat("MPI provides thread level ", provided,
                       " only; the mpi group needs "
                       "MPI_THREAD_SERIALIZED (",
                       MPI_THREAD_SERIALIZED,
                       "): communicators may be used from "
                       "threads other than the one that initialized MPI"));
  }
  MPI_RETURN_IF_ERROR(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  auto* env = new MpiEnvironment;  // lives until exit, as MPI does
  MPI_RETURN_IF_ERROR(MPI_Comm_rank(MPI_COMM_WORLD, &env->rank_));
  MPI_RETURN_IF_ERROR(MPI_Comm_size(MPI_COMM_WORLD, &env->size_));
  MPI_Comm host;
  MPI_RETURN_IF_ERROR(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, env->rank_, MPI_INFO_NULL, &host));
  MPI_RETURN_IF_ERROR(MPI_Comm_rank(host, &env->local_rank_));
  MPI_RETURN_IF_ERROR(MPI_Comm_size(host, &env->local_size_));
  MPI_RETURN_IF_ERROR(MPI_Comm_free(&host));
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_RETURN_IF_ERROR(MPI_Get_processor_name(name, &length));
  std::vector<char> names(static_cast<size_t>(env->size_) * MPI_MAX_PROCESSOR_NAME);
  MPI_RETURN_IF_ERROR(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(),
                                    MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD));
  for (int r = 0; r < env->size_; ++r) {
    const char* begin = names.data() + static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME;
    env->host_names_.emplace_back(begin, strnlen(begin, MPI_MAX_PROCESSOR_NAME));
  }
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  MPI_RETURN_IF_ERROR(MPI_Get_library_version(version, &length));
  // The length may count the terminating NUL (Open MPI's does): up to it.
  std::string text(version, strnlen(version, static_cast<size_t>(std::max(0, length))));
  env->library_version_ = text.substr(0, text.find_first_of("\r\n"));
  process.environment = env;
  return env;
}

absl::Status MpiEnvironment::Finalize() {
  Process& process = TheProcess();
  std::lock_guard<std::mutex> lock(process.mutex);
  if (process.finalized || MpiFinalized()) {
    process.finalized = true;
    return absl::OkStatus();
  }
  process.finalized = true;
  MPI_RETURN_IF_ERROR(MPI_Finalize());
  return absl::OkStatus();
}

void AbortMpiJob(int exit_code, absl::string_view reason) {
  std::fprintf(stderr, "aborting the MPI job (exit code %d): %.*s\n", exit_code,
               static_cast<int>(reason.size()), reason.data());
  std::fflush(stderr);
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized && !MpiFinalized()) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

}  // namespace cnnbench
