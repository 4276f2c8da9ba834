#include "tools/report/case_name.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace cnnbench::report {
namespace {

constexpr absl::string_view kPrecisions[] = {"fp32", "tf32", "fp16", "bf16"};

// True for the parts Google Benchmark adds after the registered name.
bool IsBenchmarkSuffix(absl::string_view part) {
  static constexpr absl::string_view kWords[] = {"real_time", "manual_time", "process_time"};
  static constexpr absl::string_view kPrefixes[] = {
      "iterations:", "repeats:", "threads:", "min_time:", "min_warmup_time:"};
  for (absl::string_view w : kWords) {
    if (part == w) return true;
  }
  for (absl::string_view p : kPrefixes) {
    if (absl::StartsWith(part, p)) return true;
  }
  return false;
}

// The message leaves the name out: callers say which file and entry it is.
absl::Status Bad(absl::string_view why) { return absl::InvalidArgumentError(std::string(why)); }

// "batch:64" -> 64 when the key matches and the value is a non-negative integer.
bool ParseKeyed(absl::string_view part, absl::string_view key, int64_t* value) {
  if (!absl::ConsumePrefix(&part, key) || !absl::ConsumePrefix(&part, ":")) return false;
  return absl::SimpleAtoi(part, value) && *value >= 0;
}

bool IsPrecision(absl::string_view p) {
  for (absl::string_view known : kPrecisions) {
    if (p == known) return true;
  }
  return false;
}

absl::StatusOr<CaseName> ParseTrain(const std::vector<absl::string_view>& p) {
  static constexpr char kGrammar[] = "train/<model>/<precision>/<data>/batch:<B>/gpus:<G>";
  if (p.size() != 6) return Bad(absl::StrCat("does not match ", kGrammar));
  TrainCase c;
  c.model = std::string(p[1]);
  c.precision = std::string(p[2]);
  c.data = std::string(p[3]);
  int64_t batch = 0, gpus = 0;
  if (c.model.empty()) return Bad("the model name is empty");
  if (!IsPrecision(c.precision)) {
    return Bad(absl::StrCat("precision '", c.precision, "' is not one of ",
                            absl::StrJoin(kPrecisions, ", ")));
  }
  if (c.data != "synthetic" && c.data != "real") {
    return Bad(absl::StrCat("data '", c.data, "' is neither synthetic nor real"));
  }
  if (!ParseKeyed(p[4], "batch", &batch) || batch == 0) {
    return Bad(absl::StrCat("'", p[4], "' where batch:<B> (B > 0) belongs"));
  }
  if (!ParseKeyed(p[5], "gpus", &gpus)) {
    return Bad(absl::StrCat("'", p[5], "' where gpus:<G> belongs"));
  }
  c.batch = static_cast<int>(batch);
  c.gpus = static_cast<int>(gpus);
  return c;
}

absl::StatusOr<CaseName> ParseKernel(const std::vector<absl::string_view>& p) {
  KernelCase c;
  c.op = std::string(p[0]);
  size_t rest = 0;  // index of <precision>
  if (c.op == "conv" || c.op == "fc") {
    if (p.size() != 5 || (p[1] != "fwd" && p[1] != "bwd_data" && p[1] != "bwd_filter")) {
      return Bad(absl::StrCat("does not match ", c.op,
                              "/<fwd|bwd_data|bwd_filter>/<precision>/<device>/<shape>"));
    }
    c.variant = std::string(p[1]);
    rest = 2;
  } else if (c.op == "batchnorm" || c.op == "relu") {
    if (p.size() != 5 || (p[1] != "fwd" && p[1] != "bwd")) {
      return Bad(absl::StrCat("does not match ", c.op, "/<fwd|bwd>/<precision>/<device>/<shape>"));
    }
    c.variant = std::string(p[1]);
    rest = 2;
  } else if (c.op == "pool") {
    if (p.size() != 6 || (p[1] != "max" && p[1] != "avg") || (p[2] != "fwd" && p[2] != "bwd")) {
      return Bad("does not match pool/<max|avg>/<fwd|bwd>/<precision>/<device>/<shape>");
    }
    c.variant = absl::StrCat(p[1], " ", p[2]);
    rest = 3;
  } else {
    if (p.size() != 4) return Bad("does not match gemm/<precision>/<device>/<shape>");
    rest = 1;
  }
  c.precision = std::string(p[rest]);
  c.device = std::string(p[rest + 1]);
  c.shape = std::string(p[rest + 2]);
  if (c.precision.empty() || c.device.empty() || c.shape.empty()) {
    return Bad("the precision, device or shape is empty");
  }
  return c;
}

absl::StatusOr<CaseName> ParseAllReduce(const std::vector<absl::string_view>& p) {
  AllReduceCase c;
  int64_t ranks = 0;
  if (p.size() != 5 || p[1].empty() || p[2].empty() || !ParseKeyed(p[3], "bytes", &c.bytes) ||
      !ParseKeyed(p[4], "ranks", &ranks) || ranks == 0) {
    return Bad("does not match allreduce/<impl>/<dtype>/bytes:<S>/ranks:<N>");
  }
  c.impl = std::string(p[1]);
  c.dtype = std::string(p[2]);
  c.ranks = static_cast<int>(ranks);
  return c;
}

absl::StatusOr<CaseName> ParseInput(const std::vector<absl::string_view>& p) {
  InputCase c;
  int64_t threads = 0;
  if (p.size() != 4 || (p[1] != "tfrecord" && p[1] != "folder") || p[2].empty() ||
      !ParseKeyed(p[3], "threads", &threads)) {
    return Bad("does not match input/<tfrecord|folder>/<preprocess>/threads:<T>");
  }
  c.source = std::string(p[1]);
  c.preprocess = std::string(p[2]);
  c.threads = static_cast<int>(threads);
  return c;
}

}  // namespace

