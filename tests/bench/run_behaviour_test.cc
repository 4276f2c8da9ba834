// Runs //bench:all as a user would and checks that nothing is lost and
// nothing passes silently: interrupts keep the finished cases, the output
// file is replaced only by a complete one and write errors fail the run,
// bad flag values are errors, --list and [i/N] follow --benchmark_filter,
// --help shows the suite's flags, skip messages read well, and the context
// says how the suite was built and under which load.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/harness/harness.h"
#include "bench/suite/names.h"
#include "gtest/gtest.h"
#include "tests/testing/suite_paths.h"
#include "nlohmann/json.hpp"

namespace cnnbench::bench {
namespace {

using cnnbench::testing::BenchBinary;
using cnnbench::testing::TempPath;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// Runs the suite; returns its exit status (-1 when it did not exit normally).
int RunBench(const std::string& args, std::string* output) {
  const std::string log = TempPath("bench.log");
  const std::string cmd = absl::StrCat(BenchBinary(), " ", args, " > ", log, " 2>&1");
  const int rc = std::system(cmd.c_str());
  *output = ReadFile(log);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// Starts the suite, sends `signal` once case 2 has started, and returns its exit status.
int RunAndInterrupt(const std::string& args, const char* signal, std::string* output) {
  const std::string log = TempPath("interrupted.log");
  const std::string status = TempPath("interrupted.status");
  const std::string script_path = TempPath("interrupt.sh");
  // The log is emptied before the suite starts: the shell truncates it in
  // the child, which may come after the loop below first reads it, and an
  // earlier call's "[2/" must not trigger the signal at once.
  WriteFile(
      script_path,
      absl::StrCat(": > ", log, "\n", BenchBinary(), " ", args, " > ", log, " 2>&1 &\npid=$!\n",
                   "for i in $(seq 600); do grep -q '^\\[2/' ", log, " && break; sleep 0.1; done\n",
                   "kill -", signal, " $pid\nwait $pid\necho $? > ", status, "\n"));
  EXPECT_EQ(std::system(absl::StrCat("bash ", script_path).c_str()), 0);
  *output = ReadFile(log);
  return std::atoi(ReadFile(status).c_str());
}

// The iteration and aggregate entries of a run, by name without suffixes.
std::set<std::string> CaseNames(const nlohmann::json& run) {
  std::set<std::string> names;
  for (const auto& b : run.at("benchmarks")) {
    auto parsed = ParseCaseName(b.at("name").get<std::string>());
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    if (parsed.ok()) names.insert(parsed->ToString());
  }
  return names;
}

// Kernel cases long enough (0.5 s per repetition) to interrupt the second one.
constexpr char kSlowSweep[] =
    "--preset=tiny --families=gemm,conv --benchmark_min_time=0.5 --benchmark_out_format=json";

void ExpectInterruptedRunKeepsFinishedCases(const char* signal, int expected_status) {
  const std::string json_path = TempPath(absl::StrCat("interrupted_", signal, ".json"));
  const std::string store = TempPath(absl::StrCat("interrupted_", signal, ".db"));
  std::remove(json_path.c_str());
  std::remove(store.c_str());
  std::string output;
  const int status = RunAndInterrupt(
      absl::StrCat(kSlowSweep, " --benchmark_out=", json_path, " --store=", store), signal,
      &output);
  EXPECT_EQ(status, expected_status) << output;
  EXPECT_TRUE(absl::StrContains(output, "interrupted")) << output;
  // Kept in the store too, marked.
  EXPECT_TRUE(absl::StrContains(output, absl::StrCat("in ", store, ", marked interrupted")))
      << output;
  const std::string text = ReadFile(json_path);
  ASSERT_FALSE(text.empty()) << output;
  nlohmann::json run = nlohmann::json::parse(text);  // throws (fails) on a truncated file
  const std::set<std::string> names = CaseNames(run);
  EXPECT_GE(names.size(), 1u) << text;  // case 1 finished before the signal
  for (const auto& b : run.at("benchmarks"))
    EXPECT_FALSE(b.value("error_occurred", false)) << "abandoned cases are left out: " << b.dump();
  // The file says it was interrupted, by what and how far the run got.
  const std::string interrupted = run.at("context").value("interrupted", "");
  EXPECT_TRUE(absl::StartsWith(interrupted, absl::StrCat("SIG", signal, " after 2 of ")))
      << interrupted;
  EXPECT_TRUE(absl::StrContains(interrupted, " not run")) << interrupted;
}

TEST(RunBehaviourTest, SigintKeepsTheFinishedCasesAndExits130) {
  ExpectInterruptedRunKeepsFinishedCases("INT", 130);
}

TEST(RunBehaviourTest, SigtermKeepsTheFinishedCasesAndExits143) {
  ExpectInterruptedRunKeepsFinishedCases("TERM", 143);
}

// A dropped ssh session (SIGHUP), Ctrl-\ (SIGQUIT) and a batch system's
// warning before the end (SIGUSR1, SIGUSR2) stop the run as SIGTERM does.
TEST(RunBehaviourTest, EveryStopSignalKeepsTheFinishedCasesAndExitsWithIt) {
  for (const auto& [signal, number] : {std::pair{"HUP", SIGHUP}, std::pair{"QUIT", SIGQUIT},
                                       std::pair{"USR1", SIGUSR1}, std::pair{"USR2", SIGUSR2}}) {
    SCOPED_TRACE(signal);
    ExpectInterruptedRunKeepsFinishedCases(signal, 128 + number);
  }
}

// Killed outright while case 2 runs (SIGKILL: a launcher's follow-up, the
// OOM killer): case 1 is in the target already, a whole file that says the
// run had not ended, and an earlier file was replaced only by it.
TEST(RunBehaviourTest, AKilledRunLeavesTheFinishedCasesInTheTarget) {
  const std::string dir = TempPath("killed");
  ASSERT_EQ(std::system(absl::StrCat("rm -rf ", dir, " && mkdir -p ", dir).c_str()), 0);
  const std::string json_path = dir + "/run.json";
  WriteFile(json_path, "earlier results\n");
  std::string output;
  const int status =
      RunAndInterrupt(absl::StrCat(kSlowSweep, " --benchmark_out=", json_path), "KILL", &output);
  EXPECT_EQ(status, 128 + SIGKILL) << output;
  const nlohmann::json run = nlohmann::json::parse(ReadFile(json_path), nullptr, false);
  ASSERT_FALSE(run.is_discarded()) << ReadFile(json_path);
  EXPECT_EQ(CaseNames(run).size(), 1u) << run.dump(2);
  EXPECT_TRUE(absl::StartsWith(run.at("context").value("interrupted", ""), "not finished: 1 of "))
      << run.at("context").dump();
}

// The disk fills mid-run (a 200 KiB tmpfs, in a mount namespace of the
// test's own): the target keeps the cases written before, a warning says
// so when the rewrites start failing, and the whole run is saved elsewhere
// and named on the last line of stderr. Skipped where the test may not
// mount (no root, no unshare).
TEST(RunBehaviourTest, AFullDiskKeepsWhatWasWrittenAndSavesTheRunElsewhere) {
  const std::string dir = TempPath("full_disk");
  ASSERT_EQ(std::system(absl::StrCat("rm -rf ", dir, " && mkdir -p ", dir, "/mnt ", dir,
                                     "/rescue").c_str()),
            0);
  if (std::system(absl::StrCat("unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs ", dir,
                               "/mnt' >/dev/null 2>&1")
                      .c_str()) != 0)
    GTEST_SKIP() << "cannot mount a tmpfs in a mount namespace here (needs root and unshare)";
  const std::string log = dir + "/log";
  WriteFile(dir + "/fill.sh",
            absl::StrCat("mount -t tmpfs -o size=200k tmpfs ", dir, "/mnt || exit 9\n",
                         "TMPDIR=", dir, "/rescue ", BenchBinary(), " ", kSlowSweep,
                         " --benchmark_out=", dir, "/mnt/run.json > ", log, " 2>&1 &\npid=$!\n",
                         "for i in $(seq 600); do grep -q '^\\[3/' ", log,
                         " && break; sleep 0.1; done\n",
                         "dd if=/dev/zero of=", dir, "/mnt/filler bs=1k count=400 2>/dev/null\n",
                         "wait $pid; echo $? > ", dir, "/status\n",
                         "cp ", dir, "/mnt/run.json ", dir, "/kept.json\n"));
  ASSERT_EQ(std::system(absl::StrCat("unshare -m bash ", dir, "/fill.sh").c_str()), 0);
  const std::string output = ReadFile(log);
  EXPECT_EQ(std::atoi(ReadFile(dir + "/status").c_str()), 1) << output;
  EXPECT_TRUE(absl::StrContains(output, "No space left on device")) << output;
  EXPECT_TRUE(absl::StrContains(output, "cnnbench: warning: ")) << output;
  // The target: the cases written before the disk filled, whole.
  const nlohmann::json kept = nlohmann::json::parse(ReadFile(dir + "/kept.json"), nullptr, false);
  ASSERT_FALSE(kept.is_discarded()) << ReadFile(dir + "/kept.json");
  EXPECT_GE(CaseNames(kept).size(), 2u);
  EXPECT_TRUE(kept.at("context").contains("interrupted"));
  // The last line names the file that holds the whole run.
  const std::vector<std::string> lines =
      absl::StrSplit(std::string(absl::StripTrailingAsciiWhitespace(output)), '\n');
  const std::string last = lines.back();
  const size_t at = last.find(dir + "/rescue/run.json.cnnbench-rescued-");
  ASSERT_NE(at, std::string::npos) << output;
  const nlohmann::json saved = nlohmann::json::parse(ReadFile(last.substr(at)), nullptr, false);
  ASSERT_FALSE(saved.is_discarded()) << last.substr(at);
  EXPECT_EQ(CaseNames(saved).size(), 5u) << saved.dump(2);
  EXPECT_FALSE(saved.at("context").contains("interrupted"));
}

TEST(RunBehaviourTest, ASecondSignalEndsAtOnceLeavingNoTemporaryFile) {
  const std::string dir = TempPath("second_signal");
  ASSERT_EQ(std::system(absl::StrCat("rm -rf ", dir, " && mkdir -p ", dir).c_str()), 0);
  const std::string json_path = dir + "/run.json";
  WriteFile(json_path, "earlier results\n");
  const std::string log = dir + "/log";
  const std::string script_path = dir + "/interrupt.sh";
  // Two SIGTERMs in a row from two senders (the shell, then the kill
  // program) while case 1 (a long training step) runs: the run ends by the
  // signal, not after the step.
  WriteFile(
      script_path,
      absl::StrCat(BenchBinary(),
                   " --preset=tiny --families=train --models=vgg16 --batch_sizes=8 "
                   "--steps=50 --benchmark_out_format=json --benchmark_out=",
                   json_path, " > ", log, " 2>&1 &\npid=$!\n",
                   "for i in $(seq 600); do grep -q '^\\[1/' ", log, " && break; sleep 0.1; done\n",
                   "kill -TERM $pid; sleep 0.2; /bin/kill -TERM $pid\nwait $pid\necho $? > ",
                   dir, "/status\n"));
  ASSERT_EQ(std::system(absl::StrCat("bash ", script_path).c_str()), 0);
  EXPECT_EQ(std::atoi(ReadFile(dir + "/status").c_str()), 128 + SIGTERM) << ReadFile(log);
  // The earlier file is untouched and no temporary is left beside it.
  EXPECT_EQ(ReadFile(json_path), "earlier results\n");
  std::string listing;
  const std::string list_path = dir + "/listing";
  ASSERT_EQ(std::system(absl::StrCat("ls ", dir, " > ", list_path).c_str()), 0);
  EXPECT_FALSE(absl::StrContains(ReadFile(list_path), ".cnnbench-")) << ReadFile(list_path);
}

// GNU timeout signals the child and then its process group, mpirun
// forwards and follows up: two arrivals from one sender are one request,
// and the finished cases are written. Here SIGTERM and then SIGINT from
// the same shell, back to back (two kinds, so neither is merged into the
// other while pending).
TEST(RunBehaviourTest, TwoSignalsFromOneSenderAreOneRequest) {
  const std::string json_path = TempPath("one_sender.json");
  std::remove(json_path.c_str());
  const std::string log = TempPath("one_sender.log");
  const std::string status = TempPath("one_sender.status");
  const std::string script_path = TempPath("one_sender.sh");
  WriteFile(script_path,
            absl::StrCat(": > ", log, "\n", BenchBinary(), " ", kSlowSweep,
                         " --benchmark_out=", json_path, " > ", log, " 2>&1 &\npid=$!\n",
                         "for i in $(seq 600); do grep -q '^\\[2/' ", log,
                         " && break; sleep 0.1; done\n",
                         // the shell's builtin kill: both from this shell's pid
                         "kill -TERM $pid; kill -INT $pid\nwait $pid\necho $? > ", status, "\n"));
  ASSERT_EQ(std::system(absl::StrCat("bash ", script_path).c_str()), 0);
  const std::string output = ReadFile(log);
  // Whichever the kernel delivered first (both may be pending at once).
  const int exit_status = std::atoi(ReadFile(status).c_str());
  EXPECT_TRUE(exit_status == 128 + SIGTERM || exit_status == 128 + SIGINT)
      << exit_status << "\n" << output;
  EXPECT_TRUE(absl::StrContains(output, "the same sender's signal again")) << output;
  const std::string text = ReadFile(json_path);
  ASSERT_FALSE(text.empty()) << output;
  EXPECT_GE(CaseNames(nlohmann::json::parse(text)).size(), 1u) << text;
}

// Repetitions of a case whose counter is 0 in each (one rank's busbw): its
// _cv aggregate is 0/0, and the file stays JSON (no bare NaN), the counter
// left out there and kept where it is a number.
TEST(RunBehaviourTest, RepeatedZeroCountersLeaveTheFileValidJson) {
  const std::string json_path = TempPath("zero_cv.json");
  std::remove(json_path.c_str());
  std::string output;
  ASSERT_EQ(RunBench(absl::StrCat("--preset=tiny --families=allreduce --collective_ranks=1 "
                                  "--collective_bytes=64,64 --benchmark_repetitions=2 "
                                  "--benchmark_out_format=json --benchmark_out=",
                                  json_path),
                     &output),
            0)
      << output;
  const std::string text = ReadFile(json_path);
  EXPECT_FALSE(absl::StrContains(text, "NaN")) << text;
  nlohmann::json run;
  ASSERT_NO_THROW(run = nlohmann::json::parse(text)) << text;
  int cv = 0, mean = 0;
  for (const auto& b : run.at("benchmarks")) {
    const std::string aggregate = b.value("aggregate_name", "");
    if (aggregate == "cv") {
      ++cv;
      EXPECT_FALSE(b.contains("busbw")) << b.dump();
    }
    if (aggregate == "mean") {
      ++mean;
      EXPECT_TRUE(b.contains("busbw")) << b.dump();
    }
  }
  EXPECT_GT(cv, 0) << text;
  EXPECT_GT(mean, 0) << text;
}

// Ranks whose threads the system refuses (here the address space: 1000
// stacks do not fit in 2 GB) make that case unsupported with the reason;
// the run goes on, keeps the other cases and exits 0. Past 1024 ranks the
// flag itself is refused.
TEST(RunBehaviourTest, ThreadsTheSystemRefusesMakeTheCaseUnsupported) {
  const std::string json_path = TempPath("threads.json");
  std::remove(json_path.c_str());
  const std::string log = TempPath("threads.log");
  const std::string script_path = TempPath("threads.sh");
  WriteFile(script_path,
            absl::StrCat("ulimit -v 2000000\nexec ", BenchBinary(),
                         " --preset=tiny --families=allreduce --collective_ranks=2,1000 "
                         "--collective_bytes=64,64 --benchmark_out_format=json --benchmark_out=",
                         json_path, " > ", log, " 2>&1\n"));
  const int rc = std::system(absl::StrCat("bash ", script_path).c_str());
  const std::string output = ReadFile(log);
  ASSERT_TRUE(WIFEXITED(rc)) << output;
  EXPECT_EQ(WEXITSTATUS(rc), 0) << output;
  const nlohmann::json run = nlohmann::json::parse(ReadFile(json_path));
  int ran = 0, refused = 0;
  for (const auto& b : run.at("benchmarks")) {
    if (b.value("run_type", "") != "iteration") continue;
    const std::string name = b.at("name");
    if (absl::StrContains(name, "ranks:1000")) {
      ++refused;
      EXPECT_TRUE(absl::StartsWith(b.value("error_message", ""), "unsupported: 1000 ranks"))
          << b.dump();
    } else {
      ++ran;
      EXPECT_FALSE(b.value("error_occurred", false)) << b.dump();
    }
  }
  EXPECT_GT(ran, 0) << run.dump();
  EXPECT_GT(refused, 0) << run.dump();
  std::string flag_output;
  EXPECT_EQ(RunBench("--preset=tiny --collective_ranks=2,2000 --list", &flag_output), 2);
  EXPECT_TRUE(absl::StrContains(flag_output, "'2000' is more than 1024 ranks")) << flag_output;
}

// Without --benchmark_out the run writes JSON under results/ (where it was
// started), named by platform and time, and its last screen is the
// report's headline tables, the file and the command for the full report;
// --list writes nothing.
TEST(RunBehaviourTest, ADefaultRunEndsOnTheTableAndWritesUnderResults) {
  const std::string dir = TempPath("default_run");
  ASSERT_EQ(std::system(absl::StrCat("rm -rf ", dir, " && mkdir -p ", dir).c_str()), 0);
  const std::string log = dir + "/out.txt";
  const int rc = std::system(absl::StrCat("cd ", dir, " && ", BenchBinary(),
                                          " --preset=tiny --families=train,infer,peak "
                                          "--platform=test-box > ",
                                          log, " 2> ", dir, "/err.txt")
                                 .c_str());
  const std::string output = ReadFile(log);
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << output << ReadFile(dir + "/err.txt");
  const size_t tables = output.find("### Results");
  ASSERT_NE(tables, std::string::npos) << output;
  EXPECT_NE(output.find("### Training step vs the CPU's peak", tables), std::string::npos)
      << output;
  EXPECT_NE(output.find("### Inference", tables), std::string::npos) << output;
  EXPECT_EQ(output.find("### Kernels", tables), std::string::npos) << output;
  // The last lines: the file and the command, its path absolute (`./bazelw
  // run` reads a relative one at the repository root, not here).
  char* real_dir = realpath(dir.c_str(), nullptr);
  ASSERT_NE(real_dir, nullptr);
  const std::string results_dir = absl::StrCat(real_dir, "/results/");
  std::free(real_dir);
  const size_t results = output.rfind(absl::StrCat("\nresults: ", results_dir, "test-box-"));
  ASSERT_NE(results, std::string::npos) << output;
  const std::string path = output.substr(results + 10, output.find('\n', results + 1) - results - 10);
  EXPECT_TRUE(absl::EndsWith(path, ".json")) << path;
  EXPECT_NE(output.find(absl::StrCat("./bazelw run //tools:report -- ", path, " > report.md\n")),
            std::string::npos)
      << output;
  // Then where the run is kept: the default store beside the JSON.
  EXPECT_TRUE(absl::EndsWith(
      output, "stored as run 1 of this machine (test-box) in results/cnnbench.db; the machine's "
              "first run: nothing to compare with yet\ndashboard: ./bazelw run //tools:history "
              "-- dashboard\n"))
      << output;
  EXPECT_EQ(std::system(absl::StrCat("test -s ", dir, "/results/cnnbench.db").c_str()), 0);
  const nlohmann::json run = nlohmann::json::parse(ReadFile(path));
  EXPECT_EQ(run.at("context").at("platform"), "test-box");
  EXPECT_FALSE(CaseNames(run).empty());
  // --list and a given --benchmark_out behave as before: no results/ file.
  const std::string listed = TempPath("default_list");
  ASSERT_EQ(std::system(absl::StrCat("rm -rf ", listed, " && mkdir -p ", listed, " && cd ", listed,
                                     " && ", BenchBinary(), " --preset=tiny --list > /dev/null")
                            .c_str()),
            0);
  EXPECT_NE(std::system(absl::StrCat("test -e ", listed, "/results").c_str()), 0);
}

// Every run is kept in the store (--store), with or without --benchmark_out;
// a store that cannot take it costs the run nothing but a warning.
TEST(RunBehaviourTest, EveryRunIsKeptInTheStoreUnlessToldNot) {
  const std::string dir = TempPath("store_run");
  ASSERT_EQ(std::system(absl::StrCat("rm -rf ", dir, " && mkdir -p ", dir).c_str()), 0);
  const std::string store = dir + "/kept.db";
  std::string output;
  for (int run = 1; run <= 2; ++run) {
    ASSERT_EQ(RunBench(absl::StrCat("--preset=tiny --families=gemm --platform=store-box "
                                    "--benchmark_out=", dir, "/run", run, ".json --store=", store),
                       &output),
              0)
        << output;
    EXPECT_NE(output.find(absl::StrCat("stored as run ", run, " of this machine (store-box) in ",
                                       store)),
              std::string::npos)
        << output;
    EXPECT_NE(output.find(absl::StrCat("dashboard: ./bazelw run //tools:history -- dashboard "
                                       "--store=", store)),
              std::string::npos)
        << output;
  }
  EXPECT_NE(output.find("no change since the last run"), std::string::npos) << output;
  // --store=none: no store.
  const std::string none = dir + "/none";
  ASSERT_EQ(std::system(absl::StrCat("mkdir -p ", none).c_str()), 0);
  ASSERT_EQ(std::system(absl::StrCat("cd ", none, " && ", BenchBinary(),
                                     " --preset=tiny --families=gemm --store=none "
                                     "--benchmark_out=run.json > out.txt 2>&1")
                            .c_str()),
            0);
  EXPECT_EQ(ReadFile(none + "/out.txt").find("stored as"), std::string::npos);
  EXPECT_NE(std::system(absl::StrCat("test -e ", none, "/results").c_str()), 0);
  // A file that is not a store: the run's figures stand, a warning says how
  // to import them later, and the file is left as it was.
  const std::string notes = dir + "/notes.txt";
  WriteFile(notes, "not a database\n");
  ASSERT_EQ(RunBench(absl::StrCat("--preset=tiny --families=gemm --benchmark_out=", dir,
                                  "/run3.json --store=", notes),
                     &output),
            0)
      << output;
  EXPECT_NE(output.find("cnnbench: warning: not stored: results store " + notes), std::string::npos)
      << output;
  EXPECT_NE(output.find(absl::StrCat("import it later: ./bazelw run //tools:history -- import ",
                                     dir, "/run3.json --store=", notes)),
            std::string::npos)
      << output;
  EXPECT_EQ(ReadFile(notes), "not a database\n");
  EXPECT_TRUE(nlohmann::json::parse(ReadFile(dir + "/run3.json")).contains("benchmarks"));
  // A shared store that is down: a warning that never shows its password.
  ASSERT_EQ(RunBench(absl::StrCat("--preset=tiny --families=gemm --benchmark_out=", dir,
                                  "/run4.json --store='postgresql://bench:s3cret@/nodb?host=", dir,
                                  "/no_server'"),
                     &output),
            0)
      << output;
  EXPECT_NE(output.find("cnnbench: warning: not stored: "), std::string::npos) << output;
  EXPECT_NE(output.find("postgresql://bench:***@/nodb"), std::string::npos) << output;
  EXPECT_EQ(output.find("s3cret"), std::string::npos) << output;
  // An empty or folder value is refused before anything runs.
  EXPECT_EQ(RunBench("--preset=tiny --families=gemm --store= --list", &output), 2) << output;
  EXPECT_NE(output.find("--store=: empty"), std::string::npos) << output;
  // A yes/no word too, which would otherwise make a SQLite file so named.
  for (const char* word : {"false", "off", "0"}) {
    EXPECT_EQ(RunBench(absl::StrCat("--preset=tiny --families=gemm --store=", word, " --list"),
                       &output),
              2)
        << output;
    EXPECT_NE(output.find(absl::StrCat("--store=", word, ": a yes/no word")), std::string::npos)
        << output;
  }
  EXPECT_EQ(RunBench(absl::StrCat("--preset=tiny --families=gemm --store=", dir, "/ --list"),
                     &output),
            2)
      << output;
}

TEST(RunBehaviourTest, NoCaseToRunLeavesTheOutputFileAloneAndFails) {
  const std::string json_path = TempPath("keep.json");
  WriteFile(json_path, "earlier results\n");
  std::string output;
  for (const char* filter : {"no_such_case", "a{1"}) {
    EXPECT_EQ(RunBench(absl::StrCat("--preset=tiny --benchmark_filter='", filter,
                                    "' --benchmark_out=", json_path),
                       &output),
              2)
        << output;
    EXPECT_TRUE(absl::StrContains(output, "--benchmark_filter=")) << output;
    EXPECT_EQ(ReadFile(json_path), "earlier results\n") << filter;
  }
  // A run that completes replaces it, and leaves no temporary file beside it.
  const std::string folder = TempPath("atomic");
  ASSERT_EQ(std::system(absl::StrCat("rm -rf ", folder, " && mkdir -p ", folder).c_str()), 0);
  WriteFile(folder + "/run.json", "earlier results\n");
  ASSERT_EQ(
      RunBench(absl::StrCat("--preset=tiny --families=gemm --benchmark_out=", folder, "/run.json"),
               &output),
      0)
      << output;
  EXPECT_FALSE(nlohmann::json::parse(ReadFile(folder + "/run.json")).at("benchmarks").empty());
  EXPECT_EQ(std::system(absl::StrCat("test \"$(ls -A ", folder, ")\" = run.json").c_str()), 0)
      << "a temporary file was left in " << folder;
}

TEST(RunBehaviourTest, WriteErrorsFailWithTheReason) {
  std::string output;
  EXPECT_EQ(RunBench("--preset=tiny --families=gemm --benchmark_out=/dev/full", &output), 1)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "No space left on device")) << output;
  EXPECT_EQ(RunBench(absl::StrCat("--preset=tiny --families=gemm --benchmark_out=",
                                  TempPath("no_such_folder/run.json")),
                     &output),
            1)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "No such file or directory")) << output;
  // A device is written directly.
  EXPECT_EQ(RunBench("--preset=tiny --families=gemm --benchmark_out=/dev/null", &output), 0)
      << output;
}

