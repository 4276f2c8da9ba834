#include "bench/names.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cnnbench::bench {
namespace {

bool OneOf(absl::string_view s, std::initializer_list<absl::string_view> options) {
  for (absl::string_view o : options)
    if (s == o) return true;
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
  size_t expected = parts.size();
  if (parts[0] == "train" || parts[0] == "pool") expected = 6;
  if (OneOf(parts[0], {"conv", "fc", "batchnorm", "relu", "allreduce"})) expected = 5;
  if (parts[0] == "gemm" || parts[0] == "input") expected = 4;
  auto is_suffix = [](absl::string_view part) {
    return OneOf(part, {"manual_time", "real_time", "process_time"}) ||
           absl::StartsWith(part, "iterations:") || absl::StartsWith(part, "repeats:") ||
           absl::StartsWith(part, "threads:") || absl::StartsWith(part, "min_time:") ||
           absl::StartsWith(part, "min_warmup_time:");
  };
  while (parts.size() > expected && is_suffix(parts.back())) parts.pop_back();
  return absl::StrJoin(parts, "/");
}

bool IsPrecision(absl::string_view p) { return OneOf(p, {"fp32", "tf32", "fp16", "bf16"}); }
bool IsDevice(absl::string_view d) {
  int ordinal;
  // "cuda" alone is device 0, as Device::Parse reads it.
  return d == "cpu" || d == "cuda" ||
         (absl::ConsumePrefix(&d, "cuda:") && absl::SimpleAtoi(d, &ordinal));
}

}  // namespace

std::string TrainCaseName(absl::string_view model, absl::string_view precision,
                          absl::string_view data, int64_t batch, int gpus) {
  return absl::StrCat("train/", model, "/", precision, "/", data, "/batch:", batch, "/gpus:", gpus);
}

std::string KernelCaseName(absl::string_view family, absl::string_view pass,
                           absl::string_view precision, absl::string_view device,
                           absl::string_view shape) {
  return absl::StrCat(family, "/", pass, "/", precision, "/", device, "/", shape);
}

std::string AllReduceCaseName(absl::string_view impl, absl::string_view dtype, int64_t bytes,
                              int ranks) {
  return absl::StrCat("allreduce/", impl, "/", dtype, "/bytes:", bytes, "/ranks:", ranks);
}

absl::StatusOr<CaseName> ParseCaseName(absl::string_view raw) {
  const std::string name = StripHarnessSuffixes(raw);
  std::vector<std::string> p = absl::StrSplit(name, '/');
  CaseName c;
  c.family = p[0];
  if (c.family == "train") {
    if (p.size() != 6) return Bad("does not match train/<model>/<precision>/<data>/batch:<B>/gpus:<G>");
    c.model = p[1];
    c.precision = p[2];
    c.data = p[3];
    if (c.model.empty()) return Bad("the model name is empty");
    if (!IsPrecision(c.precision))
      return Bad(absl::StrCat("precision '", c.precision, "' is not one of fp32, tf32, fp16, bf16"));
    if (!OneOf(c.data, {"synthetic", "real"}))
      return Bad(absl::StrCat("data '", c.data, "' is neither synthetic nor real"));
    if (!ParseKeyed(p[4], "batch", &c.batch) || c.batch == 0)
      return Bad(absl::StrCat("'", p[4], "' where batch:<B> (B > 0) belongs"));
    if (!ParseKeyed(p[5], "gpus", &c.gpus))
      return Bad(absl::StrCat("'", p[5], "' where gpus:<G> belongs"));
    return c;
  }
  if (c.family == "conv" || c.family == "fc") {
    if (p.size() != 5 || !OneOf(p[1], {"fwd", "bwd_data", "bwd_filter"}))
      return Bad(absl::StrCat("does not match ", c.family,
                              "/<fwd|bwd_data|bwd_filter>/<precision>/<device>/<shape>"));
    c.pass = p[1];
    c.precision = p[2];
    c.device = p[3];
    c.shape = p[4];
  } else if (c.family == "batchnorm" || c.family == "relu") {
    if (p.size() != 5 || !OneOf(p[1], {"fwd", "bwd"}))
      return Bad(absl::StrCat("does not match ", c.family, "/<fwd|bwd>/<precision>/<device>/<shape>"));
    c.pass = p[1];
    c.precision = p[2];
    c.device = p[3];
    c.shape = p[4];
  } else if (c.family == "pool") {
    if (p.size() != 6 || !OneOf(p[1], {"max", "avg"}) || !OneOf(p[2], {"fwd", "bwd"}))
      return Bad("does not match pool/<max|avg>/<fwd|bwd>/<precision>/<device>/<shape>");
    c.algorithm = p[1];
    c.pass = p[2];
    c.precision = p[3];
    c.device = p[4];
    c.shape = p[5];
  } else if (c.family == "gemm") {
    if (p.size() != 4) return Bad("does not match gemm/<precision>/<device>/<shape>");
    c.precision = p[1];
    c.device = p[2];
    c.shape = p[3];
  } else if (c.family == "allreduce") {
    if (p.size() != 5 || !OneOf(p[1], {"nccl", "mpi", "local"}) ||
        !OneOf(p[2], {"fp32", "fp16", "bf16", "fp64", "int32"}) ||
        !ParseKeyed(p[3], "bytes", &c.bytes) || !ParseKeyed(p[4], "ranks", &c.ranks) ||
        c.ranks == 0)
      return Bad("does not match allreduce/<nccl|mpi|local>/<dtype>/bytes:<S>/ranks:<N>");
    c.impl = p[1];
    c.dtype = p[2];
    return c;
  } else if (c.family == "input") {
    if (p.size() != 4 || !OneOf(p[1], {"tfrecord", "folder"}) || p[2].empty() ||
        !ParseKeyed(p[3], "threads", &c.threads) || c.threads == 0)
      return Bad("does not match input/<tfrecord|folder>/<preprocess>/threads:<T>");
    c.source = p[1];
    c.preprocess = p[2];
    return c;
  } else {
    return Bad(
        "not a cnnbench case name (train/, conv/, fc/, pool/, batchnorm/, relu/, gemm/, "
        "allreduce/ or input/)");
  }
  if (!IsPrecision(c.precision))
    return Bad(absl::StrCat("precision '", c.precision, "' is not one of fp32, tf32, fp16, bf16"));
  if (!IsDevice(c.device))
    return Bad(absl::StrCat("device '", c.device, "' is neither cpu nor cuda[:N]"));
  const std::string kind = c.family == "batchnorm" ? "bn" : c.family;
  if (!absl::StartsWith(c.shape, kind + ":"))
    return Bad(absl::StrCat("shape '", c.shape, "' is not a '", kind, ":' descriptor string"));
  return c;
}

std::string CaseName::ToString() const {
  if (family == "train") return TrainCaseName(model, precision, data, batch, gpus);
  if (family == "pool") return KernelCaseName("pool", absl::StrCat(algorithm, "/", pass), precision, device, shape);
  if (family == "gemm") return absl::StrCat("gemm/", precision, "/", device, "/", shape);
  if (family == "allreduce") return AllReduceCaseName(impl, dtype, bytes, ranks);
  if (family == "input") return absl::StrCat("input/", source, "/", preprocess, "/threads:", threads);
  return KernelCaseName(family, pass, precision, device, shape);
}

}  // namespace cnnbench::bench
