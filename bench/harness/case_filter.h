// --benchmark_filter as Google Benchmark 1.7.1 applies it, so the suite can
// list and count exactly the cases that will run before it runs them.
#ifndef CNNBENCH_BENCH_CASE_FILTER_H_
#define CNNBENCH_BENCH_CASE_FILTER_H_

#include <regex>
#include <string>

#include "absl/status/statusor.h"

namespace cnnbench::bench {

// The filter is a POSIX extended regex (std::regex with
// regex_constants::extended, as Google Benchmark builds it: no `\d`, no
// `(?:`), searched for anywhere in a case's full name (with Google
// Benchmark's suffixes, e.g. "/repeats:2/manual_time"); a leading '-'
// selects the cases it does not match; "" and "all" select every case.
class CaseFilter {
 public:
  // An error names the flag and why the regex does not compile.
  static absl::StatusOr<CaseFilter> Parse(const std::string& spec);
  bool Matches(const std::string& full_name) const;
  const std::string& spec() const { return spec_; }

 private:
  std::string spec_;
  std::regex regex_;
  bool negative_ = false;
};

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_CASE_FILTER_H_