TEST(RunBehaviourTest, MalformedOrEmptyFlagValuesAreErrorsNamingTheFlag) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--steps=-5", "--steps"},
      {"--warmup_steps=-7", "--warmup_steps"},
      {"--repetitions=0", "--repetitions"},
      {"--image_size=-1", "--image_size"},
      {"--kernel_batch=-2", "--kernel_batch"},
      {"--max_kernel_shapes=-1", "--max_kernel_shapes"},
      {"--allreduce_warmup=-1", "--allreduce_warmup"},
      {"--allreduce_iters=-1", "--allreduce_iters"},
      {"--gpus=,", "--gpus"},
      {"--gpus=0,,1", "--gpus"},
      {"--gpus=0,0", "--gpus"},
      {"--batch_sizes=,", "--batch_sizes"},
      {"--models=", "--models"},
      {"--precisions=fp32,", "--precisions"},
      {"--families=,", "--families"},
      {"--kernel_models=,", "--kernel_models"},
      {"--models=lenett", "--models: unknown model 'lenett'"},
      {"--kernel_models=lenett", "--kernel_models: unknown model 'lenett'"},
      {"--infer_models=lenett", "--infer_models: unknown model 'lenett'"},
      {"--collective_ops=sum,sum", "--collective_ops=sum,sum: 'sum' is given twice"},
      {"--collective_dtypes=fp32,float", "'fp32' and 'float' are the same type"},
      {"--collective_ops=all,sum", "--collective_ops: 'all' stands alone"},
      {"--data=", "--data"},
      {"--preset=", "--preset"},
      {"--platform=", "--platform"},
      {"--backend=", "--backend"},
      {"--gpu_layout=nhcw", "--gpu_layout"},
      {"--cuda_batch_norm=fast", "--cuda_batch_norm"},
      {"--data_dir=", "--data_dir"},
      {"--benchmark_out_format=xml", "--benchmark_out_format"},
      {"--display_every=-3", "--display_every"},
      {"--display_every=often", "--display_every"},
      {"--drift_threshold=-0.1", "--drift_threshold"},
      {"--cpu_conv_algorithm=fastest", "--cpu_conv_algorithm"},
      {"--cpu_conv_algorithm=", "--cpu_conv_algorithm"},
  };
  for (const auto& [flag, name] : cases) {
    std::string output;
    const std::string args = absl::StartsWith(flag, "--preset") ? flag : "--preset=tiny " + flag;
    EXPECT_EQ(RunBench(args + " --list", &output), 2) << flag << "\n" << output;
    EXPECT_TRUE(absl::StrContains(output, name)) << flag << "\n" << output;
  }
}