absl::StatusOr<CaseName> ParseCaseName(absl::string_view name) {
  std::vector<absl::string_view> parts = absl::StrSplit(name, '/');
  // Each kind has a fixed number of parts; Google Benchmark's suffixes come
  // after them (and "threads:<T>" is both an input case's part and a suffix).
  size_t expected = 0;
  if (parts[0] == "train" || parts[0] == "pool") expected = 6;
  if (parts[0] == "conv" || parts[0] == "fc" || parts[0] == "batchnorm" || parts[0] == "relu" ||
      parts[0] == "allreduce") {
    expected = 5;
  }
  if (parts[0] == "gemm" || parts[0] == "input") expected = 4;
  if (expected == 0) {
    return Bad(
        "not a cnnbench case name (train/, conv/, fc/, pool/, batchnorm/, relu/, gemm/, "
        "allreduce/ or input/)");
  }
  while (parts.size() > expected && IsBenchmarkSuffix(parts.back())) parts.pop_back();
  if (parts[0] == "train") return ParseTrain(parts);
  if (parts[0] == "allreduce") return ParseAllReduce(parts);
  if (parts[0] == "input") return ParseInput(parts);
  return ParseKernel(parts);
}

std::string CanonicalName(const CaseName& name) {
  struct Printer {
    std::string operator()(const TrainCase& c) const {
      return absl::StrCat("train/", c.model, "/", c.precision, "/", c.data, "/batch:", c.batch,
                          "/gpus:", c.gpus);
    }
    std::string operator()(const KernelCase& c) const {
      std::vector<std::string> parts = {c.op};
      if (!c.variant.empty()) parts.push_back(absl::StrReplaceAll(c.variant, {{" ", "/"}}));
      parts.insert(parts.end(), {c.precision, c.device, c.shape});
      return absl::StrJoin(parts, "/");
    }
    std::string operator()(const AllReduceCase& c) const {
      return absl::StrCat("allreduce/", c.impl, "/", c.dtype, "/bytes:", c.bytes,
                          "/ranks:", c.ranks);
    }
    std::string operator()(const InputCase& c) const {
      return absl::StrCat("input/", c.source, "/", c.preprocess, "/threads:", c.threads);
    }
  };
  return std::visit(Printer{}, name);
}

int PrecisionRank(absl::string_view precision) {
  for (int i = 0; i < 4; ++i) {
    if (kPrecisions[i] == precision) return i;
  }
  return 4;
}

}  // namespace cnnbench::report
