#include "bench/harness/case_filter.h"

#include "absl/strings/str_cat.h"

namespace cnnbench::bench {

absl::StatusOr<CaseFilter> CaseFilter::Parse(const std::string& spec) {
  CaseFilter filter;
  filter.spec_ = spec;
  std::string pattern = spec.empty() || spec == "all" ? "." : spec;
  if (pattern[0] == '-') {
    filter.negative_ = true;
    pattern.erase(0, 1);
  }
  try {
    filter.regex_ = std::regex(pattern, std::regex_constants::extended);
  } catch (const std::regex_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--benchmark_filter=", spec, ": not a valid regular expression (", e.what(), ")"));
  }
  return filter;
}

bool CaseFilter::Matches(const std::string& full_name) const {
  return std::regex_search(full_name, regex_) != negative_;
}

}  // namespace cnnbench::bench
