// The collectives' flags (nccl-tests' names: -b/-e, -f, -d, -o, -r, -w, -n,
// -G) and the older allreduce_* aliases, read into SuiteOptions::collectives;
// errors name the flag.
#include "bench/cases/collective/collective_cases.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
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
ABSL_FLAG(int, collective_factor, 2,
          "the collective cases' size sweep: each size this many times the one before, from "
          "--collective_bytes' first to its last (nccl-tests' -f; 2 or more; default: the "
          "preset's, 2, or 16 in quick)");
ABSL_FLAG(bool, collective_graph, false,
          "nccl cases: capture each variant's timed loop once as a CUDA graph and replay it (as "
          "nccl-tests' -G; default false, nccl-tests' -G 0: every call enqueued)");
ABSL_FLAG(int, collective_root, 0,
          "the root rank of the broadcast and reduce cases (nccl-tests' -r; a case with fewer "
          "ranks is skipped)");

namespace cnnbench::bench {
namespace {

// A count flag under its name or its older one: the one given (both given
// must agree), else -1.
absl::StatusOr<int> AliasedCount(const absl::Flag<int>& flag, const absl::Flag<int>& older,
                                 int least, const FlagGiven& given_flag) {
  const absl::CommandLineFlag& a = absl::GetFlagReflectionHandle(flag);
  const absl::CommandLineFlag& b = absl::GetFlagReflectionHandle(older);
  const bool given_a = given_flag(a), given_b = given_flag(b);
  if (given_a && given_b && absl::GetFlag(flag) != absl::GetFlag(older))
    return absl::InvalidArgumentError(absl::StrCat("--", a.Name(), "=", absl::GetFlag(flag),
                                                   " and --", b.Name(), "=", absl::GetFlag(older),
                                                   " disagree (the second is the first's older "
                                                   "name): give one of them"));
  if (!given_a && !given_b) return -1;
  const std::string name(given_a ? a.Name() : b.Name());
  const int value = given_a ? absl::GetFlag(flag) : absl::GetFlag(older);
  if (value < least)
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, "=", value, ": must be a whole number >= ", least));
  return value;
}

// A string flag under its name or its older one: {name, value} of the one
// given (both given must agree), or an empty name.
absl::StatusOr<std::pair<std::string, std::string>> AliasedText(
    const absl::Flag<std::string>& flag, const absl::Flag<std::string>& older,
    const FlagGiven& given_flag) {
  const absl::CommandLineFlag& a = absl::GetFlagReflectionHandle(flag);
  const absl::CommandLineFlag& b = absl::GetFlagReflectionHandle(older);
  const bool given_a = given_flag(a), given_b = given_flag(b);
  if (given_a && given_b && absl::GetFlag(flag) != absl::GetFlag(older))
    return absl::InvalidArgumentError(absl::StrCat(
        "--", a.Name(), "=", absl::GetFlag(flag), " and --", b.Name(), "=", absl::GetFlag(older),
        " disagree (the second is the first's older name): give one of them"));
  const std::pair<std::string, std::string> chosen =
      given_a   ? std::make_pair(std::string(a.Name()), absl::GetFlag(flag))
      : given_b ? std::make_pair(std::string(b.Name()), absl::GetFlag(older))
                : std::make_pair(std::string(), std::string());
  if (!chosen.first.empty() && chosen.second.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("--", chosen.first, " is empty (leave it out for the preset's)"));
  return chosen;
}

}  // namespace

absl::StatusOr<std::vector<std::pair<std::string, DType>>> CollectiveDTypes(
    const std::string& flag, const std::vector<std::string>& preset) {
  std::vector<std::string> names = preset;
  if (!flag.empty()) names = absl::StrSplit(flag, ',');
  std::vector<std::pair<std::string, DType>> out;
  for (const std::string& name : names) {
    const absl::StatusOr<DType> dtype = ParseDType(name);
    if (!dtype.ok() || !ReducedType(*dtype))
      return absl::InvalidArgumentError(
          absl::StrCat("--collective_dtypes: '", name,
                       "' is not an element type the collectives reduce (fp32, fp16, bf16, "
                       "fp64, int32, int64)"));
    // By its canonical name, as case names spell it; one type twice (fp32
    // and float) is refused, as every list flag refuses a repeat.
    const std::string canonical(DTypeName(*dtype));
    if (std::any_of(out.begin(), out.end(), [&](const auto& d) { return d.first == canonical; }))
      return absl::InvalidArgumentError(absl::StrCat(
          "--collective_dtypes: '", name, "' is ", canonical, ", which is given twice"));
    out.emplace_back(canonical, *dtype);
  }
  if (out.empty()) return absl::InvalidArgumentError("--collective_dtypes: no element type");
  return out;
}

