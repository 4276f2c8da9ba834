// The report's multi-host table: a two-host training run's per-host arrival
// counters (host<i>_arrival_ms, as //bench:all writes them under MPI) become
// one row per case, the hosts named from the context's host_facts, the
// slowest host and its lead; runs on one host have no such section.
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/report/host_tables.h"
#include "tools/report/records.h"
#include "tools/report/report.h"

namespace cnnbench::report {
namespace {

// A run file as the suite writes one: `hosts` hosts, each repetition's
// arrival means as given (one entry per repetition).
std::string WriteRun(const std::string& name, int hosts,
                     const std::vector<std::vector<double>>& repetitions) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", name, ".json");
  std::string facts;
  for (int h = 0; h < hosts; ++h)
    absl::StrAppend(&facts, h == 0 ? "" : " | ", "node", std::string(1, static_cast<char>('a' + h)), " (ranks ", h,
                    "; AMD EPYC; 2 CPUs; 23.5 GiB)");
  std::string entries;
  for (size_t i = 0; i < repetitions.size(); ++i) {
    absl::StrAppend(&entries, i == 0 ? "" : ",",
                    "{\"name\": \"train/resnet50/fp32/synthetic/batch:16/gpus:0/replicas:", hosts,
                    "/iterations:10/manual_time\", \"run_name\": "
                    "\"train/resnet50/fp32/synthetic/batch:16/gpus:0/replicas:",
                    hosts,
                    "/iterations:10/manual_time\", \"run_type\": \"iteration\", "
                    "\"repetitions\": ",
                    repetitions.size(), ", \"repetition_index\": ", i,
                    ", \"iterations\": 10, \"real_time\": 3.0e9, \"cpu_time\": 1.0e6, "
                    "\"time_unit\": \"ns\", \"images_per_second\": 10.5, \"ranks\": ",
                    hosts, ", \"hosts\": ", hosts);
    for (size_t h = 0; h < repetitions[i].size(); ++h)
      absl::StrAppend(&entries, ", \"host", h, "_arrival_ms\": ", repetitions[i][h]);
    absl::StrAppend(&entries, "}");
  }
  std::ofstream out(path);
  out << "{\"context\": {\"date\": \"2026-12-06T05:00:00+00:00\", \"host_name\": \"nodea\", "
         "\"platform\": \"cpu-AMD-EPYC-2c"
      << (hosts > 1 ? absl::StrCat("-", hosts, "hosts") : "") << "\", \"hosts\": \"" << hosts
      << "\", \"ranks\": \"" << hosts << "\", \"host_facts\": \"" << facts
      << "\"}, \"benchmarks\": [" << entries << "]}";
  return path;
}

const Table* HostTable(const Report& report) {
  for (const PlatformReport& p : report.platforms)
    for (const Section& s : p.sections)
      if (s.title == "Hosts" && !s.tables.empty()) return &s.tables[0];
  return nullptr;
}

Report Build(const std::vector<std::string>& paths) {
  std::vector<std::string> warnings, errors;
  const Results results = LoadResults(paths, &warnings, &errors);
  EXPECT_TRUE(errors.empty()) << errors[0];
  return BuildReport(results, "test", 0.05, "");
}

TEST(HostTableTest, NamesTheHostsFromTheContext) {
  EXPECT_EQ(HostNames("a (ranks 0, 1; x) | b (ranks 2; y)"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(HostNames("").empty());
}

TEST(HostTableTest, ShowsEachHostsArrivalAndTheSlowest) {
  // Two repetitions: the host means average over them.
  const Report report = Build({WriteRun("two_hosts", 2, {{100, 140}, {120, 160}})});
  const Table* t = HostTable(report);
  ASSERT_NE(t, nullptr) << "no Hosts section";
  EXPECT_EQ(t->header, (std::vector<std::string>{"Model", "Precision", "Batch", "GPUs", "nodea",
                                                 "nodeb", "slowest host", "slowest - fastest"}));
  ASSERT_EQ(t->rows.size(), 1u);
  EXPECT_EQ(t->rows[0], (std::vector<std::string>{"ResNet-50", "fp32", "16", "CPU, 2 replicas",
                                                  "110", "150", "nodeb", "40.0"}));
}

TEST(HostTableTest, OneHostHasNoHostSection) {
  const Report report = Build({WriteRun("one_host", 1, {{100}})});
  EXPECT_EQ(HostTable(report), nullptr);
}

}  // namespace
}  // namespace cnnbench::report