// Every train and infer repetition carries its step times in the JSON, one
// per timed step, beside the step statistics; --keep_step_times=false
// drops the list and keeps the statistics.
TEST(RunBehaviourTest, TrainAndInferRepetitionsCarryTheirStepTimes) {
  for (bool keep : {true, false}) {
    const std::string json_path = TempPath(absl::StrCat("steps_", keep, ".json"));
    std::string output;
    ASSERT_EQ(
        RunBench(absl::StrCat("--preset=tiny --families=train,infer --steps=3 "
                              "--infer_iterations=4 --keep_step_times=",
                              keep, " --benchmark_out_format=json --benchmark_out=", json_path),
                 &output),
        0)
        << output;
    const nlohmann::json run = nlohmann::json::parse(ReadFile(json_path));
    EXPECT_EQ(run["context"]["keep_step_times"], keep ? "true" : "false");
    int repetitions = 0;
    for (const nlohmann::json& b : run["benchmarks"]) {
      const std::string name = b["name"];
      const bool train = absl::StartsWith(name, "train/");
      if (!train && !absl::StartsWith(name, "infer/")) continue;
      if (b["run_type"] != "iteration") {
        EXPECT_FALSE(b.contains("step_times_ms")) << name;  // aggregates carry none
        continue;
      }
      ++repetitions;
      const std::string prefix = train ? "step_ms" : "latency_ms";
      for (const std::string& counter :
           {prefix, prefix + "_p50", prefix + "_p99", std::string("images_per_second_uncertainty"),
            std::string("images_per_second_jitter")})
        EXPECT_TRUE(b.contains(counter)) << name << " " << counter;
      EXPECT_FALSE(b.contains("drift")) << name << ": fewer than 20 steps";
      ASSERT_EQ(b.contains("step_times_ms"), keep) << name;
      if (!keep) continue;
      const std::vector<double> ms = b["step_times_ms"].get<std::vector<double>>();
      ASSERT_EQ(ms.size(), train ? 3u : 4u) << name;
      double sum = 0, max = 0;
      for (double v : ms) {
        EXPECT_GT(v, 0) << name;
        sum += v;
        max = std::max(max, v);
      }
      // The list is the steps the statistics summarise (6 significant digits).
      EXPECT_NEAR(sum / ms.size(), b[prefix].get<double>(), 1e-4 * b[prefix].get<double>()) << name;
      EXPECT_NEAR(max, b[prefix + "_max"].get<double>(), 1e-4 * max) << name;
    }
    EXPECT_GE(repetitions, 2 * 3) << "train, infer at batch 1 and 2, two repetitions each";
  }
}

