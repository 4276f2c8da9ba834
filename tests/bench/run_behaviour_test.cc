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
#include "bench/names.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace cnnbench::bench {
namespace {

std::string BenchBinary() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return absl::StrCat(srcdir ? srcdir : ".", "/", workspace ? workspace : "cnnbench", "/bench/all");
}

std::string TempPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp ? tmp : "/tmp", "/", name);
}

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
  std::remove(json_path.c_str());
  std::string output;
  const int status =
      RunAndInterrupt(absl::StrCat(kSlowSweep, " --benchmark_out=", json_path), signal, &output);
  EXPECT_EQ(status, expected_status) << output;
  EXPECT_TRUE(absl::StrContains(output, "interrupted")) << output;
  const std::string text = ReadFile(json_path);
  ASSERT_FALSE(text.empty()) << output;
  nlohmann::json run = nlohmann::json::parse(text);  // throws (fails) on a truncated file
  const std::set<std::string> names = CaseNames(run);
  EXPECT_GE(names.size(), 1u) << text;  // case 1 finished before the signal
  for (const auto& b : run.at("benchmarks"))
    EXPECT_FALSE(b.value("error_occurred", false)) << "abandoned cases are left out: " << b.dump();
}

TEST(RunBehaviourTest, SigintKeepsTheFinishedCasesAndExits130) {
  ExpectInterruptedRunKeepsFinishedCases("INT", 130);
}

TEST(RunBehaviourTest, SigtermKeepsTheFinishedCasesAndExits143) {
  ExpectInterruptedRunKeepsFinishedCases("TERM", 143);
}

TEST(RunBehaviourTest, ASecondSignalEndsAtOnceLeavingNoTemporaryFile) {
  const std::string dir = TempPath("second_signal");
  ASSERT_EQ(std::system(absl::StrCat("rm -rf ", dir, " && mkdir -p ", dir).c_str()), 0);
  const std::string json_path = dir + "/run.json";
  WriteFile(json_path, "earlier results\n");
  const std::string log = dir + "/log";
  const std::string script_path = dir + "/interrupt.sh";
  // Two SIGTERMs in a row while case 1 (a long training step) runs: the run
  // ends by the signal, not after the step.
  WriteFile(
      script_path,
      absl::StrCat(BenchBinary(),
                   " --preset=tiny --families=train --models=vgg16 --batch_sizes=8 "
                   "--steps=50 --benchmark_out_format=json --benchmark_out=",
                   json_path, " > ", log, " 2>&1 &\npid=$!\n",
                   "for i in $(seq 600); do grep -q '^\\[1/' ", log, " && break; sleep 0.1; done\n",
                   "kill -TERM $pid; sleep 0.2; kill -TERM $pid\nwait $pid\necho $? > ", dir,
                   "/status\n"));
  ASSERT_EQ(std::system(absl::StrCat("bash ", script_path).c_str()), 0);
  EXPECT_EQ(std::atoi(ReadFile(dir + "/status").c_str()), 128 + SIGTERM) << ReadFile(log);
  // The earlier file is untouched and no temporary is left beside it.
  EXPECT_EQ(ReadFile(json_path), "earlier results\n");
  std::string listing;
  const std::string list_path = dir + "/listing";
  ASSERT_EQ(std::system(absl::StrCat("ls ", dir, " > ", list_path).c_str()), 0);
  EXPECT_FALSE(absl::StrContains(ReadFile(list_path), ".cnnbench-")) << ReadFile(list_path);
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
      {"--image_size=0", "--image_size"},
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
      for (const std::string counter :
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

// --trace_file with real data on one replica and on two CPU replicas: the
// replicas' file has a process row per replica, each with its layers on the
// compute lane, its buckets on the communication lane and the batch's feed
// on the upload lane; the single replica's has the feed too.
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
