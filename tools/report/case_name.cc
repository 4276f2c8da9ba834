#include "tools/report/case_name.h"

#include "absl/strings/str_cat.h"
#include "core/dtype.h"

namespace cnnbench::report {

bool IsKernelCase(const CaseName& name) {
  const bench::CaseFamily* family = bench::FindCaseFamily(name.family);
  return family != nullptr && !family->shape_kind.empty();
}

std::string KernelVariant(const CaseName& name) {
  if (!name.algorithm.empty()) return absl::StrCat(name.algorithm, " ", name.pass);
  return name.pass;
}

int PrecisionRank(absl::string_view precision) {
  // The order of core's one table of precisions.
  int rank = 0;
  for (const PrecisionInfo& p : kPrecisions) {
    if (p.name == precision) return rank;
    ++rank;
  }
  return rank;
}

}  // namespace cnnbench::report