absl::StatusOr<std::vector<ReduceOp>> CollectiveOps(const std::string& flag,
                                                    const std::vector<std::string>& preset) {
  std::vector<std::string> names = preset;
  if (!flag.empty()) names = absl::StrSplit(flag, ',');
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

absl::Status ApplyCollectiveFlags(SuiteOptions& o, const FlagGiven& given) {
  CollectiveCaseOptions& c = o.collectives;
  ASSIGN_OR_RETURN_AS_IS(const int warmup,
                         AliasedCount(FLAGS_collective_warmup, FLAGS_allreduce_warmup, 0, given));
  if (warmup >= 0) c.warmup = warmup;
  ASSIGN_OR_RETURN_AS_IS(const int iters,
                         AliasedCount(FLAGS_collective_iters, FLAGS_allreduce_iters, 1, given));
  if (iters >= 0) c.iters = iters;
  ASSIGN_OR_RETURN_AS_IS(const auto ranks,
                         AliasedText(FLAGS_collective_ranks, FLAGS_allreduce_ranks, given));
  if (!ranks.first.empty()) {
    std::vector<int> counts;
    for (absl::string_view part : absl::StrSplit(ranks.second, ',')) {
      int value = 0;
      if (!absl::SimpleAtoi(part, &value) || value < 1)
        return absl::InvalidArgumentError(absl::StrCat("--", ranks.first, "=", ranks.second, ": '",
                                                       part, "' is not a rank count >= 1"));
      if (value > kMaxThreadRanks)
        return absl::InvalidArgumentError(
            absl::StrCat("--", ranks.first, "=", ranks.second, ": '", part, "' is more than ",
                         kMaxThreadRanks, " ranks (each a thread of this process; more ranks "
                         "are processes: mpirun)"));
      if (std::find(counts.begin(), counts.end(), value) != counts.end())
        return absl::InvalidArgumentError(
            absl::StrCat("--", ranks.first, "=", ranks.second, ": '", part, "' is given twice"));
      counts.push_back(value);
    }
    c.ranks = std::move(counts);
  }
  ASSIGN_OR_RETURN_AS_IS(const auto bytes,
                         AliasedText(FLAGS_collective_bytes, FLAGS_allreduce_bytes, given));
  if (!bytes.first.empty()) {
    std::vector<int64_t> range;
    for (absl::string_view part : absl::StrSplit(bytes.second, ',')) {
      const absl::StatusOr<int64_t> value = ParseByteCount(part);
      if (!value.ok())
        return absl::InvalidArgumentError(
            absl::StrCat("--", bytes.first, "=", bytes.second, ": ", value.status().message()));
      range.push_back(*value);
    }
    if (range.size() != 2 || range[0] < 1 || range[1] < range[0])
      return absl::InvalidArgumentError(
          absl::StrCat("--", bytes.first, "=", bytes.second,
                       ": give MIN,MAX with 1 <= MIN <= MAX (bytes, or with nccl-tests' K, M or "
                       "G suffix: 1K,1G)"));
    c.min_bytes = range[0];
    c.max_bytes = range[1];
  }
  // The preset's factor unless the flag is given (quick steps by 16).
  if (given(absl::GetFlagReflectionHandle(FLAGS_collective_factor)))
    c.factor = absl::GetFlag(FLAGS_collective_factor);
  if (c.factor < 2)
    return absl::InvalidArgumentError(absl::StrCat(
        "--collective_factor=", c.factor, ": the size sweep's step factor must be 2 or more"));
  c.graph = absl::GetFlag(FLAGS_collective_graph);
  c.root = absl::GetFlag(FLAGS_collective_root);
  if (c.root < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("--collective_root=", c.root, ": a root is a rank, 0 or more"));
  const std::string dtypes = absl::GetFlag(FLAGS_collective_dtypes);
  ASSIGN_OR_RETURN_AS_IS(const auto types, CollectiveDTypes(dtypes, c.dtypes));
  c.dtypes.clear();
  for (const auto& [name, dtype] : types) c.dtypes.push_back(name);
  ASSIGN_OR_RETURN_AS_IS(const auto ops, CollectiveOps(absl::GetFlag(FLAGS_collective_ops), c.ops));
  c.ops.clear();
  for (ReduceOp op : ops) c.ops.emplace_back(ReduceOpName(op));
  return absl::OkStatus();
}

void AddCollectiveContext(const SuiteOptions& o) {
  benchmark::AddCustomContext("collective_warmup", absl::StrCat(o.collectives.warmup));
  benchmark::AddCustomContext("collective_iters", absl::StrCat(o.collectives.iters));
  benchmark::AddCustomContext("collective_root", absl::StrCat(o.collectives.root));
  benchmark::AddCustomContext("collective_graph", o.collectives.graph ? "true" : "false");
}

}  // namespace cnnbench::bench
