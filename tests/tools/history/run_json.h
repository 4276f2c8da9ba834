// Google Benchmark JSON as //bench:all writes it, reduced to what the
// history reads: the store's and the tool's tests build histories from it.
#ifndef CNNBENCH_TESTS_TOOLS_HISTORY_RUN_JSON_H_
#define CNNBENCH_TESTS_TOOLS_HISTORY_RUN_JSON_H_

#include <string>
#include <utility>
#include <vector>

namespace cnnbench::history::test_runs {

inline constexpr const char* kResnet = "train/resnet50/fp32/synthetic/batch:32/gpus:0";
inline constexpr const char* kVgg = "train/vgg16/fp32/synthetic/batch:32/gpus:0";

// One run as //bench:all writes it, reduced to what the store reads.
struct RunSpec {
  std::string date = "2026-12-01T10:00:00+00:00";
  std::string commit = "1111111111111111111111111111111111111111";
  std::string platform = "cpu-test";
  std::string cpu_model = "AMD EPYC";
  std::string onednn = "3.2.0";
  std::string steps = "20";
  std::string host = "vm";
  std::string interrupted;
  // case name -> the repetitions' images/s
  std::vector<std::pair<std::string, std::vector<double>>> cases;
  std::string failed_case;  // a case that failed, with this message:
  std::string failed_message = "OOM: 9 GiB asked, 8 GiB free";
};

std::string RunJson(const RunSpec& r);

}  // namespace cnnbench::history::test_runs

#endif  // CNNBENCH_TESTS_TOOLS_HISTORY_RUN_JSON_H_