// --trace_file: each single-replica train and infer case writes one more
// step (batch) as a Chrome trace, the case's name in the file's name, and
// says where.
TEST(RunBehaviourTest, TraceFileGetsOneMoreStepOfEachTrainAndInferCase) {
  const std::string trace = TempPath("trace.json");
  const std::string train = TempPath("trace.train_trivial_fp32_synthetic_batch-2_gpus-0.json");
  const std::string infer = TempPath("trace.infer_trivial_fp32_synthetic_batch-1_gpus-0.json");
  std::remove(train.c_str());
  std::remove(infer.c_str());
  std::string output;
  ASSERT_EQ(
      RunBench(absl::StrCat("--preset=tiny --families=train,infer --trace_file=", trace), &output),
      0)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "trace of one more step of train/trivial")) << output;
  EXPECT_TRUE(absl::StrContains(output, "trace of one more batch of infer/trivial")) << output;
  for (const std::string& path : {train, infer}) {
    const nlohmann::json events = nlohmann::json::parse(ReadFile(path));
    int layers = 0;
    for (const nlohmann::json& e : events) layers += e["ph"] == "X";
    EXPECT_GE(layers, 2) << path << ": " << events.dump();
  }
  EXPECT_EQ(RunBench("--preset=tiny --families=train --trace_file= --list", &output), 2);
  EXPECT_TRUE(absl::StrContains(output, "--trace_file")) << output;
}

