// Benchmark case names (built in one place, parsed back, checked against
// the grammar of docs/benchmarks.md), the table of case families and the
// table of model display names: the one list of each that the suite, its
// tools and the report read.
//   train/<model>/<precision>/<data>/batch:<B>/gpus:<G>        gpus:0 = the CPU
//   train/<model>/<precision>/<data>/batch:<B>/gpus:0/replicas:<R>   R >= 2 CPU replicas
//   infer/<model>/<precision>/<data>/batch:<B>/gpus:<G>        G: 0 (the CPU) or 1
//   conv/<fwd|bwd_data|bwd_filter>/<precision>/<device>/<shape>
//   fc/<fwd|bwd_data|bwd_filter>/<precision>/<device>/<shape>
//   pool/<max|avg>/<fwd|bwd>/<precision>/<device>/<shape>
//   batchnorm/<fwd|bwd>/<precision>/<device>/<shape>
//   relu/<fwd|bwd>/<precision>/<device>/<shape>
//   gemm/<precision>/<device>/<shape>
//   <collective>/<nccl|mpi|local>/<dtype>/<op>/bytes:<S>/ranks:<N>
//       collective: allreduce, allgather, reducescatter, broadcast, reduce, alltoall,
//       gather, scatter;
//       op: sum, prod, max, min, avg (none: allgather, broadcast, alltoall, gather, scatter)
//   grads/<model>/<nccl|mpi|local>/bucket_mb:<M>/ranks:<N>
//   input/<tfrecord|folder>/<preprocess>/threads:<T>
//   peak/<fp32|bf16>/cpu/threads:<T>
//   peak/<fp32|tf32|fp16|bf16|fp8>/cuda[:N]/<fma|gemm:m<M>n<N>k<K>>   fp32: fma
//   bandwidth/<copy|triad|d2d|h2d|d2h>/<device>/bytes:<S>/threads:<T>
#ifndef CNNBENCH_BENCH_NAMES_H_
#define CNNBENCH_BENCH_NAMES_H_

#include <array>
#include <cstdint>
#include <iterator>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels/collectives/communicator.h"
#include "kernels/op_traits.h"

namespace cnnbench::bench {

// Every case family, in the order the suite registers them. A family's
// value is the index of its entry in CaseFamilies() and in every table that
// dispatches by family (the suite's registration, the report's results):
// each such table is a FamilyTable, whose entries name their family and have
// no default constructor, checked with InFamilyOrder, so a family added here
// (before kCount) fails to build until each table has its entry, in its
// place.
enum class Family : int {
  kTrain,
  kConv,
  kFc,
  kPool,
  kBatchNorm,
  kRelu,
  kGemm,
  kAllReduce,  // the collectives, as nccl-tests' binaries: all_reduce_perf, ...
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kGather,
  kScatter,
  kGrads,
  kInput,
  kPeak,
  kBandwidth,
  kInfer,
  kCount,  // not a family: how many there are
};
inline constexpr size_t kFamilyCount = static_cast<size_t>(Family::kCount);
// The collectives' families, kAllReduce .. kScatter: one per Collective, in
// its order (FamilyOf), each named, parsed and printed from the collective's
// traits (kernels/collectives/communicator.h); one workload
// (bench/cases/collective/collective_cases.cc), one table layout (nccl-tests').
inline constexpr bool IsCollectiveFamily(Family f) {
  return f >= Family::kAllReduce && f <= Family::kScatter;
}
constexpr Family FamilyOf(Collective c) {
  return static_cast<Family>(static_cast<int>(Family::kAllReduce) + static_cast<int>(c));
}
static_assert(static_cast<size_t>(Family::kScatter) - static_cast<size_t>(Family::kAllReduce) + 1 ==
                  std::size(kCollectives),
              "one case family per Collective, in its order, from kAllReduce to the last "
              "collective's (IsCollectiveFamily's bound)");

// One family's entry of a family-indexed table (FamilyTable<T>): the family
// it is for and its value. It has no default, so an initializer that leaves
// a family out does not compile, and InFamilyOrder checks at compile time
// that entry i is family i's, so a row in another's place does not either.
template <typename T>
struct FamilyEntry {
  constexpr FamilyEntry(Family family, T v) : family(family), value(v) {}
  Family family;
  T value;
};
template <typename T>
using FamilyTable = std::array<FamilyEntry<T>, kFamilyCount>;
// Whether each entry stands in its family's place: static_assert it beside
// every FamilyTable.
template <typename T>
constexpr bool InFamilyOrder(const FamilyTable<T>& table) {
  for (size_t i = 0; i < table.size(); ++i)
    if (static_cast<size_t>(table[i].family) != i) return false;
  return true;
}

// The case family of each kernel-case family an op's traits name
// (kernels/op_traits.h BenchFact::family), keyed by KernelCaseFamily: entry
// i is KernelCaseFamily i's, checked at compile time below, so a kernel-case
// family added to op_traits.h does not build until it has its case family
// here (and names_test checks that family's name grammar takes the op's
// descriptors and passes).
struct KernelCaseFamilyEntry {
  KernelCaseFamily kernel;
  Family family;
};
inline constexpr std::array<KernelCaseFamilyEntry, kKernelCaseFamilyCount> kKernelCaseFamilies = {{
    {KernelCaseFamily::kConv, Family::kConv},
    {KernelCaseFamily::kFc, Family::kFc},
    {KernelCaseFamily::kPool, Family::kPool},
    {KernelCaseFamily::kBatchNorm, Family::kBatchNorm},
    {KernelCaseFamily::kRelu, Family::kRelu},
}};
constexpr bool KernelCaseFamiliesInOrder() {
  for (size_t i = 0; i < kKernelCaseFamilies.size(); ++i) {
    if (static_cast<size_t>(kKernelCaseFamilies[i].kernel) != i) return false;
    if (kKernelCaseFamilies[i].family == Family::kCount) return false;
    for (size_t j = 0; j < i; ++j)
      if (kKernelCaseFamilies[j].family == kKernelCaseFamilies[i].family) return false;
  }
  return true;
}
static_assert(KernelCaseFamiliesInOrder(),
              "kKernelCaseFamilies: one entry per KernelCaseFamily, in its order, each a "
              "distinct case family");
constexpr Family CaseFamilyOf(KernelCaseFamily kernel) {
  return kKernelCaseFamilies[static_cast<size_t>(kernel)].family;
}

struct CaseName;

// A case family: its name grammar (parse and print), and what its tables
// print. Every field is given: there is no default-constructed family, so
// CaseFamilies()' array cannot leave one out.
struct CaseFamily {
  // Parses a name already split at '/' (parts[0] is the family's name).
  using Parser = absl::StatusOr<CaseName> (*)(const std::vector<std::string>& parts,
                                              const CaseFamily& family);
  using Printer = std::string (*)(const CaseName& name);

