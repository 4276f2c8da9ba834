// A rank that dies or hangs, as a cluster has them: rank 1 killed
// (SIGKILL), rank 0 killed, rank 1 stopped (SIGSTOP: it hangs), and, across
// two hosts, the link between them taken down, each while the second of
// two all-reduce cases runs. On one host (shared memory) and across the two
// hosts of tests/testing/two_hosts.h (TCP; root only, skipped elsewhere
// with the reason). Every rank and mpirun end within a bound; the job
// exits non-zero; a line names the rank, its host and the case; the first
// case is whole in the results file, and where rank 0 lived, in the store.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/mpi_job.h"
#include "tests/testing/shell.h"
#include "tests/testing/suite_paths.h"
#include "tests/testing/two_hosts.h"

namespace cnnbench::bench {
namespace {

using cnnbench::testing::BenchBinary;
using cnnbench::testing::MpiJob;
using cnnbench::testing::MpiLaunch;
using cnnbench::testing::RunfilePath;
using cnnbench::testing::SignalAction;
using cnnbench::testing::TempPath;
using cnnbench::testing::TwoHosts;

constexpr int kTimeoutSeconds = 5;  // --collective_timeout
// Slack on a loaded machine of two cores: the bounds tell "ended on the
// timeout" from "hung until the test's 150 s limit", never how fast.
constexpr int kSlackSeconds = 60;
constexpr char kFirstCase[] = "allreduce/mpi/fp32/sum/bytes:64/ranks:2";
constexpr char kSecondCase[] = "allreduce/mpi/fp32/sum/bytes:4194304/ranks:2";

struct Outcome {
  MpiJob job;
  nlohmann::json run;  // the results file (discarded when absent or not JSON)
  std::string stored;  // `history runs` on the run's store
  std::string json_path;
};

std::string ThisHost() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

class MpiFaultTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    mpirun_ = cnnbench::testing::FindMpirun();
    if (mpirun_.empty()) GTEST_SKIP() << "mpirun is not on PATH: install OpenMPI (openmpi-bin)";
    if (!GetParam()) {
      host_[0] = host_[1] = ThisHost();
      return;
    }
    auto hosts = TwoHosts::Make(TempPath(""));
    if (!hosts.ok()) GTEST_SKIP() << "no two hosts here: " << hosts.status().message();
    hosts_ = *std::move(hosts);
    launch_ = {hosts_->On(0), hosts_->MpirunOptions()};
    host_[0] = hosts_->host(0);
    host_[1] = hosts_->host(1);
  }

  // The two-case sweep (the second runs for many seconds), `action` run
  // once it has started.
  Outcome Run(const std::string& name, const std::string& action,
              int timeout_seconds = kTimeoutSeconds) {
    const std::string dir = TempPath(absl::StrCat(name, GetParam() ? "_two_hosts" : "_one_host"));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    Outcome o;
    o.json_path = dir + "/run.json";
    const std::string store = dir + "/store.db";
    o.job = cnnbench::testing::RunMpiJobAndAct(
        mpirun_, 2,
        absl::StrCat(BenchBinary(),
                     " --preset=tiny --families=allreduce --collective_dtypes=fp32 "
                     "--collective_ops=sum --collective_bytes=64,4M --collective_factor=65536 "
                     "--collective_iters=4000 --collective_warmup=1 --benchmark_repetitions=1 "
                     "--collective_timeout=",
                     timeout_seconds, " --benchmark_out=", o.json_path,
                     " --benchmark_out_format=json --store=", store),
        "[2/", action, /*timeout_seconds=*/150, launch_);
    std::ifstream in(o.json_path);
    o.run = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    o.stored = cnnbench::testing::CaptureOutput(
        absl::StrCat(RunfilePath("tools/history"), " runs --store=", store));
    // The figures docs/benchmarks.md states the bounds from.
    std::printf("%s (%s): mpirun ended %.0f ms after the action; ranks %.0f, %.0f ms\n",
                name.c_str(), GetParam() ? "two hosts" : "one host", o.job.mpirun_ms_after_action,
                o.job.rank_ms_after_action[0], o.job.rank_ms_after_action[1]);
    return o;
  }

  // Every rank that the action did not end ends within the timeout (and
  // the slack); mpirun within that and, across hosts, its daemons' keepalive.
  void ExpectEndedInTime(const Outcome& o, int timeout_seconds = kTimeoutSeconds) {
    const std::string& out = o.job.output;
    EXPECT_NE(o.job.exit_code, 0) << out;
    EXPECT_NE(o.job.exit_code, 124) << "the job hung until the test's limit\n" << out;
    EXPECT_FALSE(absl::StrContains(out, "mpi_job: never saw")) << out;
    const double rank_bound = 1000.0 * (timeout_seconds + kSlackSeconds);
    for (int r = 0; r < 2; ++r) {
      EXPECT_GE(o.job.rank_ms_after_action[r], 0) << "rank " << r << " never ended\n" << out;
      EXPECT_LE(o.job.rank_ms_after_action[r], rank_bound) << "rank " << r << "\n" << out;
    }
    const double keepalive = GetParam() ? cnnbench::testing::kKeepaliveSeconds : 0;
    EXPECT_GE(o.job.mpirun_ms_after_action, 0) << out;
    EXPECT_LE(o.job.mpirun_ms_after_action, rank_bound + 1000.0 * keepalive) << out;
  }

