#include "tests/tools/history/run_json.h"

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace cnnbench::history::test_runs {

using Json = nlohmann::json;

std::string RunJson(const RunSpec& r) {
  Json context = {{"date", r.date},
                  {"host_name", r.host},
                  {"executable", "bazel-bin/bench/all"},
                  {"command_line", "bazel-bin/bench/all --preset=cpu"},
                  {"git_commit", r.commit},
                  {"platform", r.platform},
                  {"cpu_model", r.cpu_model},
                  {"host_cpus", "2"},
                  {"onednn_version", r.onednn},
                  {"os", "Debian GNU/Linux 12 (bookworm)"},
                  {"steps", r.steps},
                  {"num_cpus", 2},
                  {"library_build_type", "release"}};
  if (!r.interrupted.empty()) context["interrupted"] = r.interrupted;
  Json benchmarks = Json::array();
  for (const auto& [name, values] : r.cases) {
    for (size_t i = 0; i < values.size(); ++i) {
      const std::string full = absl::StrCat(name, "/iterations:1/manual_time");
      benchmarks.push_back({{"name", full},
                            {"run_name", full},
                            {"run_type", "iteration"},
                            {"repetitions", values.size()},
                            {"repetition_index", i},
                            {"threads", 1},
                            {"iterations", 20},
                            {"real_time", 20 * 32 / values[i]},
                            {"cpu_time", 1.5},
                            {"time_unit", "s"},
                            {"images_per_second", values[i]},
                            {"step_ms", 1000 * 32 / values[i]},
                            {"custom_counter_nobody_reads", 42.5}});
    }
  }
  if (!r.failed_case.empty()) {
    const std::string full = absl::StrCat(r.failed_case, "/iterations:1/manual_time");
    benchmarks.push_back({{"name", full},
                          {"run_name", full},
                          {"run_type", "iteration"},
                          {"repetitions", 1},
                          {"repetition_index", 0},
                          {"error_occurred", true},
                          {"error_message", r.failed_message},
                          {"iterations", 0},
                          {"real_time", 0},
                          {"cpu_time", 0},
                          {"time_unit", "s"}});
  }
  return Json({{"context", context}, {"benchmarks", benchmarks}}).dump(2);
}


}  // namespace cnnbench::history::test_runs