  CaseFamily(Family id, std::string name, std::string grammar, size_t parts,
             std::vector<std::string> passes, std::string shape_kind, std::string counter,
             bool registered, bool spans_ranks, Parser parse, Printer print)
      : id(id),
        name(std::move(name)),
        grammar(std::move(grammar)),
        parts(parts),
        passes(std::move(passes)),
        shape_kind(std::move(shape_kind)),
        counter(std::move(counter)),
        registered(registered),
        spans_ranks(spans_ranks),
        parse(parse),
        print(print) {}

  Family id;
  std::string name;     // "conv"
  std::string grammar;  // "conv/<fwd|bwd_data|bwd_filter>/<precision>/<device>/<shape>"
  size_t parts;         // '/'-separated parts of a name
  // Kernel families: the passes a name carries and the prefix of its
  // descriptor string ("bn" for batchnorm); empty for the others.
  std::vector<std::string> passes;
  std::string shape_kind;
  std::string counter;  // what tables print: images_per_second, flops, bytes_per_second, busbw
  bool registered;      // whether //bench:all registers it (--families)
  // Whether its cases span the ranks of an MPI job (what such a job runs;
  // the others would time the same thing on every process).
  bool spans_ranks;
  Parser parse;
  Printer print;
};

// Every family, in Family's order.
const std::array<CaseFamily, kFamilyCount>& CaseFamilies();
// The family, or null.
const CaseFamily* FindCaseFamily(absl::string_view name);
// A family's entry and name, by id: how code names a family (a misspelt id
// does not compile, where a misspelt string is a silent mismatch).
inline const CaseFamily& FamilyOf(Family id) { return CaseFamilies()[static_cast<size_t>(id)]; }
inline const std::string& FamilyName(Family id) { return FamilyOf(id).name; }
// "train, conv, ..., allreduce": what --families accepts.
std::string RegisteredFamilyList();
// "train, allreduce and grads": the families whose cases span an MPI job's ranks.
std::string SpanningFamilyList();

// One case's name, parsed. ToString() is the one printer of names.
struct CaseName {
  std::string family;                  // a CaseFamilies() name
  std::string model, precision, data;  // train, infer
  int64_t batch = 0;                   // per replica
  int gpus = 0;                        // GPU replicas (every rank's together); 0: the CPU
  int replicas = 1;                    // CPU replicas (threads or processes), with gpus:0
  std::string pass;                    // fwd, bwd_data, bwd_filter, bwd
  std::string algorithm;               // pool: max, avg; bandwidth: copy, triad, d2d, h2d, d2h
  std::string device;                  // cpu, cuda:0
  std::string shape;                   // canonical descriptor string
  std::string impl, dtype;             // collectives; grads: impl (and model)
  std::string op;                      // collectives: sum, prod, max, min, avg; none (copies)
  // Collectives: nccl-tests' size (the one buffer; all-gather's gathered
  // and reduce-scatter's scattered buffer); grads: the bucket size.
  int64_t bytes = 0;
  int ranks = 0;
  std::string source, preprocess;  // input
  int threads = 0;  // input: decode threads; peak, bandwidth: the OpenMP team (GPU copies: 1)

