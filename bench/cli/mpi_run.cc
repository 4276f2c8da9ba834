#include "bench/cli/mpi_run.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/cli/flag_read.h"
#include "bench/cli/preflight.h"
#include "bench/cli/suite_flags.h"
#include "bench/cli/usage.h"
#include "bench/harness/interrupt.h"
#include "bench/output/run_store.h"
#include "bench/suite/names.h"
#include "core/platform.h"
#include "core/status.h"
#include "kernels/collectives/mpi.h"
#include "kernels/collectives/nccl.h"

namespace cnnbench::bench {
namespace {

std::atomic<bool> ending{false};
std::mutex note_mutex;
std::string& Note() {
  static std::string* note = new std::string;  // read at exit by no one: never destroyed
  return *note;
}

// Every host's facts in mpi_ranks.host_facts: each rank's CPU, CPUs and
// memory gathered (fixed slots of chars), then one entry per host, in the
// order of its first rank, with its ranks.
absl::Status DescribeHosts(Communicator& world, const PlatformInfo& platform, MpiRanks& mpi_ranks) {
  constexpr size_t kSlot = 256;
  std::string facts =
      absl::StrCat(platform.cpu_model, "; ", platform.host_cpus, " CPUs; ",
                   absl::StrFormat("%.1f GiB", platform.memory_bytes / 1073741824.0));
  facts.resize(kSlot - 1);
  std::vector<char> mine(kSlot, '\0'), all(kSlot * mpi_ranks.size, '\0');
  std::copy(facts.begin(), facts.end(), mine.begin());
  RETURN_IF_ERROR(world.AllGather(mine.data(), all.data(), kSlot, DType::kU8, Stream::Cpu()));
  std::vector<std::string> order;  // hosts by first rank
  std::map<std::string, std::pair<std::vector<int>, std::string>> hosts;
  for (int r = 0; r < mpi_ranks.size; ++r) {
    const std::string& name = r < static_cast<int>(mpi_ranks.host_names.size())
                                  ? mpi_ranks.host_names[r]
                                  : std::string("?");
    auto [it, added] = hosts.try_emplace(name);
    if (added) {
      order.push_back(name);
      it->second.second = std::string(all.data() + r * kSlot);
    }
    it->second.first.push_back(r);
  }
  std::vector<std::string> entries;
  for (const std::string& name : order)
    entries.push_back(absl::StrCat(name, " (ranks ", absl::StrJoin(hosts[name].first, ", "), "; ",
                                   hosts[name].second, ")"));
  mpi_ranks.host_facts = absl::StrJoin(entries, " | ");
  return absl::OkStatus();
}

}  // namespace

// Under an MPI launcher this process is one rank (rank 0 alone prints and
// writes the output): its place in the job, the world communicator, and
// the families that span ranks only (the others would time the same thing
// on every process). Null outside one.
absl::StatusOr<std::unique_ptr<Communicator>> JoinMpiJob(SuiteOptions& options,
                                                         MpiRanks& mpi_ranks) {
  if (!MpiEnvironment::Launched()) return std::unique_ptr<Communicator>();
  ASSIGN_OR_RETURN_AS_IS(MpiEnvironment * env, MpiEnvironment::Get());
  mpi_ranks.rank = env->rank();
  mpi_ranks.size = env->size();
  mpi_ranks.local_rank = env->local_rank();
  const std::set<std::string> hosts(env->host_names().begin(), env->host_names().end());
  mpi_ranks.hosts = static_cast<int>(hosts.size());
  mpi_ranks.host_names = env->host_names();
  mpi_ranks.library_version = env->library_version();
  options.mpi = &mpi_ranks;
  // The job's ranks are the collectives' ranks: a rank count asked for is
  // said to be ignored, never dropped without a word.
  for (const char* name : {"collective_ranks", "allreduce_ranks"}) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag != nullptr && FlagGiven(*flag) && mpi_ranks.rank == 0) {
      std::fprintf(stderr,
                   "cnnbench: note: --%s is ignored under mpirun: the collectives run over the "
                   "job's %d ranks\n",
                   name, mpi_ranks.size);
      std::fflush(stderr);  // at the start, before any case's line
    }
  }
  CommunicatorOptions co;
  co.timeout = options.collective_timeout;
  absl::StatusOr<std::unique_ptr<Communicator>> comm = CreateMpiCommunicator(co);
  // A rank that never arrives leaves the others inside MPI: the job ends.
  if (absl::IsDeadlineExceeded(comm.status()))
    AbortMpiJob(kBadUsage,
                absl::StrCat("cnnbench: rank ", mpi_ranks.rank, ": ", comm.status().message()));
  if (!comm.ok()) return comm.status();
  std::vector<std::string> families;
  for (const std::string& f : options.families)
    if (const CaseFamily* family = FindCaseFamily(f); family != nullptr && family->spans_ranks)
      families.push_back(f);
  if (families.size() != options.families.size() && mpi_ranks.rank == 0)
    std::fprintf(stderr,
                 "cnnbench: under MPI (%d ranks) only the %s families run (one replica "
                 "or rank per process)\n",
                 mpi_ranks.size, SpanningFamilyList().c_str());
  options.families = std::move(families);
  return comm;
}

