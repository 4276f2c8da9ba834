#include "tools/report/case_name.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "bench/names.h"

namespace cnnbench::report {
namespace {

constexpr absl::string_view kPrecisions[] = {"fp32", "tf32", "fp16", "bf16"};

}  // namespace

// The grammar lives in bench/names (one parser for the suite and its
// reports); here its result becomes the report's per-kind records.
absl::StatusOr<CaseName> ParseCaseName(absl::string_view name) {
  absl::StatusOr<bench::CaseName> parsed = bench::ParseCaseName(name);
  if (!parsed.ok()) return parsed.status();
  const bench::CaseName& c = *parsed;
  if (c.family == "train")
    return TrainCase{c.model, c.precision, c.data, static_cast<int>(c.batch), c.gpus};
  if (c.family == "allreduce") return AllReduceCase{c.impl, c.dtype, c.bytes, c.ranks};
  if (c.family == "input") return InputCase{c.source, c.preprocess, c.threads};
  KernelCase k;
  k.op = c.family;
  k.variant = c.family == "pool" ? absl::StrCat(c.algorithm, " ", c.pass) : c.pass;
  k.precision = c.precision;
  k.device = c.device;
  k.shape = c.shape;
  return k;
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