  // The first case is in the file, whole and unfailed, the second left
  // out, and the file says the run did not end.
  void ExpectFirstCaseKept(const Outcome& o, const std::string& note_start) {
    ASSERT_FALSE(o.run.is_discarded()) << "no results file, or not JSON\n" << o.job.output;
    EXPECT_TRUE(absl::StartsWith(o.run.at("context").value("interrupted", ""), note_start))
        << o.run.at("context").dump(2);
    ASSERT_EQ(o.run.at("benchmarks").size(), 1u) << o.run.dump(2);
    const nlohmann::json& b = o.run.at("benchmarks")[0];
    EXPECT_TRUE(absl::StartsWith(b.at("name").get<std::string>(), kFirstCase)) << b.dump();
    EXPECT_FALSE(b.value("error_occurred", false)) << b.dump();
    EXPECT_GT(b.value("busbw", 0.0), 0) << b.dump();
    // No temporary file left beside it.
    for (const auto& entry :
         std::filesystem::directory_iterator(std::filesystem::path(o.json_path).parent_path()))
      EXPECT_FALSE(absl::StrContains(entry.path().filename().string(), ".cnnbench-"))
          << "left behind: " << entry.path();
  }

  void ExpectStored(const Outcome& o) {
    EXPECT_TRUE(absl::StrContains(o.stored, "1 run(s) in")) << o.stored << "\n" << o.job.output;
    EXPECT_TRUE(absl::StrContains(o.stored, "1 case(s) (interrupted)")) << o.stored;
  }

  std::string mpirun_;
  std::unique_ptr<TwoHosts> hosts_;
  MpiLaunch launch_;
  std::string host_[2];
};

// Rank 1 killed: the launcher names it and its host; rank 0, ended by the
// launcher's SIGTERM, keeps the finished case in the file and the store
// at once (the launcher's SIGKILL follows a second later).
TEST_P(MpiFaultTest, RankOneKilled) {
  const Outcome o = Run("kill_rank1", SignalAction(SIGKILL, 1));
  ExpectEndedInTime(o);
  EXPECT_TRUE(absl::StrContains(o.job.output, "process rank 1 with PID")) << o.job.output;
  EXPECT_TRUE(absl::StrContains(o.job.output, absl::StrCat("on node ", host_[1]))) << o.job.output;
  ExpectFirstCaseKept(o, "SIGTERM after 1 of 2");
  ExpectStored(o);
}

// Rank 0 killed: nothing more comes from it, so the launcher names it and
// its host, and rank 0 named the file at the start; the file holds the
// finished case, written as it finished.
TEST_P(MpiFaultTest, RankZeroKilled) {
  const Outcome o = Run("kill_rank0", SignalAction(SIGKILL, 0));
  ExpectEndedInTime(o);
  EXPECT_TRUE(absl::StrContains(o.job.output, "process rank 0 with PID")) << o.job.output;
  EXPECT_TRUE(absl::StrContains(o.job.output, absl::StrCat("on node ", host_[0]))) << o.job.output;
  EXPECT_TRUE(
      absl::StrContains(o.job.output, absl::StrCat("rank 0 writes the results to ", o.json_path)))
      << o.job.output;
  ExpectFirstCaseKept(o, "not finished: 1 of 2");
}

// Rank 1 stopped: rank 0 times out in the collective and ends the job,
// saying which rank, on which host, in which case, after writing and
// storing the finished case. A stop that lands inside the transfer (both
// ranks had agreed to the call) leaves rank 0 unable to tell who is late:
// its line says that stage instead.
TEST_P(MpiFaultTest, RankOneStopped) {
  const Outcome o = Run("stop_rank1", SignalAction(SIGSTOP, 1));
  ExpectEndedInTime(o);
  const std::string line =
      absl::StrCat("cnnbench: rank 0 (on ", host_[0], "), case ", kSecondCase, ": ");
  EXPECT_TRUE(absl::StrContains(o.job.output, line)) << o.job.output;
  const bool named =
      absl::StrContains(o.job.output, absl::StrCat("rank 1 (on ", host_[1], ") did not arrive"));
  EXPECT_TRUE(named || absl::StrContains(o.job.output, "every rank arrived")) << o.job.output;
  ExpectFirstCaseKept(o, absl::StrCat("a collective timed out in case ", kSecondCase));
  ExpectStored(o);
}

// The link between the hosts down mid-case: mpirun loses its daemon on the
// other host (TCP keepalive, kKeepalive: under the collective timeout) and
// ends the job, naming both hosts; rank 0, sent SIGTERM, keeps the finished
// case in the file and the store and says so, naming its host and the case.
TEST_P(MpiFaultTest, LinkDown) {
  if (!GetParam()) GTEST_SKIP() << "one host has no link to take down";
  constexpr int kLongerTimeout = 20;  // the keepalive, not the timeout, ends it
  const Outcome o = Run("link_down", hosts_->LinkLine(/*up=*/false), kLongerTimeout);
  ExpectEndedInTime(o, kLongerTimeout);
  EXPECT_LE(o.job.mpirun_ms_after_action,
            1000.0 * (cnnbench::testing::kKeepaliveSeconds + kSlackSeconds))
      << o.job.output;
  EXPECT_TRUE(absl::StrContains(o.job.output, "ORTE has lost communication with a remote daemon"))
      << o.job.output;
  EXPECT_TRUE(absl::StrContains(o.job.output, absl::StrCat("on node ", host_[1]))) << o.job.output;
  EXPECT_TRUE(absl::StrContains(
      o.job.output, absl::StrCat("cnnbench: rank 0 (on ", host_[0], ") got SIGTERM in case ",
                                 kSecondCase, "; 1 finished case(s) are in ")))
      << o.job.output;
  ExpectFirstCaseKept(o, "SIGTERM after 1 of 2");
  ExpectStored(o);
}

INSTANTIATE_TEST_SUITE_P(Hosts, MpiFaultTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "TwoHosts" : "OneHost";
                         });

}  // namespace
}  // namespace cnnbench::bench
