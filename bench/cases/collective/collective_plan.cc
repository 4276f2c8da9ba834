// The collective cases' plan and registration: which transports, rank
// counts, element types, reductions and sizes a sweep makes (nccl-tests'
// -b/-e/-f, -d, -o, capped at half the memory), what it left out, and the
// communicators each transport and rank count shares for the run.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/cases/collective/collective_cases.h"
#include "bench/harness/harness.h"
#include "bench/suite/names.h"
#include "bench/suite/suite.h"
#include "core/device.h"
#include "core/status.h"
#include "kernels/collectives/communicator.h"

namespace cnnbench::bench {
namespace {

// The communicators of one transport and rank count, made when its first
// case is prepared and kept for the rest of the sweep (nccl-tests makes its
// communicators once), shared by every collective family of the run.
class GroupCache {
 public:
  explicit GroupCache(const SuiteOptions& options) : options_(options) {}
  absl::StatusOr<std::shared_ptr<CommunicatorGroup>> Get(const std::string& transport, int ranks) {
    auto it = groups_.find({transport, ranks});
    if (it != groups_.end()) return it->second;
    const bool gpus = transport == "nccl";
    if (gpus && options_.mpi == nullptr && ranks > options_.gpu_count)
      return absl::UnimplementedError(absl::StrCat("unsupported: ranks:", ranks, " needs ", ranks,
                                                   " GPUs, ", options_.gpu_count, " visible"));
    ASSIGN_OR_RETURN(ReplicaPlacement placement, PlaceReplicas(options_, gpus ? ranks : 0, ranks));
    auto group = std::make_shared<CommunicatorGroup>();
    group->comms = std::move(placement.group);
    group->devices = std::move(placement.devices);
    groups_[{transport, ranks}] = group;
    return group;
  }