// A trace path that cannot be used is a flag error before any case runs: a
// folder that is not there, a folder, a device; and one traced case writes
// the path itself (tf_cnn_benchmarks' --trace_file).
TEST(RunBehaviourTest, TraceFileIsCheckedFirstAndOneTracedCaseWritesThePathItself) {
  std::string output;
  for (const std::string& trace :
       {std::string("/nonexistent_cnnbench_dir/t.json"), std::string("/dev/full"),
        TempPath(""), std::string("/tmp")}) {
    EXPECT_EQ(RunBench(absl::StrCat("--preset=tiny --families=train --trace_file=", trace),
                       &output),
              2)
        << trace << ": " << output;
    EXPECT_TRUE(absl::StrContains(output, absl::StrCat("--trace_file=", trace))) << output;
    EXPECT_FALSE(absl::StrContains(output, "[1/")) << "no case ran: " << output;
  }
  const std::string trace = TempPath("one.json");
  std::remove(trace.c_str());
  ASSERT_EQ(RunBench(absl::StrCat("--preset=tiny --families=train --models=trivial "
                                  "--batch_sizes=2 --trace_file=",
                                  trace),
                     &output),
            0)
      << output;
  const nlohmann::json events = nlohmann::json::parse(ReadFile(trace));
  EXPECT_TRUE(events.is_array() && !events.empty()) << events.dump();
  EXPECT_TRUE(absl::StrContains(output, absl::StrCat(": ", trace))) << output;
}

// --trace_file with real data on one replica and on two CPU replicas: the
// replicas' file has a process row per replica, each with its layers on the
// compute lane, its buckets on the communication lane and the batch's feed
// on the upload lane; the single replica's has the feed too.
// An image-folder data set whose one training and one validation image
// are not JPEGs; its path ("" when it could not be made).
std::string BrokenImageFolder(const std::string& name) {
  const std::string data = TempPath(name);
  const std::string make =
      absl::StrCat("rm -rf ", data, " && mkdir -p ", data, "/train/n1 ", data, "/validation/n1",
                   " && echo 'not a jpeg' > ", data, "/train/n1/a.JPEG && echo 'not a jpeg' > ",
                   data, "/validation/n1/a.JPEG");
  return std::system(make.c_str()) == 0 ? data : "";
}

