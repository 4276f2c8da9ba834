// //tools:history as a user runs it: import (idempotent, a bad file named,
// Ctrl-C leaving the store as it was), changes with their cause, annotate,
// prune, dashboard, runs, and its usage errors.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_files.h"
#include "tests/tools/history/run_json.h"

namespace cnnbench::history {
namespace {

using test_runs::kResnet;
using test_runs::kVgg;
using test_runs::RunJson;
using test_runs::RunSpec;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

class HistoryToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int n = 0;
    dir_ = test_files::FreshTempDir(absl::StrCat("history_tool_", ++n));
    store_ = dir_ + "/s.db";
  }

  // Runs the tool in dir_; returns its exit status and its output.
  int Tool(const std::string& args, std::string* out) {
    const std::string log = dir_ + "/tool.log";
    const int rc = std::system(absl::StrCat("cd ", dir_, " && ", Binary(), " ", args,
                                            " --store=", store_, " > ", log, " 2>&1")
                                   .c_str());
    *out = Read(log);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }

  static std::string Binary() {
    const char* src = std::getenv("TEST_SRCDIR");
    const char* ws = std::getenv("TEST_WORKSPACE");
    return src && ws ? absl::StrCat(src, "/", ws, "/tools/history") : "tools/history";
  }

  // `runs` run files, resnet50 10% slower from run `at` with oneDNN updated.
  std::vector<std::string> History(int runs, int at) {
    std::mt19937 rng(17);
    std::normal_distribution<double> noise(1.0, 0.01);
    std::vector<std::string> files;
    for (int i = 0; i < runs; ++i) {
      RunSpec r;
      r.date = absl::StrFormat("2026-11-%02dT10:00:00+00:00", i + 1);
      r.commit = absl::StrFormat("%07x%033d", 0xabc0000 + i, 0);
      r.onednn = i >= at ? "3.3.0" : "3.2.0";
      const double level = (i >= at ? 90 : 100) * noise(rng);
      r.cases = {{kResnet, {level * noise(rng), level * noise(rng), level * noise(rng)}},
                 {kVgg, {50 * noise(rng), 50 * noise(rng)}}};
      files.push_back(absl::StrCat(dir_, "/run", i, ".json"));
      Write(files.back(), RunJson(r));
    }
    return files;
  }

  std::string dir_, store_;
};

TEST_F(HistoryToolTest, ImportsOnceAndNamesABadFile) {
  std::vector<std::string> files = History(3, 99);
  Write(dir_ + "/notes.json", "these are notes");
  std::string out;
  EXPECT_EQ(Tool(absl::StrCat("import ", files[0], " ", dir_, "/notes.json ", files[1], " ",
                              files[2]),
                 &out),
            2)
      << out;
  EXPECT_TRUE(absl::StrContains(out, files[0] + ": run 1, run 1 of 1 of cpu-test, 2 case(s)"))
      << out;
  EXPECT_TRUE(absl::StrContains(out, absl::StrCat(dir_, "/notes.json: not imported: ")) &&
              absl::StrContains(out, "not JSON"))
      << out;
  EXPECT_TRUE(absl::StrContains(out, "3 imported, 0 already stored, 1 failed")) << out;
  EXPECT_EQ(Tool(absl::StrCat("import ", files[1]), &out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, files[1] + ": already stored as run 2")) << out;
  EXPECT_EQ(Tool("runs", &out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "3 run(s) in " + store_)) << out;
}

// The peer runners' files (PyTorch, TensorFlow on the same machine) import
// like ours, each a run of its own framework on the machine.
TEST_F(HistoryToolTest, APeerRunnersFilesImportLikeOurs) {
  const char* src = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  ASSERT_TRUE(src && ws);
  const std::string data = absl::StrCat(src, "/", ws, "/tests/tools/testdata/");
  std::string out;
  ASSERT_EQ(Tool(absl::StrCat("import ", data, "peer_pytorch.json ", data, "peer_tensorflow.json"),
                 &out),
            0)
      << out;
  EXPECT_TRUE(absl::StrContains(out, "peer_pytorch.json: run 1, run 1 of 1 of cpu-epyc-2c"))
      << out;
  EXPECT_TRUE(absl::StrContains(out, "peer_tensorflow.json: run 2, run 2 of 2 of cpu-epyc-2c"))
      << out;
  EXPECT_TRUE(absl::StrContains(out, "2 imported, 0 already stored, 0 failed")) << out;
}