 private:
  const SuiteOptions& options_;
  std::map<std::pair<std::string, int>, std::shared_ptr<CommunicatorGroup>> groups_;
};

// What a transport and rank count's sweep left out, one note each, as
// nccl-tests says "Reducing maxBytes to N due to memory limitation": sizes
// up to `too_small` that leave a rank nothing, sizes from `past_memory`
// whose buffers pass half of `memory`, and a sweep with nothing left.
void NoteLeftOut(Collective collective, const std::string& transport, int ranks,
                 const CollectiveCaseOptions& c, int64_t too_small, int64_t past_memory,
                 double memory, bool none_left, std::vector<std::string>& notes) {
  const std::string where =
      absl::StrCat(CollectiveName(collective), "/", transport, " ranks ", ranks, ": ");
  if (too_small > 0)
    notes.push_back(absl::StrCat(
        where, "sizes up to ", too_small, " bytes left out: under ",
        !PartsPerRank(collective)
            ? "one element"
            : absl::StrCat(kRankPartAlignment, " bytes per rank (nccl-tests' rounding)")));
  if (past_memory > 0)
    notes.push_back(absl::StrCat(
        where, "sizes from ", past_memory, " bytes left out (--collective_bytes asks up to ",
        c.max_bytes, "): the buffers would pass half of ",
        transport == "nccl" ? "the GPU's free memory" : "the host's memory", " (",
        static_cast<int64_t>(memory), " bytes), as nccl-tests reduces maxBytes"));
  if (none_left)
    notes.push_back(absl::StrCat(where, "no size of --collective_bytes=", c.min_bytes, ",",
                                 c.max_bytes, " is left: no case"));
}

}  // namespace

std::vector<std::pair<std::string, std::vector<int>>> CollectiveTransports(
    const SuiteOptions& options) {
  std::vector<std::pair<std::string, std::vector<int>>> transports;
  if (options.mpi != nullptr) {
    transports.push_back({"mpi", {options.mpi->size}});
    if (options.gpu_count > 0) transports.push_back({"nccl", {options.mpi->size}});
    return transports;
  }
  transports.push_back({"local", options.collectives.ranks});
  std::vector<int> gpus;
  for (int g : options.gpus)
    if (g > 0 && std::find(gpus.begin(), gpus.end(), g) == gpus.end()) gpus.push_back(g);
  if (options.gpu_count > 0 && !gpus.empty()) transports.push_back({"nccl", gpus});
  return transports;
}

absl::StatusOr<std::vector<PlannedCollectiveCase>> PlanCollectiveCases(
    Collective collective, const SuiteOptions& options, double host_memory, double gpu_memory,
    std::vector<std::string>* notes) {
  const CollectiveCaseOptions& c = options.collectives;
  ASSIGN_OR_RETURN_AS_IS(const auto dtypes, CollectiveDTypes("", c.dtypes));
  ASSIGN_OR_RETURN_AS_IS(const auto ops, CollectiveOps("", c.ops));
  if (c.factor < 2) return absl::InvalidArgumentError("the size sweep's factor must be 2 or more");
  const std::vector<ReduceOp> reductions =
      !Reduces(collective) ? std::vector<ReduceOp>{ReduceOp::kSum} : ops;
  const std::string family(CollectiveName(collective));
  std::vector<PlannedCollectiveCase> plan;
  for (const auto& [transport, rank_counts] : CollectiveTransports(options))
    for (int ranks : rank_counts) {
      // What this transport and rank count left out, said once.
      int64_t too_small = 0;    // the largest size ShapeOf leaves nothing of
      int64_t past_memory = 0;  // the first size whose buffers do not fit
      double memory = 0;
      size_t planned_before = plan.size();
      for (const auto& [dtype_name, dtype] : dtypes)
        for (ReduceOp op : reductions) {
          std::set<int64_t> sizes;  // rounding may give one size twice
          for (int64_t bytes = std::max<int64_t>(c.min_bytes, 1); bytes <= c.max_bytes;
               bytes *= c.factor) {
            const CollectiveShape shape = ShapeOf(collective, SizeOf(dtype), bytes, ranks);
            if (shape.count == 0) too_small = std::max(too_small, bytes);
            if (shape.count == 0 || !sizes.insert(shape.bytes).second) continue;
            PlannedCollectiveCase planned;
            planned.transport = transport;
            planned.ranks = ranks;
            planned.shape = shape;
            planned.bytes_per_rank =
                static_cast<double>(shape.send_elements + shape.recv_elements) * SizeOf(dtype);
            // Host memory holds every rank's buffers of this machine (an MPI
            // job's ranks may share it); a GPU holds its own rank's.
            const bool fits = transport == "nccl"
                                  ? gpu_memory <= 0 || planned.bytes_per_rank <= gpu_memory / 2
                                  : planned.bytes_per_rank * ranks <= host_memory / 2;
            if (!fits) {
              if (past_memory == 0 || bytes < past_memory) past_memory = bytes;
              memory = transport == "nccl" ? gpu_memory : host_memory;
              break;
            }
            planned.name = CollectiveCaseName(family, transport, dtype_name,
                                              !Reduces(collective) ? "none" : ReduceOpName(op),
                                              shape.bytes, ranks);
            planned.spec.collective = collective;
            planned.spec.op = op;
            planned.spec.dtype = dtype;
            planned.spec.bytes = shape.bytes;
            planned.spec.root = c.root;
            planned.spec.warmup = c.warmup;
            planned.spec.iterations = c.iters;
            planned.spec.graph = transport == "nccl" && c.graph;
            plan.push_back(std::move(planned));
          }
        }
      if (notes != nullptr)
        NoteLeftOut(collective, transport, ranks, c, too_small, past_memory, memory,
                    plan.size() == planned_before, *notes);
    }
  return plan;
}

absl::Status RegisterCollectiveCases(const SuiteOptions& options, Harness& harness) {
  const double host_memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  double gpu_memory = 0;  // unknown: no cap
  if (options.gpu_count > 0) {
    const Device first =
        Device::Cuda(options.mpi != nullptr ? options.mpi->local_rank % options.gpu_count : 0);
    if (absl::StatusOr<size_t> free = AvailableMemory(first); free.ok())
      gpu_memory = static_cast<double>(*free);
  }
  // One set of communicators per transport and rank count for the whole
  // run, every wanted collective family's cases sharing it, freed with them.
  auto groups = std::make_shared<GroupCache>(options);
  for (Collective collective : kCollectives) {
    const std::string family(CollectiveName(collective));
    if (std::find(options.families.begin(), options.families.end(), family) ==
        options.families.end())
      continue;
    std::vector<std::string> notes;
    ASSIGN_OR_RETURN_AS_IS(
        std::vector<PlannedCollectiveCase> plan,
        PlanCollectiveCases(collective, options, host_memory, gpu_memory, &notes));
    // Said before the run (rank 0 only under MPI), never silently dropped.
    if (options.mpi == nullptr || options.mpi->rank == 0)
      for (const std::string& note : notes)
        std::fprintf(stderr, "cnnbench: note: %s\n", note.c_str());
    for (PlannedCollectiveCase& planned : plan) {
      TimedCase timed = CollectiveTimedCase(planned.name, planned.spec);
      timed.prepare = [transport = planned.transport, ranks = planned.ranks, spec = planned.spec,
                       groups, &options]() -> absl::StatusOr<std::unique_ptr<Workload>> {
        auto group = groups->Get(transport, ranks);
        if (!group.ok()) return EndJobOnTimeout(options, group.status());
        auto workload = PrepareCollectiveWorkload(*group, spec);
        if (!workload.ok()) return EndJobOnTimeout(options, workload.status());
        return workload;
      };
      harness.Register(std::move(timed));
    }
  }
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