  static CaseName Train(absl::string_view model, absl::string_view precision,
                        absl::string_view data, int64_t batch, int gpus, int replicas = 1);
  // One batch's forward pass for inference, on the CPU (gpus 0) or one GPU.
  static CaseName Infer(absl::string_view model, absl::string_view precision,
                        absl::string_view data, int64_t batch, int gpus);
  // Pool's `pass` is "max/fwd" etc. (algorithm/pass), as in the name.
  static CaseName Kernel(Family family, absl::string_view pass,
                         absl::string_view precision, absl::string_view device,
                         absl::string_view shape);
  // `family`: a collective's (allreduce, allgather, ...).
  static CaseName Collective(absl::string_view family, absl::string_view impl,
                             absl::string_view dtype, absl::string_view op, int64_t bytes,
                             int ranks);
  static CaseName Grads(absl::string_view model, absl::string_view impl, int64_t bucket_mb,
                        int ranks);
  static CaseName Input(absl::string_view source, absl::string_view preprocess, int threads);
  // The CPU's arithmetic peak: fp32 or bf16 fused multiply-adds on `threads` threads.
  static CaseName Peak(absl::string_view precision, int threads);
  // A GPU's: `how` is "fma" (fp32) or the tensor-core GEMM's descriptor.
  static CaseName GpuPeak(absl::string_view precision, absl::string_view device,
                          absl::string_view how);
  // The memory's rate: `kind` on `device`, arrays of `bytes`, `threads` host threads.
  static CaseName Bandwidth(absl::string_view kind, absl::string_view device, int64_t bytes,
                            int threads);

  std::string ToString() const;
  // Whether this case is of family `id`.
  bool Is(Family id) const { return family == FamilyName(id); }
  // Whether this case is of a collective's family.
  bool IsCollective() const;

  auto Tie() const {
    return std::tie(family, model, precision, data, batch, gpus, replicas, pass, algorithm, device,
                    shape, impl, dtype, op, bytes, ranks, source, preprocess, threads);
  }
  bool operator<(const CaseName& o) const { return Tie() < o.Tie(); }
  bool operator==(const CaseName& o) const { return Tie() == o.Tie(); }
};

// Shorthands for CaseName::X(...).ToString().
std::string TrainCaseName(absl::string_view model, absl::string_view precision,
                          absl::string_view data, int64_t batch, int gpus, int replicas = 1);
std::string KernelCaseName(Family family, absl::string_view pass,
                           absl::string_view precision, absl::string_view device,
                           absl::string_view shape);  // pool: pass is "max/fwd" etc.
std::string CollectiveCaseName(absl::string_view family, absl::string_view impl,
                               absl::string_view dtype, absl::string_view op, int64_t bytes,
                               int ranks);

// Parses a name as Google Benchmark writes it: suffixes it adds
// ("/manual_time", "/real_time", "/iterations:N", "/repeats:N", "/threads:N",
// "/min_time:T" after ours, "_mean" etc. on aggregates) are removed first.
// The error says which part breaks the grammar; callers add the name (and
// file, entry).
absl::StatusOr<CaseName> ParseCaseName(absl::string_view name);

// A zoo model's display name as the published pages write it.
struct ModelDisplay {
  std::string model;       // the zoo's (tf_cnn_benchmarks') name: "resnet50"
  std::string display;     // "ResNet-50"
  bool published = false;  // a column of the published page (and the published preset)
};

// Every zoo model, in the order tables show them (ModelInfo::table_order:
// the published page's five columns first, then the rest of the zoo by
// family), as the zoo's model info describes them.
const std::vector<ModelDisplay>& ModelDisplayNames();

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_NAMES_H_