// A case that fails (an error that is neither unsupported nor OOM: here its
// data set holds only a broken image) still leaves the output file, and
// the run exits with its own status so that callers tell it from a clean
// run.
TEST(RunBehaviourTest, AFailedCaseWritesTheOutputAndExitsWithItsOwnStatus) {
  const std::string json_path = TempPath("failed_case.json");
  std::remove(json_path.c_str());
  const std::string data = BrokenImageFolder("broken_data");
  ASSERT_FALSE(data.empty());
  std::string output;
  ASSERT_EQ(RunBench(absl::StrCat("--preset=tiny --families=input,gemm --data_dir=", data,
                                  " --benchmark_out=", json_path),
                     &output),
            kCaseFailedExit)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "case(s) failed")) << output;
  EXPECT_TRUE(absl::StrContains(output, "input/folder/train")) << output;
  const nlohmann::json run = nlohmann::json::parse(ReadFile(json_path));
  int failed = 0, fine = 0;
  for (const auto& b : run.at("benchmarks")) {
    if (b.value("error_occurred", false)) {
      ++failed;
      EXPECT_TRUE(absl::StrContains(b.value("error_message", ""), data + "/train/n1/a.JPEG") ||
                  absl::StrContains(b.value("error_message", ""), data + "/validation/n1/a.JPEG"))
          << b.dump();
    } else {
      ++fine;
    }
  }
  EXPECT_GT(failed, 0) << run.dump();
  EXPECT_GT(fine, 0) << "the other cases ran and are in the output: " << run.dump();
}

// A trace that cannot be written (a folder standing where its file goes, as
// when the trace folder vanishes mid-run) costs the trace, never the
// figures measured before it: every case is in the output with its
// figures, a warning names the file, and the run exits 3 listing it.
TEST(RunBehaviourTest, ATraceThatCannotBeWrittenKeepsTheCasesFigures) {
  const std::string json_path = TempPath("unwritten_trace.json");
  std::remove(json_path.c_str());
  const std::string blocked = TempPath("failed.train_trivial_fp32_synthetic_batch-2_gpus-0.json");
  ASSERT_EQ(std::system(absl::StrCat("rm -rf ", blocked, " && mkdir -p ", blocked).c_str()), 0);
  std::string output;
  ASSERT_EQ(RunBench(absl::StrCat("--preset=tiny --families=train,infer,gemm --trace_file=",
                                  TempPath("failed.json"), " --benchmark_out=", json_path),
                     &output),
            kCaseFailedExit)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "cnnbench: warning: train/trivial")) << output;
  EXPECT_TRUE(absl::StrContains(output, "cannot write the trace file " + blocked)) << output;
  EXPECT_TRUE(absl::StrContains(output, "output(s) beside the figures could not be written"))
      << output;
  const nlohmann::json run = nlohmann::json::parse(ReadFile(json_path));
  bool traced_case_kept = false;
  for (const auto& b : run.at("benchmarks")) {
    EXPECT_FALSE(b.value("error_occurred", false)) << b.dump();
    if (absl::StartsWith(b.value("name", ""), "train/trivial/fp32/synthetic/batch:2/gpus:0/"))
      traced_case_kept = b.contains("images_per_second");
  }
  EXPECT_TRUE(traced_case_kept) << run.dump();
}

// Inference on real data under --on_bad_record=skip counts what it
// skipped (the counter and the label), as the train and input cases do.
TEST(RunBehaviourTest, InferenceOnRealDataCountsTheRecordsItSkipped) {
  const std::string data = TempPath("infer_skip_data");
  const std::string json_path = TempPath("infer_skip.json");
  const std::string make_dataset = cnnbench::testing::RunfilePath("tools/make_dataset");
  ASSERT_EQ(std::system(absl::StrCat("rm -rf ", data, " && ", make_dataset, " --out=", data,
                                     " --images=8 --validation_images=6 --classes=2 "
                                     "--format=folder --min_side=40 --max_side=60 > /dev/null && "
                                     "echo 'not a jpeg' > ",
                                     data, "/validation/n00000001/broken.JPEG")
                            .c_str()),
            0);
  std::string output;
  ASSERT_EQ(RunBench(absl::StrCat("--preset=tiny --families=infer --data=real --data_dir=", data,
                                  " --on_bad_record=skip --benchmark_out=", json_path),
                     &output),
            0)
      << output;
  const nlohmann::json run = nlohmann::json::parse(ReadFile(json_path));
  int rows = 0;
  for (const auto& b : run.at("benchmarks")) {
    if (b.value("run_type", "") != "iteration") continue;
    ++rows;
    EXPECT_GE(b.value("skipped_records", 0.0), 1.0) << b.dump();
    EXPECT_TRUE(absl::StrContains(b.value("label", ""), "bad records (decode ")) << b.dump();
  }
  EXPECT_GT(rows, 0) << run.dump();
}

// ONEDNN_MAX_CPU_ISA caps oneDNN: the context records the ISA it
// dispatches to and the cap (so a report never merges a capped run with an
// uncapped one), the fp32 peak loop follows the cap (a step's % of peak is
// against the capped peak), and bf16 is refused saying it is the cap, not
// the CPU, where the CPU has avx512_bf16.
TEST(RunBehaviourTest, AnIsaCapIsRecordedAndFollowedByThePeakAndBf16) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    GTEST_SKIP() << "this CPU lacks AVX2 with FMA: no cap below its own ISA to try";
  const std::string json_path = TempPath("isa_cap.json");
  const std::string log = TempPath("isa_cap.log");
  const int rc = std::system(absl::StrCat("ONEDNN_MAX_CPU_ISA=AVX2 ", BenchBinary(),
                                          " --preset=tiny --families=peak,train --models=trivial "
                                          "--precisions=fp32,bf16 --benchmark_out=",
                                          json_path, " > ", log, " 2>&1")
                                 .c_str());
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << ReadFile(log);
  const nlohmann::json run = nlohmann::json::parse(ReadFile(json_path));
  EXPECT_EQ(run.at("context").value("onednn_max_cpu_isa", ""), "ONEDNN_MAX_CPU_ISA=AVX2");
  EXPECT_EQ(run.at("context").value("onednn_cpu_isa", ""), "avx2");
  const bool cpu_bf16 = __builtin_cpu_supports("avx512bf16");
  int peaks = 0, bf16_refusals = 0;
  for (const auto& b : run.at("benchmarks")) {
    if (b.value("run_type", "") != "iteration") continue;
    const std::string name = b.value("name", "");
    if (absl::StartsWith(name, "peak/fp32/")) {
      ++peaks;
      EXPECT_TRUE(absl::StartsWith(b.value("label", ""), "avx2 ")) << b.dump();
    }
    if (name.find("/bf16/") != std::string::npos) {
      ++bf16_refusals;
      const std::string why = b.value("error_message", "");
      EXPECT_TRUE(absl::StartsWith(why, "unsupported: ")) << b.dump();
      EXPECT_TRUE(cpu_bf16 ? absl::StrContains(why, "oneDNN is capped below avx512_bf16 "
                                                    "(ONEDNN_MAX_CPU_ISA=AVX2)")
                           : absl::StrContains(why, "this CPU lacks avx512_bf16"))
          << b.dump();
    }
  }
  EXPECT_GT(peaks, 0) << run.dump(2);
  EXPECT_GT(bf16_refusals, 0) << run.dump(2);
}

