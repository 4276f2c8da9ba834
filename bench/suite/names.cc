#include "bench/suite/names.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/dtype.h"
#include "kernels/collectives/communicator.h"
#include "kernels/desc.h"
#include "models/zoo.h"

namespace cnnbench::bench {
namespace {

bool OneOf(absl::string_view s, std::initializer_list<absl::string_view> options) {
  for (absl::string_view o : options)
    if (s == o) return true;
  return false;
}

bool Contains(const std::vector<std::string>& list, absl::string_view s) {
  for (const std::string& item : list)
    if (item == s) return true;
  return false;
}

// The message leaves the name out: callers say which name (and file, entry) it is.
absl::Status Bad(absl::string_view why) { return absl::InvalidArgumentError(std::string(why)); }

template <typename T>
bool ParseKeyed(absl::string_view part, absl::string_view key, T* value) {
  return absl::ConsumePrefix(&part, key) && absl::ConsumePrefix(&part, ":") &&
         absl::SimpleAtoi(part, value) && *value >= 0;
}

// Strips what Google Benchmark appends to a registered name. Each family has
// a fixed number of parts, so only parts past that count can be suffixes
// (an input case's own "threads:<T>" is not one).
std::string StripHarnessSuffixes(absl::string_view name) {
  for (absl::string_view agg : {"_mean", "_median", "_stddev", "_cv"})
    if (absl::ConsumeSuffix(&name, agg)) break;
  std::vector<std::string> parts = absl::StrSplit(name, '/');
  const CaseFamily* family = FindCaseFamily(parts[0]);
  size_t expected = family != nullptr ? family->parts : parts.size();
  // An all-reduce named before the collectives had ops has one part fewer
  // (none of its parts looks like a suffix).
  if (family != nullptr && family->id == Family::kAllReduce) --expected;
  auto is_suffix = [](absl::string_view part) {
    return OneOf(part, {"manual_time", "real_time", "process_time"}) ||
           absl::StartsWith(part, "iterations:") || absl::StartsWith(part, "repeats:") ||
           absl::StartsWith(part, "threads:") || absl::StartsWith(part, "min_time:") ||
           absl::StartsWith(part, "min_warmup_time:");
  };
  while (parts.size() > expected && is_suffix(parts.back())) parts.pop_back();
  return absl::StrJoin(parts, "/");
}

// The one table of precisions (core/dtype.h).
bool IsPrecision(absl::string_view p) {
  for (const PrecisionInfo& info : kPrecisions)
    if (info.name == p) return true;
  return false;
}

absl::Status BadPrecision(absl::string_view p) {
  return Bad(absl::StrCat("precision '", p, "' is not one of ", PrecisionNamesList()));
}
bool IsDevice(absl::string_view d) {
  int ordinal;
  // "cuda" alone is device 0, as Device::Parse reads it.
  return d == "cpu" || d == "cuda" ||
         (absl::ConsumePrefix(&d, "cuda:") && absl::SimpleAtoi(d, &ordinal));
}

absl::StatusOr<CaseName> ParseTrain(const std::vector<std::string>& p, const CaseFamily& f) {
  if (p.size() != f.parts && p.size() != f.parts + 1)
    return Bad(absl::StrCat("does not match ", f.grammar));
  CaseName c;
  c.family = f.name;
  c.model = p[1];
  c.precision = p[2];
  c.data = p[3];
  if (c.model.empty()) return Bad("the model name is empty");
  if (!IsPrecision(c.precision)) return BadPrecision(c.precision);
  if (!OneOf(c.data, {"synthetic", "real"}))
    return Bad(absl::StrCat("data '", c.data, "' is neither synthetic nor real"));
  if (!ParseKeyed(p[4], "batch", &c.batch) || c.batch == 0)
    return Bad(absl::StrCat("'", p[4], "' where batch:<B> (B > 0) belongs"));
  if (!ParseKeyed(p[5], "gpus", &c.gpus))
    return Bad(absl::StrCat("'", p[5], "' where gpus:<G> belongs"));
  if (p.size() == f.parts + 1) {
    if (f.id == Family::kInfer)
      return Bad(absl::StrCat("'", p[6], "' after gpus:<G> (", f.grammar, " has no replicas)"));
    if (!ParseKeyed(p[6], "replicas", &c.replicas) || c.replicas < 2)
      return Bad(absl::StrCat("'", p[6], "' where replicas:<R> (R >= 2) belongs"));
    if (c.gpus != 0)
      return Bad(absl::StrCat("replicas:", c.replicas, " with gpus:", c.gpus,
                              " (on GPUs the replica count is gpus:<G>; replicas:<R> is for "
                              "CPU runs, gpus:0)"));
  }
  return c;
}

// conv, fc, pool, batchnorm, relu and gemm: [algorithm/][pass/]precision/device/shape.
absl::StatusOr<CaseName> ParseKernel(const std::vector<std::string>& p, const CaseFamily& f) {
  const bool pool = f.name == "pool";
  const bool has_pass = !f.passes.empty();
  if (p.size() != f.parts || (pool && !OneOf(p[1], {"max", "avg"})) ||
      (has_pass && !Contains(f.passes, p[pool ? 2 : 1])))
    return Bad(absl::StrCat("does not match ", f.grammar));
  CaseName c;
  c.family = f.name;
  size_t i = 1;
  if (pool) c.algorithm = p[i++];
  if (has_pass) c.pass = p[i++];
  c.precision = p[i++];
  c.device = p[i++];
  c.shape = p[i++];
  if (!IsPrecision(c.precision)) return BadPrecision(c.precision);
  if (!IsDevice(c.device))
    return Bad(absl::StrCat("device '", c.device, "' is neither cpu nor cuda[:N]"));
  if (!absl::StartsWith(c.shape, f.shape_kind + ":"))
    return Bad(
        absl::StrCat("shape '", c.shape, "' is not a '", f.shape_kind, ":' descriptor string"));
  // The shape is a descriptor in its canonical form, so a name prints back
  // to itself (and a trailing "_mean"-like word can only be a suffix).
  absl::StatusOr<OpDesc> desc = ParseOpDesc(c.shape);
  if (!desc.ok()) return Bad(absl::StrCat("shape: ", desc.status().message()));
  if (OpDescToString(*desc) != c.shape)
    return Bad(absl::StrCat("shape '", c.shape, "' is not canonical (that is '",
                            OpDescToString(*desc), "')"));
  return c;
}

absl::StatusOr<CaseName> ParseGrads(const std::vector<std::string>& p, const CaseFamily& f) {
  CaseName c;
  c.family = f.name;
  int64_t mib = 0;
  if (p.size() != f.parts || p[1].empty() || !OneOf(p[2], {"nccl", "mpi", "local"}) ||
      !ParseKeyed(p[3], "bucket_mb", &mib) || mib == 0 || !ParseKeyed(p[4], "ranks", &c.ranks) ||
      c.ranks == 0)
    return Bad(absl::StrCat("does not match ", f.grammar));
  c.model = p[1];
  c.impl = p[2];
  c.bytes = mib << 20;
  return c;
}

// The collectives that copy rather than reduce (their traits say so): their
// op is "none", as nccl-tests prints it.
bool Copies(const CaseFamily& f) {
  Collective c;
  return FindCollective(f.name, &c) && !Reduces(c);
}

absl::StatusOr<CaseName> ParseCollective(const std::vector<std::string>& p, const CaseFamily& f) {
  CaseName c;
  c.family = f.name;
  // allreduce/<impl>/<dtype>/bytes:<S>/ranks:<N>, the name before the
  // collectives had ops, reads as the sum, so older JSON files still load.
  std::vector<std::string> parts = p;
  if (f.id == Family::kAllReduce && parts.size() == f.parts - 1)
    parts.insert(parts.begin() + 3, "sum");
  const bool op_ok =
      Copies(f) ? parts.size() > 3 && parts[3] == "none"
                   : parts.size() > 3 && OneOf(parts[3], {"sum", "prod", "max", "min", "avg"});
  if (parts.size() != f.parts || !OneOf(parts[1], {"nccl", "mpi", "local"}) ||
      !OneOf(parts[2], {"fp32", "fp16", "bf16", "fp64", "int32", "int64"}) ||  // what they reduce
      !op_ok || !ParseKeyed(parts[4], "bytes", &c.bytes) || c.bytes == 0 ||
      !ParseKeyed(parts[5], "ranks", &c.ranks) || c.ranks == 0)
    return Bad(absl::StrCat("does not match ", f.grammar));
  c.impl = parts[1];
  c.dtype = parts[2];
  c.op = parts[3];
  return c;
}

absl::StatusOr<CaseName> ParseInput(const std::vector<std::string>& p, const CaseFamily& f) {
  CaseName c;
  c.family = f.name;
  if (p.size() != f.parts || !OneOf(p[1], {"tfrecord", "folder"}) || p[2].empty() ||
      !ParseKeyed(p[3], "threads", &c.threads) || c.threads == 0)
    return Bad(absl::StrCat("does not match ", f.grammar));
  c.source = p[1];
  c.preprocess = p[2];
  return c;
}

absl::StatusOr<CaseName> ParsePeak(const std::vector<std::string>& p, const CaseFamily& f) {
  if (p.size() != f.parts) return Bad(absl::StrCat("does not match ", f.grammar));
  CaseName c;
  c.family = f.name;
  c.precision = p[1];
  c.device = p[2];
  if (c.device != "cpu" && IsDevice(c.device)) {
    // The GPU's: fp32 on its FMA units, the tensor-core precisions as a GEMM.
    if (!OneOf(c.precision, {"fp32", "tf32", "fp16", "bf16", "fp8"}))
      return Bad(absl::StrCat("precision '", c.precision,
                              "' has no GPU peak (fp32, tf32, fp16, bf16, fp8)"));
    c.shape = p[3];
    if (c.precision == "fp32") {
      if (c.shape != "fma")
        return Bad(absl::StrCat("'", p[3], "' where the fp32 GPU peak's fma belongs"));
      return c;
    }
    absl::StatusOr<OpDesc> desc = ParseOpDesc(c.shape);
    if (!absl::StartsWith(c.shape, "gemm:") || !desc.ok() || OpDescToString(*desc) != c.shape)
      return Bad(absl::StrCat("'", p[3], "' where a canonical gemm:m<M>n<N>k<K> belongs"));
    return c;
  }
  if (!OneOf(c.precision, {"fp32", "bf16"}))
    return Bad(
        absl::StrCat("precision '", c.precision, "' is neither fp32 nor bf16 (", f.grammar, ")"));
  if (c.device != "cpu")
    return Bad(absl::StrCat("device '", c.device, "' is not cpu (", f.grammar, ")"));
  if (!ParseKeyed(p[3], "threads", &c.threads) || c.threads == 0)
    return Bad(absl::StrCat("'", p[3], "' where threads:<T> (T > 0) belongs"));
  return c;
}

absl::StatusOr<CaseName> ParseBandwidth(const std::vector<std::string>& p, const CaseFamily& f) {
  if (p.size() != f.parts) return Bad(absl::StrCat("does not match ", f.grammar));
  CaseName c;
  c.family = f.name;
  c.algorithm = p[1];
  c.device = p[2];
  const bool host = OneOf(c.algorithm, {"copy", "triad"});
  if (!host && !OneOf(c.algorithm, {"d2d", "h2d", "d2h"}))
    return Bad(absl::StrCat("kind '", c.algorithm,
                            "' is not one of copy, triad (cpu), d2d, h2d, d2h (cuda)"));
  if (!IsDevice(c.device) || (host != (c.device == "cpu")))
    return Bad(absl::StrCat("device '", c.device, "' does not go with ", c.algorithm,
                            " (copy, triad: cpu; d2d, h2d, d2h: cuda[:N])"));
  if (!ParseKeyed(p[3], "bytes", &c.bytes) || c.bytes == 0)
    return Bad(absl::StrCat("'", p[3], "' where bytes:<S> (S > 0) belongs"));
  if (!ParseKeyed(p[4], "threads", &c.threads) || c.threads == 0)
    return Bad(absl::StrCat("'", p[4], "' where threads:<T> (T > 0) belongs"));
  return c;
}

std::string PrintBandwidth(const CaseName& c) {
  return absl::StrCat("bandwidth/", c.algorithm, "/", c.device, "/bytes:", c.bytes,
                      "/threads:", c.threads);
}

// train and infer.
std::string PrintTrain(const CaseName& c) {
  return absl::StrCat(c.family, "/", c.model, "/", c.precision, "/", c.data, "/batch:", c.batch,
                      "/gpus:", c.gpus,
                      c.gpus == 0 && c.replicas > 1 ? absl::StrCat("/replicas:", c.replicas) : "");
}

std::string PrintCollective(const CaseName& c) {
  return absl::StrCat(c.family, "/", c.impl, "/", c.dtype, "/", c.op, "/bytes:", c.bytes,
                      "/ranks:", c.ranks);
}

std::string PrintInput(const CaseName& c) {
  return absl::StrCat("input/", c.source, "/", c.preprocess, "/threads:", c.threads);
}

std::string PrintPeak(const CaseName& c) {
  if (c.device != "cpu") return absl::StrCat("peak/", c.precision, "/", c.device, "/", c.shape);
  return absl::StrCat("peak/", c.precision, "/", c.device, "/threads:", c.threads);
}

std::string PrintGrads(const CaseName& c) {
  return absl::StrCat("grads/", c.model, "/", c.impl, "/bucket_mb:", c.bytes >> 20,
                      "/ranks:", c.ranks);
}

// conv, fc, pool, batchnorm, relu and gemm: family/[algorithm/][pass/]precision/device/shape.
std::string PrintKernel(const CaseName& c) {
  std::vector<absl::string_view> parts = {c.family};
  if (!c.algorithm.empty()) parts.push_back(c.algorithm);
  if (!c.pass.empty()) parts.push_back(c.pass);
  parts.insert(parts.end(), {c.precision, c.device, c.shape});
  return absl::StrJoin(parts, "/");
}

// A collective's case family, from its traits: its name, the grammar with
// its reductions (or none, for the copies), busbw, registered and spanning
// an MPI job's ranks.
CaseFamily CollectiveFamily(Collective c) {
  const std::string name(CollectiveName(c));
  return CaseFamily{FamilyOf(c),
                    name,
                    absl::StrCat(name, "/<nccl|mpi|local>/<dtype>/",
                                 Reduces(c) ? "<sum|prod|max|min|avg>" : "none",
                                 "/bytes:<S>/ranks:<N>"),
                    6,
                    {},
                    "",
                    "busbw",
                    true,
                    true,
                    ParseCollective,
                    PrintCollective};
}

}  // namespace

const std::array<CaseFamily, kFamilyCount>& CaseFamilies() {
  using F = Family;
  const std::vector<std::string> three = {"fwd", "bwd_data", "bwd_filter"}, two = {"fwd", "bwd"};
  // clang-format off
  static const auto* families = new std::array<CaseFamily, kFamilyCount>{
      // id, name, grammar, parts, passes, shape prefix, counter, registered, spans ranks,
      // parse, print
      CaseFamily{F::kTrain, "train",
                 "train/<model>/<precision>/<data>/batch:<B>/gpus:<G>[/replicas:<R>]", 6,
                 {}, "", "images_per_second", true, true, ParseTrain, PrintTrain},
      CaseFamily{F::kConv, "conv", "conv/<fwd|bwd_data|bwd_filter>/<precision>/<device>/<shape>", 5,
                 three, "conv", "flops", true, false, ParseKernel, PrintKernel},
      CaseFamily{F::kFc, "fc", "fc/<fwd|bwd_data|bwd_filter>/<precision>/<device>/<shape>", 5,
                 three, "fc", "flops", true, false, ParseKernel, PrintKernel},
      CaseFamily{F::kPool, "pool", "pool/<max|avg>/<fwd|bwd>/<precision>/<device>/<shape>", 6,
                 two, "pool", "bytes_per_second", true, false, ParseKernel, PrintKernel},
      CaseFamily{F::kBatchNorm, "batchnorm", "batchnorm/<fwd|bwd>/<precision>/<device>/<shape>", 5,
                 two, "bn", "bytes_per_second", true, false, ParseKernel, PrintKernel},
      CaseFamily{F::kRelu, "relu", "relu/<fwd|bwd>/<precision>/<device>/<shape>", 5,
                 two, "relu", "bytes_per_second", true, false, ParseKernel, PrintKernel},
      CaseFamily{F::kGemm, "gemm", "gemm/<precision>/<device>/<shape>", 4,
                 {}, "gemm", "flops", true, false, ParseKernel, PrintKernel},
      CollectiveFamily(Collective::kAllReduce),
      CollectiveFamily(Collective::kAllGather),
      CollectiveFamily(Collective::kReduceScatter),
      CollectiveFamily(Collective::kBroadcast),
      CollectiveFamily(Collective::kReduce),
      CollectiveFamily(Collective::kAllToAll),
      CollectiveFamily(Collective::kGather),
      CollectiveFamily(Collective::kScatter),
      CaseFamily{F::kGrads, "grads", "grads/<model>/<nccl|mpi|local>/bucket_mb:<M>/ranks:<N>", 5,
                 {}, "", "busbw", true, true, ParseGrads, PrintGrads},
      CaseFamily{F::kInput, "input", "input/<tfrecord|folder>/<preprocess>/threads:<T>", 4,
                 {}, "", "images_per_second", true, false, ParseInput, PrintInput},
      CaseFamily{F::kPeak, "peak",
                 "peak/<fp32|bf16|tf32|fp16|fp8>/<cpu|cuda>/<threads:<T>|fma|gemm:...>", 4,
                 {}, "", "flops", true, false, ParsePeak, PrintPeak},
      CaseFamily{F::kBandwidth, "bandwidth",
                 "bandwidth/<copy|triad|d2d|h2d|d2h>/<device>/bytes:<S>/threads:<T>", 5,
                 {}, "", "bytes_per_second", true, false, ParseBandwidth, PrintBandwidth},
      CaseFamily{F::kInfer, "infer", "infer/<model>/<precision>/<data>/batch:<B>/gpus:<G>", 6,
                 {}, "", "images_per_second", true, false, ParseTrain, PrintTrain},
  };
  // clang-format on
  static const bool in_order = [] {
    for (size_t i = 0; i < kFamilyCount; ++i)
      if (static_cast<size_t>((*families)[i].id) != i) return false;
    return true;
  }();
  if (!in_order) std::abort();  // a table out of Family's order is a build mistake
  return *families;
}

const CaseFamily* FindCaseFamily(absl::string_view name) {
  for (const CaseFamily& f : CaseFamilies())
    if (f.name == name) return &f;
  return nullptr;
}

std::string RegisteredFamilyList() {
  std::vector<std::string> names;
  for (const CaseFamily& f : CaseFamilies())
    if (f.registered) names.push_back(f.name);
  return absl::StrJoin(names, ", ");
}

std::string SpanningFamilyList() {
  std::vector<std::string> names;
  for (const CaseFamily& f : CaseFamilies())
    if (f.spans_ranks) names.push_back(f.name);
  if (names.size() < 2) return absl::StrJoin(names, "");
  const std::string last = names.back();
  names.pop_back();
  return absl::StrCat(absl::StrJoin(names, ", "), " and ", last);
}

CaseName CaseName::Train(absl::string_view model, absl::string_view precision,
                         absl::string_view data, int64_t batch, int gpus, int replicas) {
  CaseName c;
  c.replicas = gpus == 0 ? replicas : 1;
  c.family = "train";
  c.model = std::string(model);
  c.precision = std::string(precision);
  c.data = std::string(data);
  c.batch = batch;
  c.gpus = gpus;
  return c;
}

CaseName CaseName::Infer(absl::string_view model, absl::string_view precision,
                         absl::string_view data, int64_t batch, int gpus) {
  CaseName c = Train(model, precision, data, batch, gpus);
  c.family = FamilyName(Family::kInfer);
  return c;
}

CaseName CaseName::Kernel(Family family, absl::string_view pass, absl::string_view precision,
                          absl::string_view device, absl::string_view shape) {
  CaseName c;
  c.family = FamilyName(family);
  if (family == Family::kPool) {
    std::pair<std::string, std::string> parts = absl::StrSplit(pass, absl::MaxSplits('/', 1));
    c.algorithm = parts.first;
    c.pass = parts.second;
  } else {
    c.pass = std::string(pass);
  }
  c.precision = std::string(precision);
  c.device = std::string(device);
  c.shape = std::string(shape);
  return c;
}

CaseName CaseName::Collective(absl::string_view family, absl::string_view impl,
                              absl::string_view dtype, absl::string_view op, int64_t bytes,
                              int ranks) {
  CaseName c;
  c.family = std::string(family);
  c.impl = std::string(impl);
  c.dtype = std::string(dtype);
  c.op = std::string(op);
  c.bytes = bytes;
  c.ranks = ranks;
  return c;
}

bool CaseName::IsCollective() const {
  const CaseFamily* f = FindCaseFamily(family);
  return f != nullptr && IsCollectiveFamily(f->id);
}

CaseName CaseName::Grads(absl::string_view model, absl::string_view impl, int64_t bucket_mb,
                         int ranks) {
  CaseName c;
  c.family = "grads";
  c.model = std::string(model);
  c.impl = std::string(impl);
  c.bytes = bucket_mb << 20;
  c.ranks = ranks;
  return c;
}

CaseName CaseName::Input(absl::string_view source, absl::string_view preprocess, int threads) {
  CaseName c;
  c.family = "input";
  c.source = std::string(source);
  c.preprocess = std::string(preprocess);
  c.threads = threads;
  return c;
}

CaseName CaseName::Peak(absl::string_view precision, int threads) {
  CaseName c;
  c.family = "peak";
  c.precision = std::string(precision);
  c.device = "cpu";
  c.threads = threads;
  return c;
}

CaseName CaseName::GpuPeak(absl::string_view precision, absl::string_view device,
                           absl::string_view how) {
  CaseName c;
  c.family = "peak";
  c.precision = std::string(precision);
  c.device = std::string(device);
  c.shape = std::string(how);
  return c;
}

CaseName CaseName::Bandwidth(absl::string_view kind, absl::string_view device, int64_t bytes,
                             int threads) {
  CaseName c;
  c.family = "bandwidth";
  c.algorithm = std::string(kind);
  c.device = std::string(device);
  c.bytes = bytes;
  c.threads = threads;
  return c;
}

std::string CaseName::ToString() const {
  const CaseFamily* f = FindCaseFamily(family);
  return f != nullptr ? f->print(*this) : PrintKernel(*this);
}

std::string TrainCaseName(absl::string_view model, absl::string_view precision,
                          absl::string_view data, int64_t batch, int gpus, int replicas) {
  return CaseName::Train(model, precision, data, batch, gpus, replicas).ToString();
}

std::string KernelCaseName(Family family, absl::string_view pass,
                           absl::string_view precision, absl::string_view device,
                           absl::string_view shape) {
  return CaseName::Kernel(family, pass, precision, device, shape).ToString();
}

std::string CollectiveCaseName(absl::string_view family, absl::string_view impl,
                               absl::string_view dtype, absl::string_view op, int64_t bytes,
                               int ranks) {
  return CaseName::Collective(family, impl, dtype, op, bytes, ranks).ToString();
}

absl::StatusOr<CaseName> ParseCaseName(absl::string_view raw) {
  const std::vector<std::string> p = absl::StrSplit(StripHarnessSuffixes(raw), '/');
  const CaseFamily* family = FindCaseFamily(p[0]);
  if (family == nullptr) {
    std::vector<std::string> prefixes;
    for (const CaseFamily& f : CaseFamilies()) prefixes.push_back(f.name + "/");
    return Bad(absl::StrCat("not a cnnbench case name (", absl::StrJoin(prefixes, ", "), ")"));
  }
  return family->parse(p, *family);
}

const std::vector<ModelDisplay>& ModelDisplayNames() {
  static const auto* models = [] {
    std::vector<ModelInfo> zoo = ListModels();
    std::stable_sort(zoo.begin(), zoo.end(), [](const ModelInfo& a, const ModelInfo& b) {
      return a.table_order < b.table_order;
    });
    auto* out = new std::vector<ModelDisplay>;
    for (const ModelInfo& m : zoo) out->push_back({m.name, m.display_name, m.published});
    return out;
  }();
  return *models;
}

}  // namespace cnnbench::bench
