// The collectives' flags (nccl-tests' names: -b/-e, -f, -d, -o, -r, -w, -n,
// -G) and the older allreduce_* aliases, read into SuiteOptions::collectives;
// errors name the flag.
#include "bench/cases/collective/collective_cases.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/cli/flag_read.h"
#include "bench/cli/flag_values.h"
#include "bench/suite/suite.h"
#include "benchmark/benchmark.h"
#include "core/status.h"
#include "kernels/collectives/communicator.h"

// Defined beside the only code that reads them (ApplyCollectiveFlags); the
// allreduce_* names are the older ones, kept as aliases.
ABSL_FLAG(std::string, collective_ranks, "",
          "rank counts of the collective cases (local) and the grads/local cases, e.g. 1,2,4 "
          "(1: a plain copy, the memory's own rate as a baseline; default: the preset's)");
ABSL_FLAG(std::string, allreduce_ranks, "", "the older name of --collective_ranks");
ABSL_FLAG(std::string, collective_bytes, "",
          "the collective cases' smallest and largest size in bytes, MIN,MAX, each with an "
          "optional K, M or G suffix (nccl-tests' -b and -e, 1K,1G; its size: the buffer of "
          "all-reduce, broadcast and reduce, the gathered buffer of all-gather, the scattered "
          "one of reduce-scatter)");
ABSL_FLAG(std::string, allreduce_bytes, "", "the older name of --collective_bytes");
ABSL_FLAG(int, collective_warmup, -1,
          "untimed calls of each variant when a collective case is prepared, before its first "
          "timed loop (default: the preset's, 5; nccl-tests' -w is 1 per size, run over every "
          "size before any is timed)");
ABSL_FLAG(int, allreduce_warmup, -1, "the older name of --collective_warmup");
ABSL_FLAG(int, collective_iters, -1,
          "timed calls per variant and repetition of a collective case, the same on every rank "
          "(default: the preset's, 20, as nccl-tests' -n)");
ABSL_FLAG(int, allreduce_iters, -1, "the older name of --collective_iters");
ABSL_FLAG(std::string, collective_dtypes, "",
          "element types of the collective cases, e.g. fp32,bf16,int64 (of fp32, fp16, bf16, "
          "fp64, int32, int64; default: the preset's, fp32, as nccl-tests' -d float)");
ABSL_FLAG(std::string, collective_ops, "",
          "reductions of the reducing collective cases, e.g. sum,max (of sum, prod, max, min, "
          "avg; all: every one, as nccl-tests' -o all; default: the preset's, sum)");
ABSL_FLAG(int, collective_factor, cnnbench::bench::CollectiveCaseOptions().factor,
          "the collective cases' size sweep: each size this many times the one before, from "
          "--collective_bytes' first to its last (nccl-tests' -f; 2 or more; default: the "
          "preset's, 2, or 16 in quick)");
ABSL_FLAG(bool, collective_graph, cnnbench::bench::CollectiveCaseOptions().graph,
          "nccl cases: capture each variant's timed loop once as a CUDA graph and replay it (as "
          "nccl-tests' -G; default false, nccl-tests' -G 0: every call enqueued)");
ABSL_FLAG(int, collective_root, cnnbench::bench::CollectiveCaseOptions().root,
          "the root rank of the rooted collective cases: broadcast, reduce, gather and scatter "
          "(nccl-tests' -r; a case with fewer ranks is skipped)");

namespace cnnbench::bench {
namespace {

// --collective_ranks: thread rank counts, a list (flag_read.h's ParseList),
// each 1..kMaxThreadRanks.
absl::StatusOr<std::vector<int>> ParseRankCounts(const std::string& text) {
  ASSIGN_OR_RETURN_AS_IS(std::vector<int> counts, ParseList<int>(text, 1));
  for (int value : counts)
    if (value > kMaxThreadRanks)
      return absl::InvalidArgumentError(
          absl::StrCat("'", value, "' is more than ", kMaxThreadRanks,
                       " ranks (each a thread of this process; more ranks are processes: mpirun)"));
  return counts;
}

// --collective_bytes: MIN,MAX.
absl::StatusOr<std::pair<int64_t, int64_t>> ParseByteRange(const std::string& text) {
  std::vector<int64_t> range;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    ASSIGN_OR_RETURN_AS_IS(const int64_t value, ParseByteCount(part));
    range.push_back(value);
  }
  if (range.size() != 2 || range[0] < 1 || range[1] < range[0])
    return absl::InvalidArgumentError(
        "give MIN,MAX with 1 <= MIN <= MAX (bytes, or with nccl-tests' K, M or G suffix: 1K,1G)");
  return std::make_pair(range[0], range[1]);
}

}  // namespace