// All-bad data under --on_bad_record=skip ends each input case with "no
// readable record in ..." instead of spinning for ever.
TEST(RunBehaviourTest, AllBadDataEndsTheCaseInsteadOfSpinning) {
  const std::string json_path = TempPath("all_bad.json");
  std::remove(json_path.c_str());
  const std::string data = BrokenImageFolder("all_bad_data");
  ASSERT_FALSE(data.empty());
  // Under `timeout`, so that a spin fails the test instead of hanging it.
  const std::string log = TempPath("all_bad.log");
  const int rc = std::system(absl::StrCat("timeout 120 ", BenchBinary(),
                                          " --preset=tiny --families=input --on_bad_record=skip "
                                          "--data_dir=",
                                          data, " --benchmark_out=", json_path, " > ", log, " 2>&1")
                                 .c_str());
  const std::string output = ReadFile(log);
  ASSERT_TRUE(WIFEXITED(rc)) << output;
  EXPECT_EQ(WEXITSTATUS(rc), kCaseFailedExit) << output;
  const nlohmann::json run = nlohmann::json::parse(ReadFile(json_path));
  ASSERT_FALSE(run.at("benchmarks").empty());
  for (const auto& b : run.at("benchmarks"))
    EXPECT_TRUE(absl::StrContains(b.value("error_message", ""), "no readable record in " + data))
        << b.dump();
}

// A compile deadline already past: each train case ends with "deadline: ..."
// naming its layer, the other cases run, the results file is written, and
// the run is not a failure (the time given ran out).
TEST(RunBehaviourTest, APassedCompileDeadlineEndsTheCaseNamingTheLayer) {
  const std::string json_path = TempPath("deadline.json");
  std::remove(json_path.c_str());
  std::string output;
  ASSERT_EQ(RunBench(absl::StrCat("--preset=tiny --families=train,gemm --compile_deadline_s=1e-9 "
                                  "--benchmark_out=",
                                  json_path),
                     &output),
            0)
      << output;
  const nlohmann::json run = nlohmann::json::parse(ReadFile(json_path));
  EXPECT_EQ(run.at("context").at("compile_deadline_s"), "1e-09") << run.at("context").dump();
  int deadlines = 0, fine = 0;
  for (const auto& b : run.at("benchmarks")) {
    const std::string why = b.value("error_message", "");
    if (absl::StartsWith(b.value("name", ""), "train/")) {
      EXPECT_TRUE(absl::StartsWith(why, "deadline: ")) << b.dump();
      EXPECT_TRUE(absl::StrContains(why, "while building layer ")) << b.dump();
      ++deadlines;
    } else {
      EXPECT_FALSE(b.value("error_occurred", false)) << b.dump();
      ++fine;
    }
  }
  EXPECT_GT(deadlines, 0) << run.dump();
  EXPECT_GT(fine, 0) << run.dump();
  EXPECT_EQ(RunBench("--preset=tiny --compile_deadline_s=-1 --list", &output), 2) << output;
  EXPECT_TRUE(absl::StrContains(output, "--compile_deadline_s")) << output;
}

// --cuda_plan_cache: a file in a folder that is not there is a flag error
// naming the flag; a usable path is in the JSON context (a CPU run never
// writes it: no cuda plan is chosen).
TEST(RunBehaviourTest, ThePlanChoiceFileFlagIsCheckedAndInTheContext) {
  std::string output;
  EXPECT_EQ(RunBench("--preset=tiny --cuda_plan_cache=/no/such/folder/plans.tsv --list", &output),
            2)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "--cuda_plan_cache=/no/such/folder/plans.tsv")) << output;
  const std::string plans = TempPath("plans.tsv");
  const std::string json = TempPath("plan_cache.json");
  std::remove(plans.c_str());
  ASSERT_EQ(RunBench(absl::StrCat("--preset=tiny --families=gemm --cuda_plan_cache=", plans,
                                  " --benchmark_out=", json),
                     &output),
            0)
      << output;
  const nlohmann::json run = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(run.at("context").at("cuda_plan_cache"), plans) << run.at("context").dump();
}

TEST(RunBehaviourTest, TraceFileOfReplicasHasALanePerStream) {
  const std::string trace = TempPath("replicas.json");
  const std::string path =
      TempPath("replicas.train_trivial_fp32_real_batch-2_gpus-0_replicas-2.json");
  const std::string single = TempPath("replicas.train_trivial_fp32_real_batch-2_gpus-0.json");
  std::remove(path.c_str());
  std::remove(single.c_str());
  std::string output;
  ASSERT_EQ(RunBench(absl::StrCat("--preset=tiny --families=train --data=real --replicas=1,2 "
                                  "--trace_file=",
                                  trace),
                     &output),
            0)
      << output;
  const std::string single_trace = ReadFile(single);
  EXPECT_TRUE(absl::StrContains(single_trace, "\"(next batch)\"")) << single_trace;
  EXPECT_TRUE(absl::StrContains(single_trace, "\"upload\"")) << single_trace;
  EXPECT_TRUE(absl::StrContains(output, "(2 replica(s))")) << output;
  const nlohmann::json events = nlohmann::json::parse(ReadFile(path));
  std::map<int, std::string> processes, lanes;
  for (const nlohmann::json& e : events) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "thread_name") lanes[e["tid"]] = e["args"]["name"];
  }
  ASSERT_EQ(processes.size(), 2u) << events.dump();
  EXPECT_TRUE(absl::StrContains(processes[2], "rank 1 of 2")) << processes[2];
  // Per process: which lanes hold slices, and the upload's two parts.
  std::map<int, std::set<std::string>> used, names;
  for (const nlohmann::json& e : events) {
    if (e["ph"] != "X") continue;
    used[e["pid"]].insert(lanes[e["tid"]]);
    names[e["pid"]].insert(e["name"].get<std::string>());
  }
  for (int pid : {1, 2}) {
    EXPECT_EQ(used[pid], (std::set<std::string>{"compute", "communication", "upload"})) << pid;
    EXPECT_TRUE(names[pid].count("(next batch)") && names[pid].count("(upload)")) << pid;
    EXPECT_TRUE(names[pid].count("(update)")) << pid;
  }
}

TEST(RunBehaviourTest, ListAndProgressCountOnlyTheCasesTheFilterSelects) {
  std::string output;
  // Names with their suffixes: only counted families have "iterations:".
  ASSERT_EQ(RunBench("--preset=tiny --list --benchmark_filter='gemm|iterations:'", &output), 0)
      << output;
  std::vector<std::string> listed;
  for (absl::string_view line : absl::StrSplit(output, '\n', absl::SkipEmpty()))
    listed.push_back(std::string(line));
  ASSERT_FALSE(listed.empty());
  for (const auto& name : listed) {
    auto parsed = ParseCaseName(name);
    ASSERT_TRUE(parsed.ok()) << name;
    EXPECT_TRUE(parsed->family == "gemm" || parsed->family == "train" || parsed->IsCollective() ||
                parsed->family == "grads" || parsed->family == "infer")
        << name;
  }
  ASSERT_EQ(RunBench("--preset=tiny --list --benchmark_filter=-gemm", &output), 0) << output;
  EXPECT_FALSE(absl::StrContains(output, "gemm/")) << output;
  EXPECT_TRUE(absl::StrContains(output, "train/")) << output;

  // What runs is what was listed, numbered out of that many.
  const std::string filter = "--benchmark_filter='^(gemm|relu)/'";
  ASSERT_EQ(RunBench("--preset=tiny --list " + filter, &output), 0) << output;
  std::set<std::string> expected;
  for (absl::string_view line : absl::StrSplit(output, '\n', absl::SkipEmpty()))
    expected.insert(std::string(line));
  ASSERT_GE(expected.size(), 2u) << output;
  const std::string json_path = TempPath("filtered.json");
  ASSERT_EQ(
      RunBench(absl::StrCat("--preset=tiny ", filter, " --benchmark_out=", json_path), &output), 0)
      << output;
  EXPECT_EQ(CaseNames(nlohmann::json::parse(ReadFile(json_path))), expected);
  EXPECT_TRUE(absl::StrContains(output, absl::StrCat("[1/", expected.size(), "] "))) << output;
  EXPECT_TRUE(
      absl::StrContains(output, absl::StrCat("[", expected.size(), "/", expected.size(), "] ")))
      << output;
}

