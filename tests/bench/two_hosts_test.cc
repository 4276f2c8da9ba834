// The suite across two hosts over TCP, as a cluster runs it (`mpirun
// --hostfile hosts ... bench/all`): the two network namespaces of
// tests/testing/two_hosts.h (root only; skipped elsewhere with the reason),
// one rank on each. Every collective's results are checked by its case
// (a wrong element fails it), the grads cases check the reduced gradients,
// and the 2-rank training case runs one replica per host; the context says
// two hosts and names each.
#include "tests/testing/two_hosts.h"

#include <fstream>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bench/suite/names.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/mpi_job.h"
#include "tests/testing/suite_paths.h"

namespace cnnbench::bench {
namespace {

using cnnbench::testing::BenchBinary;
using cnnbench::testing::TempPath;
using cnnbench::testing::TwoHosts;

TEST(TwoHostsTest, CollectivesGradsAndTrainingRunAcrossTwoHostsOverTcp) {
  const std::string mpirun = cnnbench::testing::FindMpirun();
  if (mpirun.empty()) GTEST_SKIP() << "mpirun is not on PATH: install OpenMPI (openmpi-bin)";
  auto hosts = TwoHosts::Make(TempPath(""));
  if (!hosts.ok()) GTEST_SKIP() << "no two hosts here: " << hosts.status().message();
  const std::string json_path = TempPath("two_hosts.json");
  std::remove(json_path.c_str());
  const cnnbench::testing::MpiJob job = cnnbench::testing::RunMpiJob(
      mpirun, 2,
      absl::StrCat(BenchBinary(),
                   " --preset=tiny --families=allreduce,allgather,reducescatter,broadcast,reduce,"
                   "alltoall,gather,scatter,grads,train --collective_ops=sum,max "
                   "--benchmark_repetitions=1 --benchmark_out=",
                   json_path, " --benchmark_out_format=json --store=none"),
      /*timeout_seconds=*/240, {(*hosts)->On(0), (*hosts)->MpirunOptions()});
  ASSERT_EQ(job.exit_code, 0) << job.output;
  EXPECT_TRUE(absl::StrContains(job.output, "2 MPI ranks on 2 host(s)")) << job.output;
  std::ifstream in(json_path);
  ASSERT_TRUE(in.good()) << job.output;
  const nlohmann::json run = nlohmann::json::parse(in);
  const nlohmann::json& context = run.at("context");
  EXPECT_EQ(context.at("ranks"), "2");
  EXPECT_EQ(context.at("hosts"), "2");
  EXPECT_EQ(context.value("host_name", ""), (*hosts)->host(0));
  // A system of its own: the platform says two hosts, and each host's
  // facts are there with its ranks.
  EXPECT_TRUE(absl::EndsWith(context.value("platform", ""), "c-2hosts")) << context.dump(2);
  const std::string facts = context.value("host_facts", "");
  EXPECT_TRUE(absl::StartsWith(facts, absl::StrCat((*hosts)->host(0), " (ranks 0; "))) << facts;
  EXPECT_TRUE(absl::StrContains(facts, absl::StrCat(" | ", (*hosts)->host(1), " (ranks 1; ")))
      << facts;
  EXPECT_TRUE(absl::StrContains(facts, " CPUs; ")) << facts;
  std::set<std::string> families;
  for (const auto& b : run.at("benchmarks")) {
    auto name = ParseCaseName(b.at("name").get<std::string>());
    ASSERT_TRUE(name.ok()) << name.status();
    // A wrong element, a reduced gradient off, or a failed step is an error.
    EXPECT_FALSE(b.value("error_occurred", false)) << b.dump();
    families.insert(name->family);
    if (name->family == "train") {
      EXPECT_EQ(name->ToString(), "train/trivial/fp32/synthetic/batch:2/gpus:0/replicas:2");
      EXPECT_EQ(b.at("ranks").get<double>(), 2);
      EXPECT_GT(b.at("images_per_second").get<double>(), 0);
      // Each rank's arrival at each step's all-reduce, and each host's mean.
      if (b.value("run_type", "") == "iteration") {
        ASSERT_TRUE(b.contains("rank_arrival_ms")) << b.dump();
        const auto ranks = b["rank_arrival_ms"].get<std::vector<std::vector<double>>>();
        ASSERT_EQ(ranks.size(), 2u) << b.dump();
        EXPECT_EQ(ranks[0].size(), b.at("step_times_ms").size()) << b.dump();
        EXPECT_EQ(ranks[1].size(), ranks[0].size()) << b.dump();
        for (const auto& steps : ranks)
          for (double ms : steps) EXPECT_GT(ms, 0) << b.dump();
        EXPECT_GT(b.value("host0_arrival_ms", 0.0), 0) << b.dump();
        EXPECT_GT(b.value("host1_arrival_ms", 0.0), 0) << b.dump();
      }
    } else {
      EXPECT_EQ(name->impl, "mpi") << name->ToString();
      EXPECT_EQ(name->ranks, 2);
      EXPECT_TRUE(b.contains("busbw")) << b.dump();
    }
  }
  EXPECT_EQ(families,
            (std::set<std::string>{"allreduce", "allgather", "reducescatter", "broadcast", "reduce",
                                   "alltoall", "gather", "scatter", "grads", "train"}));
}

}  // namespace
}  // namespace cnnbench::bench