absl::StatusOr<std::vector<std::pair<std::string, DType>>> CollectiveDTypes(
    const std::string& flag, const std::vector<std::string>& preset) {
  std::vector<std::string> names = preset;
  if (!flag.empty()) {
    absl::StatusOr<std::vector<std::string>> given = ParseList<std::string>(flag);
    if (!given.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("--collective_dtypes=", flag, ": ", given.status().message()));
    names = *std::move(given);
  }
  std::vector<std::pair<std::string, DType>> out;
  std::vector<std::string> spelled;  // as given, beside `out`
  for (const std::string& name : names) {
    const absl::StatusOr<DType> dtype = ParseDType(name);
    if (!dtype.ok() || !ReducedType(*dtype))
      return absl::InvalidArgumentError(
          absl::StrCat("--collective_dtypes: '", name,
                       "' is not an element type the collectives reduce (fp32, fp16, bf16, "
                       "fp64, int32, int64)"));
    // By its canonical name, as case names spell it; one type under two
    // names (fp32 and nccl-tests' float) is refused, as every list flag
    // refuses a repeat.
    const std::string canonical(DTypeName(*dtype));
    const auto earlier =
        std::find_if(out.begin(), out.end(), [&](const auto& d) { return d.first == canonical; });
    if (earlier != out.end())
      return absl::InvalidArgumentError(
          absl::StrCat("--collective_dtypes: '", spelled[earlier - out.begin()], "' and '", name,
                       "' are the same type (", canonical,
                       "; nccl-tests' names are read as the suite's): give it once"));
    out.emplace_back(canonical, *dtype);
    spelled.push_back(name);
  }
  if (out.empty()) return absl::InvalidArgumentError("--collective_dtypes: no element type");
  return out;
}

absl::StatusOr<std::vector<ReduceOp>> CollectiveOps(const std::string& flag,
                                                    const std::vector<std::string>& preset) {
  std::vector<std::string> names = preset;
  if (!flag.empty()) {
    absl::StatusOr<std::vector<std::string>> given = ParseList<std::string>(flag);
    if (!given.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("--collective_ops=", flag, ": ", given.status().message()));
    names = *std::move(given);
  }
  if (names.size() == 1 && names[0] == "all")  // nccl-tests' -o all, in its order
    names = {"sum", "prod", "max", "min", "avg"};
  else if (std::find(names.begin(), names.end(), "all") != names.end())
    return absl::InvalidArgumentError(
        "--collective_ops: 'all' stands alone (every reduction); give it or a list of them");
  std::vector<ReduceOp> out;
  for (const std::string& name : names) {
    const ReduceOp* op = std::find_if(std::begin(kReduceOps), std::end(kReduceOps),
                                      [&](ReduceOp o) { return ReduceOpName(o) == name; });
    if (op == std::end(kReduceOps))
      return absl::InvalidArgumentError(absl::StrCat(
          "--collective_ops: '", name, "' is not a reduction (sum, prod, max, min, avg, or all)"));
    if (std::find(out.begin(), out.end(), *op) != out.end())
      return absl::InvalidArgumentError(
          absl::StrCat("--collective_ops: '", name, "' is given twice"));
    out.push_back(*op);
  }
  if (out.empty()) return absl::InvalidArgumentError("--collective_ops: no reduction");
  return out;
}

absl::Status ApplyCollectiveFlags(SuiteOptions& o) {
  CollectiveCaseOptions& c = o.collectives;
  RETURN_IF_ERROR_AS_IS(
      ReadAliasedCount(FLAGS_collective_warmup, FLAGS_allreduce_warmup, 0, &c.warmup));
  RETURN_IF_ERROR_AS_IS(ReadAliasedCount(FLAGS_collective_iters, FLAGS_allreduce_iters, 1, &c.iters));
  RETURN_IF_ERROR_AS_IS(
      ReadAliasedText(FLAGS_collective_ranks, FLAGS_allreduce_ranks, ParseRankCounts, &c.ranks));
  std::pair<int64_t, int64_t> bytes = {c.min_bytes, c.max_bytes};
  RETURN_IF_ERROR_AS_IS(
      ReadAliasedText(FLAGS_collective_bytes, FLAGS_allreduce_bytes, ParseByteRange, &bytes));
  std::tie(c.min_bytes, c.max_bytes) = bytes;
  // The preset's factor unless the flag is given (quick steps by 16).
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_collective_factor, 2, &c.factor));
  RETURN_IF_ERROR_AS_IS(ReadValue(FLAGS_collective_graph, &c.graph));
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_collective_root, 0, &c.root));
  if (FlagGiven(FLAGS_collective_dtypes)) {
    ASSIGN_OR_RETURN_AS_IS(const auto types,
                           CollectiveDTypes(absl::GetFlag(FLAGS_collective_dtypes), c.dtypes));
    c.dtypes.clear();
    for (const auto& [name, dtype] : types) c.dtypes.push_back(name);
  }
  if (FlagGiven(FLAGS_collective_ops)) {
    ASSIGN_OR_RETURN_AS_IS(const auto ops, CollectiveOps(absl::GetFlag(FLAGS_collective_ops), c.ops));
    c.ops.clear();
    for (ReduceOp op : ops) c.ops.emplace_back(ReduceOpName(op));
  }
  return absl::OkStatus();
}

void AddCollectiveContext(const SuiteOptions& o) {
  benchmark::AddCustomContext("collective_warmup", absl::StrCat(o.collectives.warmup));
  benchmark::AddCustomContext("collective_iters", absl::StrCat(o.collectives.iters));
  benchmark::AddCustomContext("collective_root", absl::StrCat(o.collectives.root));
  benchmark::AddCustomContext("collective_graph", o.collectives.graph ? "true" : "false");
}

}  // namespace cnnbench::bench