// Every rank must be about to make the same collectives: the same binary,
// flags, cases, GPUs and libraries. A rank that never answers ends the job.
absl::Status AgreeAcrossRanks(Communicator& world, MpiRanks& mpi_ranks, const SuiteOptions& options,
                              const std::vector<std::string>& selected_names, int argc,
                              char** argv) {
  const PlatformInfo platform = CollectPlatformInfo();
  const std::vector<std::string> user_args(argv + 1, argv + argc);
  const absl::StatusOr<std::string> nccl = NcclVersion();
  const absl::Status agreed =
      Preflight(world, {{"binary", absl::StrCat(platform.git_commit, " ", platform.build_config,
                                                " ", BuildCompilationMode())},
                        {"flags", absl::StrJoin(user_args, " ")},
                        {"cases", absl::StrJoin(selected_names, ",")},
                        {"gpus visible", absl::StrCat(options.gpu_count)},
                        {"mpi", mpi_ranks.library_version},
                        {"nccl", nccl.ok() ? *nccl : "none"}});
  if (absl::IsDeadlineExceeded(agreed))
    AbortMpiJob(kBadUsage, absl::StrCat("cnnbench: rank ", mpi_ranks.rank, ": ", agreed.message()));
  if (agreed.ok()) return DescribeHosts(world, platform, mpi_ranks);
  return absl::FailedPreconditionError(
      absl::StrCat("rank ", mpi_ranks.rank, ": ", agreed.message()));
}

// Under MPI: the stop agreed across ranks (the signal and the highest rank
// it reached, a two-value max all-reduce on the world communicator), so a
// signal to any one rank stops every rank at the same point. A failed
// agreement leaves each rank its own view.
std::function<bool(bool)> AgreeOnStopping(Communicator& world, int rank) {
  return [&world, rank](bool here) {
    if (JobEnding()) return true;  // the world is broken: no collective now
    int64_t views[2] = {here ? InterruptSignal() : 0, here ? rank : -1};
    if (!world.AllReduce(views, views, 2, DType::kI64, ReduceOp::kMax, Stream::Cpu()).ok())
      return here;
    if (views[0] != 0 && InterruptSignal() == 0)
      SetAgreedStop(static_cast<int>(views[0]), static_cast<int>(views[1]));
    return views[0] != 0;
  };
}

bool JobEnding() { return ending.load(); }

std::string JobEndNote() {
  std::lock_guard<std::mutex> lock(note_mutex);
  return Note();
}

void EndJobOnCollectiveTimeout(const JobEnd& end, const absl::Status& why) {
  // One thread ends the job; another that times out meanwhile waits for it.
  if (ending.exchange(true))
    for (;;) ::pause();
  const int rank = end.mpi != nullptr ? end.mpi->rank : 0;
  const std::string host = end.mpi != nullptr && rank < static_cast<int>(end.mpi->host_names.size())
                               ? end.mpi->host_names[rank]
                               : "";
  const std::string case_name = end.harness != nullptr && !end.harness->current_case().empty()
                                    ? end.harness->current_case()
                                    : std::string("(before the first case)");
  const std::string message = UserMessage(why);
  std::fprintf(stderr, "cnnbench: rank %d (on %s), case %s: %s; ending the job\n", rank,
               host.c_str(), case_name.c_str(), message.c_str());
  std::fflush(stderr);
  if (end.out != nullptr) {
    const int started = end.harness != nullptr ? end.harness->progress().started() : 0;
    const int selected = end.harness != nullptr ? end.harness->progress().selected() : 0;
    {
      std::lock_guard<std::mutex> lock(note_mutex);
      Note() = absl::StrCat("a collective timed out in case ", case_name, " (", started, " of ",
                            selected, " cases had started; that one is left out, ",
                            selected - started, " not run): ", message);
    }
    const absl::Status written = end.out->CommitPartial();
    const std::string& json = written.ok() ? end.out_path : end.out->rescue_path();
    if (!json.empty())
      PrintStoreReport(StoreRun(absl::GetFlag(FLAGS_store), json, end.store_format),
                       /*to_stdout=*/false);
    std::fprintf(stderr, "cnnbench: %s\n",
                 written.ok()
                     ? absl::StrCat("the cases finished before it are in ", end.out_path).c_str()
                     : std::string(written.message()).c_str());
    std::fflush(stderr);
  }
  AbortMpiJob(kCollectiveTimedOut, "a collective timed out: ending every rank");
}

}  // namespace cnnbench::bench