TEST_F(HistoryToolTest, ChangesNameTheirCauseAndAnAnnotationExplainsThem) {
  std::vector<std::string> files = History(24, 16);
  std::string out;
  ASSERT_EQ(Tool(absl::StrCat("import ", absl::StrJoin(files, " ")), &out), 0) << out;
  ASSERT_EQ(Tool("changes", &out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, absl::StrCat(kResnet, " on cpu-test: regression -")))
      << out;
  EXPECT_TRUE(absl::StrContains(out, "between run 16 (2026-11-16T10:00:00+00:00, abc000f) and "
                                     "run 17 (2026-11-17T10:00:00+00:00, abc0010)"))
      << out;
  EXPECT_TRUE(absl::StrContains(out, "oneDNN 3.2.0 \u2192 3.3.0 between these runs; commit "
                                     "abc000f..abc0010"))
      << out;
  EXPECT_TRUE(absl::StrContains(out, "1 change(s) in " + store_ + ": 1 regression(s)")) << out;
  ASSERT_EQ(Tool("annotate --run=17 --note='oneDNN 3.3 update'", &out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "annotation 1 at run 17: oneDNN 3.3 update")) << out;
  ASSERT_EQ(Tool("changes", &out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "0 change(s)")) << out;
  EXPECT_EQ(Tool("annotate --run=999 --note=x", &out), 1) << out;
  EXPECT_TRUE(absl::StrContains(out, "no run 999")) << out;
}

TEST_F(HistoryToolTest, PruneDashboardAndUsage) {
  std::vector<std::string> files = History(6, 99);
  std::string out;
  ASSERT_EQ(Tool(absl::StrCat("import ", absl::StrJoin(files, " ")), &out), 0) << out;
  ASSERT_EQ(Tool("prune --keep=2", &out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "pruned 8 run result(s) in 2 series: 20 repetition row(s) "
                                     "removed"))
      << out;
  ASSERT_EQ(Tool("dashboard --output=dash", &out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "dashboard: dash/index.html")) << out;
  EXPECT_FALSE(Read(dir_ + "/dash/index.html").empty());
  EXPECT_EQ(Tool("frobnicate", &out), 1) << out;
  EXPECT_TRUE(absl::StrContains(out, "unknown command 'frobnicate'")) << out;
  EXPECT_EQ(Tool("changes extra.json", &out), 1) << out;
  // A reader does not make a store that is not there.
  store_ = dir_ + "/missing.db";
  EXPECT_EQ(Tool("changes", &out), 1) << out;
  EXPECT_TRUE(absl::StrContains(out, "no such file")) << out;
  EXPECT_NE(std::system(absl::StrCat("test -e ", store_).c_str()), 0);
}

// Ctrl-C during an import: the file being imported is not stored, the ones
// before it are, and the store opens and takes more afterwards.
TEST_F(HistoryToolTest, CtrlCDuringAnImportKeepsWhatWasImportedBeforeIt) {
  std::vector<std::string> files;
  {
    RunSpec r;
    for (int c = 0; c < 400; ++c)
      r.cases.push_back(
          {absl::StrCat("train/resnet50/fp32/synthetic/batch:", c + 1, "/gpus:0"), {1, 2, 3}});
    for (int i = 0; i < 300; ++i) {
      r.date = absl::StrFormat("2026-10-%02dT%02d:%02d:00+00:00", 1 + i / 24 % 28, i % 24, i % 60);
      files.push_back(absl::StrCat(dir_, "/big", i, ".json"));
      Write(files.back(), RunJson(r));
    }
  }
  const std::string script = dir_ + "/interrupt.sh";
  const std::string log = dir_ + "/import.log";
  Write(script, absl::StrCat(Binary(), " import ", absl::StrJoin(files, " "), " --store=", store_,
                             " > ", log, " 2>&1 &\npid=$!\n",
                             "for i in $(seq 600); do [ \"$(grep -c ': run ' ", log,
                             ")\" -ge 3 ] && break; sleep 0.05; done\n",
                             "kill -INT $pid\nwait $pid\necho $? > ", dir_, "/status\n"));
  ASSERT_EQ(std::system(absl::StrCat("bash ", script).c_str()), 0);
  const std::string out = Read(log);
  const int status = std::atoi(Read(dir_ + "/status").c_str());
  if (status == 0) GTEST_SKIP() << "the import finished before the signal: " << out;
  EXPECT_EQ(status, 130) << out;
  EXPECT_TRUE(absl::StrContains(out, "interrupted while importing")) << out;
  EXPECT_TRUE(absl::StrContains(out, "(the store is as it was before it)")) << out;
  int lines = 0;
  for (absl::string_view line : absl::StrSplit(out, '\n'))
    if (absl::StrContains(line, ": run ")) ++lines;
  std::string runs;
  ASSERT_EQ(Tool("runs", &runs), 0) << runs;
  EXPECT_TRUE(absl::StrContains(runs, absl::StrCat(lines, " run(s) in "))) << out << runs;
  EXPECT_TRUE(absl::StrContains(out, absl::StrCat(lines, " file(s) imported before it are kept")))
      << out;
}

}  // namespace
}  // namespace cnnbench::history