TEST(RunBehaviourTest, HelpShowsTheSuiteFlagsThePresetsAndGoogleBenchmarks) {
  for (const char* flag : {"--help", "-h", "--helpshort"}) {
    std::string output;
    EXPECT_EQ(RunBench(flag, &output), 0) << flag << "\n" << output;
    for (const char* expected : {"--preset",
                                 "--families",
                                 "--models",
                                 "--kernel_models",
                                 "--batch_sizes",
                                 "--precisions",
                                 "--gpus",
                                 "--data",
                                 "--data_dir",
                                 "--image_size",
                                 "--kernel_batch",
                                 "--max_kernel_shapes",
                                 "--backend",
                                 "--steps",
                                 "--warmup_steps",
                                 "--repetitions",
                                 "--allreduce_warmup",
                                 "--allreduce_iters",
                                 "--platform",
                                 "--list",
                                 "--verbose",
                                 "Presets",
                                 "tiny:",
                                 "quick:",
                                 "published:",
                                 "full:",
                                 "inference:",
                                 "--preset=quick|published|full|inference|tiny",
                                 "quick | published | full | inference | tiny",
                                 "results/<platform>-<time>.json",
                                 "--benchmark_filter"})
      EXPECT_TRUE(absl::StrContains(output, expected)) << flag << " lacks " << expected;
    EXPECT_LT(output.find("--steps"), output.find("Google Benchmark's flags")) << output;
  }
}

TEST(RunBehaviourTest, SkipMessagesStartWithTheReasonOnceWithoutSourcePaths) {
  const std::string json_path = TempPath("oom.json");
  std::string output;
  ASSERT_EQ(RunBench(absl::StrCat("--preset=tiny --families=train --batch_sizes=1000000 "
                                  "--verbose --benchmark_out=",
                                  json_path),
                     &output),
            0)
      << output;
  int skipped = 0;
  const nlohmann::json run = nlohmann::json::parse(ReadFile(json_path));
  for (const auto& b : run.at("benchmarks")) {
    if (!b.value("error_occurred", false)) continue;
    ++skipped;
    const std::string why = b.value("error_message", "");
    EXPECT_TRUE(absl::StartsWith(why, "OOM: ")) << why;
    EXPECT_EQ(why.find("OOM", 1), std::string::npos) << why;
    EXPECT_FALSE(absl::StrContains(why, ".cc:")) << why;
    EXPECT_TRUE(absl::StrContains(output, why)) << "the console shows it:\n" << output;
  }
  EXPECT_GT(skipped, 0) << ReadFile(json_path) << output;
  // --verbose keeps the trail for debugging, on stderr.
  EXPECT_TRUE(absl::StrContains(output, ".cc:")) << output;
}

TEST(RunBehaviourTest, ACaseThatWouldNotFitInMemoryIsSkippedBeforeAllocating) {
  // Four buffers of a few GB each: each allocation alone would succeed, the
  // process would die when the pages are touched. The plan's footprint is
  // checked against what the machine has first.
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  size_t kib = 0;
  size_t available = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:") available = kib * 1024;
    meminfo.ignore(256, '\n');
  }
  if (available == 0 || available > (size_t{28} << 30))
    GTEST_SKIP() << "this machine could hold the ~32 GB case; the check needs less memory";
  const std::string json_path = TempPath("near.json");
  std::string output;
  ASSERT_EQ(RunBench(absl::StrCat("--families=train --models=trivial --batch_sizes=1 "
                                  "--image_size=25820 --steps=1 --warmup_steps=0 "
                                  "--repetitions=1 --benchmark_out_format=json --benchmark_out=",
                                  json_path),
                     &output),
            0)
      << output;
  const nlohmann::json run = nlohmann::json::parse(ReadFile(json_path));
  ASSERT_EQ(run.at("benchmarks").size(), 1u) << run.dump();
  const auto& only = run.at("benchmarks")[0];
  EXPECT_TRUE(only.value("error_occurred", false)) << only.dump();
  const std::string why = only.value("error_message", "");
  EXPECT_TRUE(absl::StartsWith(why, "OOM: needs ")) << why;
  EXPECT_TRUE(absl::StrContains(why, "available")) << why;
}

TEST(RunBehaviourTest, ContextSaysTheSuitesBuildTheLoadAndTheCommandLine) {
  const std::string json_path = TempPath("context.json");
  std::string output;
  ASSERT_EQ(
      RunBench(absl::StrCat("--preset=tiny --families=gemm --benchmark_out=", json_path), &output),
      0)
      << output;
  const nlohmann::json context = nlohmann::json::parse(ReadFile(json_path)).at("context");
  const std::set<std::string> modes = {"opt", "dbg", "fastbuild"};
  EXPECT_TRUE(modes.count(context.value("cnnbench_build", ""))) << context.dump(2);
  for (const char* key :
       {"cnnbench_assertions", "library_build_type_note", "load_average_start", "load_average_end",
        "cpu_governor", "cpu_mhz_start", "cpu_mhz_min", "cpu_mhz_max", "cpu_mhz_end"})
    EXPECT_TRUE(context.contains(key)) << "context lacks " << key;
  EXPECT_TRUE(absl::StrContains(context.value("command_line", ""), "--families=gemm"))
      << context.dump(2);
  // Every setting that changes a figure is recorded, so reports keep runs apart.
  EXPECT_EQ(context.value("image_size", ""), "model default") << context.dump(2);
  EXPECT_EQ(context.value("cuda_graph", ""), "true") << context.dump(2);
  EXPECT_EQ(context.value("gpu_layout", ""), "nhwc") << context.dump(2);
  EXPECT_EQ(context.value("cuda_batch_norm", ""), "graph") << context.dump(2);
  EXPECT_EQ(context.value("fuse_relu", ""), "true") << context.dump(2);
  // Where the library warns about its own build, the run explains it.
  if (absl::StrContains(output, "Library was built as DEBUG")) {
    EXPECT_TRUE(absl::StrContains(output,
                                  "cnnbench: library_build_type is that of the Google "
                                  "Benchmark library"))
        << output;
  }
}

}  // namespace
}  // namespace cnnbench::bench
