// Runs //bench:all with the tiny preset end to end and validates its JSON:
// names follow the grammar, counters are present and positive, the context
// holds the platform and methodology, skipped cases carry their reason.
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "bench/suite/names.h"
#include "bench/suite/suite.h"
#include "tools/report/context_keys.h"
#include "tools/report/results.h"
#include "gtest/gtest.h"
#include "tests/testing/suite_paths.h"
#include "models/summary.h"
#include "models/zoo.h"
#include "nlohmann/json.hpp"

namespace cnnbench::bench {
namespace {

using cnnbench::testing::BenchBinary;
using cnnbench::testing::TempPath;

int RunBench(const std::string& args, std::string* output, const std::string& env = "") {
  const std::string log = TempPath("bench.log");
  const std::string cmd = absl::StrCat(env.empty() ? "" : "env " + env + " ", BenchBinary(), " ",
                                       args, " > ", log, " 2>&1");
  const int rc = std::system(cmd.c_str());
  std::ifstream in(log);
  output->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return rc;
}

// Every case the full preset registers has a name its family's grammar
// reads back to the same name, and every registered family has cases there.
TEST(SuiteTest, EveryFullPresetNameRoundTrips) {
  std::string output;
  ASSERT_EQ(RunBench("--preset=full --list", &output), 0) << output;
  std::set<std::string> families;
  int names = 0;
  for (absl::string_view line : absl::StrSplit(output, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "cnnbench:")) continue;  // the sweep's notes, on stderr
    ++names;
    absl::StatusOr<CaseName> name = ParseCaseName(line);
    ASSERT_TRUE(name.ok()) << line << ": " << name.status();
    EXPECT_EQ(name->ToString(), line);
    families.insert(name->family);
  }
  EXPECT_GT(names, 100);
  for (const CaseFamily& f : CaseFamilies()) {
    if (f.registered) {
      EXPECT_TRUE(families.count(f.name)) << "the full preset has no " << f.name << " case";
    }
  }
}

// The default run of a CPU machine (the quick preset) stays inside its
// promise of about 3 minutes of cases: at most kQuickCaseBound of them,
// one collective sweep (all-reduce, local), no input or grads cases.
TEST(SuiteTest, TheQuickPresetStaysUnderItsCaseBound) {
  std::string output;
  ASSERT_EQ(RunBench("--list", &output), 0) << output;
  int cases = 0, collectives = 0;
  std::set<std::string> families;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (line.empty() || line.find('/') == absl::string_view::npos) continue;
    ++cases;
    const std::string family(line.substr(0, line.find('/')));
    families.insert(family);
    if (family == "allreduce") ++collectives;
  }
  EXPECT_GT(cases, 10) << output;
  EXPECT_LE(cases, kQuickCaseBound) << output;
  EXPECT_LE(collectives, 8) << output;
  for (const char* absent : {"allgather", "reducescatter", "broadcast", "reduce", "alltoall",
                             "gather", "scatter", "grads", "input"})
    EXPECT_EQ(families.count(absent), 0u) << absent;
  for (const char* present : {"train", "infer", "peak", "bandwidth", "conv", "allreduce"})
    EXPECT_EQ(families.count(present), 1u) << present;
}

// The infer cases follow --models and --batch_sizes unless --infer_models
// and --infer_batch_sizes are given.
TEST(SuiteTest, InferCasesFollowModelsAndBatchSizes) {
  std::string output;
  ASSERT_EQ(RunBench("--preset=tiny --families=infer --models=lenet --batch_sizes=3 --list",
                     &output),
            0)
      << output;
  EXPECT_EQ(output, "infer/lenet/fp32/synthetic/batch:3/gpus:0\n");
  ASSERT_EQ(RunBench("--preset=tiny --families=infer --models=lenet --batch_sizes=3 "
                     "--infer_models=trivial --infer_batch_sizes=1 --list",
                     &output),
            0)
      << output;
  EXPECT_EQ(output, "infer/trivial/fp32/synthetic/batch:1/gpus:0\n");
}

// The methodology states what the run's families ran: an inference-only
// run its warm-up and timed batches, not the training steps it never ran.
TEST(SuiteTest, TheMethodologyStatesWhatTheFamiliesRan) {
  const std::string json_path = TempPath("infer_only.json");
  std::string output;
  ASSERT_EQ(RunBench(absl::StrCat("--preset=tiny --families=infer --infer_warmup=2 "
                                  "--infer_iterations=3 --benchmark_out_format=json "
                                  "--benchmark_out=",
                                  json_path),
                     &output),
            0)
      << output;
  std::ifstream in(json_path);
  const std::string methodology = nlohmann::json::parse(in).at("context").at("methodology");
  EXPECT_TRUE(absl::StrContains(methodology, "infer cases: 2 warm-up batches, 3 timed batches"))
      << methodology;
  EXPECT_FALSE(absl::StrContains(methodology, "steps")) << methodology;
  EXPECT_FALSE(absl::StrContains(methodology, "kernel and GEMM")) << methodology;
}

TEST(SuiteTest, TinyPresetRunsEndToEndAndItsJsonValidates) {
  const std::string json_path = TempPath("tiny.json");
  std::string output;
  // gpus:1 and bf16 cannot run on a CPU-only machine: they must be skipped
  // with a reason while the rest of the sweep goes on.
  const int rc = RunBench(absl::StrCat("--preset=tiny --gpus=0,1 --benchmark_out=", json_path,
                                       " --benchmark_out_format=json --platform=test-box"),
                          &output);
  ASSERT_EQ(rc, 0) << output;
  EXPECT_NE(output.find("[1/"), std::string::npos) << "no progress lines:\n" << output;

  std::ifstream in(json_path);
  ASSERT_TRUE(in.good()) << output;
  nlohmann::json run = nlohmann::json::parse(in);
  const auto& context = run.at("context");
  for (const char* key :
       {"platform", "host_name", "cpu_model", "cpu_cores", "gpu_count", "driver_version",
        "cuda_runtime_version", "cudnn_version", "cublas_version", "nccl_version", "onednn_version",
        "git_commit", "build_config", "preset", "methodology", "steps", "warmup_steps"})
    EXPECT_TRUE(context.contains(key)) << "context lacks " << key;
  EXPECT_EQ(context.at("platform"), "test-box");
  EXPECT_EQ(context.at("preset"), "tiny");
  // Every key the run writes is in exactly one class of
  // tools/report/context_keys.h (machine identity, measurement setting,
  // environment, or the run's own record), never none or two; a
  // model_definition.<model> key is a setting (a class of its own prefix).
  for (const auto& [key, value] : context.items()) {
    int classes = report::IsModelDefinitionKey(key) ? 1 : 0;
    for (const auto* keys : {&report::MachineKeys(), &report::MeasurementSettingKeys(),
                             &report::EnvironmentKeys(), &report::RunRecordKeys()})
      classes += std::count(keys->begin(), keys->end(), key);
    EXPECT_EQ(classes, 1) << "context key '" << key << "' is in " << classes
                          << " classes of tools/report/context_keys.h";
  }
  // The oneDNN convolutions' algorithm, the flag's default.
  EXPECT_EQ(context.value("cpu_conv_algorithm", ""), "timed") << context.dump();

  std::set<std::string> families;
  int ran = 0, skipped = 0;
  for (const auto& b : run.at("benchmarks")) {
    const std::string name = b.at("name");
    auto parsed = ParseCaseName(name);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    if (b.value("run_type", "") == "aggregate") continue;
    if (b.value("error_occurred", false)) {
      ++skipped;
      const std::string why = b.value("error_message", "");
      EXPECT_FALSE(why.empty()) << name;
      if (parsed->family == "train" && parsed->gpus > 0) {
        EXPECT_TRUE(absl::StrContains(why, "unsupported")) << name << ": " << why;
      }
      continue;
    }
    ++ran;
    families.insert(parsed->family);
    auto positive = [&](const char* counter) {
      ASSERT_TRUE(b.contains(counter)) << name << " lacks " << counter;
      EXPECT_GT(b.at(counter).get<double>(), 0) << name << " " << counter;
    };
    if (parsed->family == "train") {
      positive("images_per_second");
      positive("peak_memory_bytes");
      // The last step's batch accuracy: a fraction, top-5 at least top-1.
      for (const char* counter : {"top1_accuracy", "top5_accuracy"}) {
        ASSERT_TRUE(b.contains(counter)) << name << " lacks " << counter;
        EXPECT_GE(b.at(counter).get<double>(), 0) << name;
        EXPECT_LE(b.at(counter).get<double>(), 1) << name;
      }
      EXPECT_GE(b.at("top5_accuracy").get<double>(), b.at("top1_accuracy").get<double>());
      // The step's arithmetic rate: 3 x forward FLOPs per image x images/s
      // (forward, backward-data, backward-weights).
      positive("flops");
      absl::StatusOr<Graph> graph = BuildModel(parsed->model, {.batch = parsed->batch});
      ASSERT_TRUE(graph.ok()) << graph.status();
      const double per_image = 3 * Summarize(*graph).forward_flops;
      ASSERT_GT(per_image, 0) << name;
      EXPECT_NEAR(b.at("flops").get<double>() / b.at("images_per_second").get<double>(), per_image,
                  per_image * 1e-9)
          << name;
    } else if (parsed->family == "infer") {
      positive("images_per_second");
      positive("peak_memory_bytes");
      // Every percentile of one set of iterations, in order, and its count.
      ASSERT_TRUE(b.contains("timed_iterations")) << name;
      EXPECT_EQ(b.at("timed_iterations").get<double>(), b.at("iterations").get<double>()) << name;
      double last = 0;
      for (const char* counter : {"latency_ms_min", "latency_ms_p50", "latency_ms_p90",
                                  "latency_ms_p95", "latency_ms_p99", "latency_ms_max"}) {
        positive(counter);
        EXPECT_GE(b.at(counter).get<double>(), last) << name << " " << counter;
        last = b.at(counter).get<double>();
      }
      // The mean latency is the harness's time per iteration (ms).
      EXPECT_NEAR(b.at("latency_ms").get<double>(), b.at("real_time").get<double>(),
                  1e-6 * b.at("real_time").get<double>())
          << name;
      // Forward FLOPs only.
      absl::StatusOr<Graph> graph = BuildModel(parsed->model, {.batch = parsed->batch});
      ASSERT_TRUE(graph.ok()) << graph.status();
      EXPECT_NEAR(b.at("flops").get<double>() / b.at("images_per_second").get<double>(),
                  Summarize(*graph).forward_flops, Summarize(*graph).forward_flops * 1e-9)
          << name;
    } else if (parsed->family == "conv" || parsed->family == "fc" || parsed->family == "gemm" ||
               parsed->family == "peak") {
      positive("flops");
    } else if (parsed->IsCollective() || parsed->family == "grads") {
      positive("algbw");
      positive("busbw");
    } else {
      positive("bytes_per_second");
    }
  }
  EXPECT_GT(skipped, 0) << "the gpus:1 cases should be skipped with a reason";
  EXPECT_GT(ran, 0);
  for (const char* family :
       {"train", "conv", "fc", "pool", "relu", "gemm", "allreduce", "allgather", "reducescatter",
        "broadcast", "reduce", "alltoall", "gather", "scatter", "grads", "peak", "bandwidth",
        "infer"})
    EXPECT_TRUE(families.count(family)) << "no successful " << family << " case";
}

TEST(SuiteTest, OutOfMemoryIsReportedAsOom) {
  // A batch of a million 28x28 images plus activations does not fit: the
  // case is skipped with a reason starting "OOM", and the run still succeeds.
  const std::string json_path = TempPath("oom.json");
  std::string output;
  ASSERT_EQ(RunBench(absl::StrCat("--preset=tiny --families=train --batch_sizes=1000000 "
                                  "--benchmark_out=",
                                  json_path, " --benchmark_out_format=json"),
                     &output),
            0)
      << output;
  std::ifstream in(json_path);
  nlohmann::json run = nlohmann::json::parse(in);
  int ooms = 0;
  for (const auto& b : run.at("benchmarks")) {
    if (!b.value("error_occurred", false)) continue;
    EXPECT_TRUE(absl::StartsWith(b.value("error_message", ""), "OOM")) << b.dump();
    ++ooms;
  }
  EXPECT_GT(ooms, 0) << output;
}

TEST(SuiteTest, RelativeOutputPathIsTheUsersFolder) {
  // Under `bazel run` the binary starts in its runfiles; Bazel names the
  // folder the user typed the command in, where --benchmark_out=x.json belongs.
  const std::string folder = TempPath("user_folder");
  ASSERT_EQ(std::system(absl::StrCat("mkdir -p ", folder).c_str()), 0);
  std::string output;
  ASSERT_EQ(RunBench(absl::StrCat("--preset=tiny --families=gemm --benchmark_out=rel.json "
                                  "--benchmark_out_format=json"),
                     &output, "BUILD_WORKING_DIRECTORY=" + folder),
            0)
      << output;
  std::ifstream in(folder + "/rel.json");
  EXPECT_TRUE(in.good()) << "no rel.json in " << folder << "\n" << output;
}

TEST(SuiteTest, ListPrintsCasesWithoutRunning) {
  std::string output;
  ASSERT_EQ(RunBench("--preset=tiny --list", &output), 0) << output;
  EXPECT_NE(output.find("train/trivial/fp32/synthetic/batch:2/gpus:0"), std::string::npos)
      << output;
}

TEST(SuiteTest, EveryRegisteredNameFollowsTheGrammar) {
  for (const char* preset : {"quick", "published", "full"}) {
    std::string output;
    ASSERT_EQ(RunBench(absl::StrCat("--preset=", preset,
                                    " --gpus=0,1,2 --data=synthetic,real "
                                    "--precisions=fp32,tf32,fp16,bf16 --list"),
                       &output),
              0)
        << output;
    int names = 0;
    for (absl::string_view line : absl::StrSplit(output, '\n', absl::SkipEmpty())) {
      if (absl::StartsWith(line, "cnnbench: note: ")) continue;  // stderr: what a sweep left out
      auto parsed = ParseCaseName(line);
      ASSERT_TRUE(parsed.ok()) << preset << ": " << parsed.status() << " (" << line << ")";
      EXPECT_EQ(parsed->ToString(), line);  // prints back to the registered name
      ++names;
    }
    EXPECT_GT(names, 0) << preset;
  }
}

// Runs the suite with `args` and returns its JSON (fails the test on error).
nlohmann::json RunJson(const std::string& name, const std::string& args, std::string* output,
                       const std::string& env = "") {
  const std::string json_path = TempPath(name + ".json");
  std::remove(json_path.c_str());
  const int rc =
      RunBench(absl::StrCat(args, " --benchmark_out=", json_path, " --benchmark_out_format=json"),
               output, env);
  EXPECT_EQ(rc, 0) << *output;
  std::ifstream in(json_path);
  if (!in.good()) {
    ADD_FAILURE() << "no JSON from " << args << "\n" << *output;
    return nlohmann::json::object();
  }
  return nlohmann::json::parse(in);
}

// The iteration entries (no aggregates), by case name without suffixes.
std::map<std::string, std::vector<nlohmann::json>> IterationsByCase(const nlohmann::json& run) {
  std::map<std::string, std::vector<nlohmann::json>> out;
  for (const auto& b : run.value("benchmarks", nlohmann::json::array())) {
    if (b.value("run_type", "") != "iteration") continue;
    auto parsed = ParseCaseName(b.at("name").get<std::string>());
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    if (parsed.ok()) out[parsed->ToString()].push_back(b);
  }
  return out;
}

TEST(SuiteTest, BenchmarkRepetitionsWinsForEveryFamily) {
  // The tiny preset runs 2 repetitions; the user's flag says 3. (resnet50's
  // first layers add the batch-norm family lenet lacks.)
  std::string output;
  // Every registered family (the tiny preset leaves out input, which makes a data set first).
  const std::string families_flag = absl::StrReplaceAll(RegisteredFamilyList(), {{" ", ""}});
  const nlohmann::json run =
      RunJson("reps",
              absl::StrCat("--preset=tiny --kernel_models=lenet,resnet50 --benchmark_repetitions=3 "
                           "--families=",
                           families_flag),
              &output);
  EXPECT_EQ(run.at("context").at("repetitions"), "3");
  std::set<std::string> families;
  for (const auto& [name, entries] : IterationsByCase(run)) {
    families.insert(ParseCaseName(name)->family);
    EXPECT_EQ(entries.size(), 3u) << name;
    for (const auto& b : entries) EXPECT_EQ(b.at("repetitions"), 3) << name;
  }
  for (const CaseFamily& f : CaseFamilies()) {
    if (!f.registered) continue;
    EXPECT_TRUE(families.count(f.name)) << "no " << f.name << " case ran";
  }
}

TEST(SuiteTest, BenchmarkRepetitionsFromTheEnvironment) {
  // Google Benchmark reads BENCHMARK_<FLAG> when the command line is silent.
  std::string output;
  const nlohmann::json run =
      RunJson("env_reps", "--preset=tiny --families=gemm", &output, "BENCHMARK_REPETITIONS=3");
  const auto cases = IterationsByCase(run);
  ASSERT_FALSE(cases.empty()) << output;
  for (const auto& [name, entries] : cases) EXPECT_EQ(entries.size(), 3u) << name;
}

TEST(SuiteTest, ConflictingRepetitionFlagsAreAnError) {
  std::string output;
  EXPECT_NE(RunBench("--preset=tiny --repetitions=2 --benchmark_repetitions=3 --list", &output), 0);
  EXPECT_NE(output.find("disagree"), std::string::npos) << output;
  EXPECT_NE(RunBench("--preset=tiny --benchmark_repetitions=0 --list", &output), 0);
  EXPECT_NE(output.find("--benchmark_repetitions=0"), std::string::npos) << output;
}

TEST(SuiteTest, BenchmarkMinTimeWinsForKernelAndGemmNotForCountedFamilies) {
  // Google Benchmark names a case with the min time it runs under
  // ("/min_time:0.020"): the setting, read without timing anything.
  std::string output;
  const nlohmann::json run =
      RunJson("min_time",
              "--preset=tiny --families=train,conv,fc,pool,batchnorm,relu,gemm,allreduce "
              "--steps=3 --collective_iters=4 --benchmark_min_time=0.02",
              &output);
  int kernel_cases = 0, train_cases = 0, allreduce_cases = 0;
  for (const auto& b : run.at("benchmarks")) {
    if (b.value("run_type", "") != "iteration") continue;
    const std::string name = b.at("name");
    if (absl::StartsWith(name, "train/")) {
      ++train_cases;
      EXPECT_EQ(name.find("min_time"), std::string::npos) << name;
      EXPECT_EQ(b.at("iterations"), 3) << name << ": train cases run --steps per repetition";
    } else if (absl::StartsWith(name, "allreduce/")) {
      ++allreduce_cases;
      EXPECT_EQ(name.find("min_time"), std::string::npos) << name;
      EXPECT_EQ(b.at("iterations"), 4) << name << ": all-reduce cases run --collective_iters";
    } else {
      ++kernel_cases;
      EXPECT_NE(name.find("/min_time:0.020/"), std::string::npos) << name;
    }
  }
  EXPECT_GT(kernel_cases, 0) << output;
  EXPECT_GT(train_cases, 0) << output;
  EXPECT_GT(allreduce_cases, 0) << output;
  const std::string note = "--benchmark_min_time does not apply to train cases";
  const size_t first = output.find(note);
  ASSERT_NE(first, std::string::npos) << output;
  EXPECT_EQ(output.find(note, first + 1), std::string::npos) << "said more than once:\n" << output;
  EXPECT_NE(output.find("--steps", first), std::string::npos) << output;
}

TEST(SuiteTest, CollectiveCasesTakeTheRepetitionsButNotTheMinTime) {
  // Collectives count calls (--collective_iters), so every rank knows how
  // many to make: the user's repetitions apply, the min time is noted once.
  std::string output;
  const nlohmann::json run =
      RunJson("allreduce",
              "--preset=tiny --families=allreduce --benchmark_repetitions=3 --collective_iters=3 "
              "--benchmark_min_time=0.02",
              &output);
  const auto cases = IterationsByCase(run);
  ASSERT_FALSE(cases.empty()) << output;
  for (const auto& [name, entries] : cases) {
    EXPECT_EQ(ParseCaseName(name)->family, "allreduce") << name;
    EXPECT_EQ(entries.size(), 3u) << name;
    for (const auto& b : entries) {
      ASSERT_FALSE(b.value("error_occurred", false))
          << name << ": " << b.value("error_message", "");
      EXPECT_EQ(b.at("repetitions"), 3) << name;
      EXPECT_EQ(b.at("iterations"), 3) << name;
      EXPECT_EQ(b.at("name").get<std::string>().find("min_time"), std::string::npos) << name;
      EXPECT_NE(b.value("label", "").find("result checked"), std::string::npos) << name;
      for (const char* counter : {"algbw", "busbw", "algbw_inplace", "busbw_inplace"}) {
        ASSERT_TRUE(b.contains(counter)) << name << " lacks " << counter;
        EXPECT_GT(b.at(counter).get<double>(), 0) << name << " " << counter;
      }
    }
    // The harness announces a case once, however many repetitions it runs.
    const std::string progress = "] " + name + "\n";
    const size_t first = output.find(progress);
    EXPECT_NE(first, std::string::npos) << "no progress line for " << name << ":\n" << output;
    EXPECT_EQ(output.find(progress, first + 1), std::string::npos) << output;
  }
  const std::string note = "--benchmark_min_time does not apply to allreduce cases";
  const size_t first = output.find(note);
  ASSERT_NE(first, std::string::npos) << output;
  EXPECT_EQ(output.find(note, first + 1), std::string::npos) << "said more than once:\n" << output;
  const std::string line = output.substr(first, output.find('\n', first) - first);
  EXPECT_NE(line.find("(3)"), std::string::npos) << line;
  EXPECT_NE(line.find("--collective_iters"), std::string::npos) << line;
}

TEST(SuiteTest, PresetMinTimeWithoutTheFlag) {
  std::string output;
  const nlohmann::json run = RunJson("preset_min_time", "--preset=tiny --families=gemm", &output);
  const auto cases = IterationsByCase(run);
  ASSERT_FALSE(cases.empty()) << output;
  for (const auto& [name, entries] : cases)
    for (const auto& b : entries)
      EXPECT_NE(b.at("name").get<std::string>().find("/min_time:0.010/"), std::string::npos)
          << b.at("name");
  EXPECT_EQ(output.find("does not apply"), std::string::npos) << output;
}

// GEMM cases: the square sweep and, from the kernel models, each fc layer
// as its forward GEMM (m<N>n<OC>k<IC>_tb), every result checked in the run.
TEST(SuiteTest, GemmCasesCoverTheKernelModelsFcLayers) {
  std::string output;
  const nlohmann::json run =
      RunJson("gemm_fc", "--preset=tiny --families=gemm --precisions=fp32", &output);
  ModelOptions mo;
  mo.batch = 2;  // the tiny preset's kernel batch, lenet its kernel model
  auto graph = BuildModel("lenet", mo);
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::set<std::string> want = {"gemm:m64n64k64"};
  for (const Node& node : graph->nodes)
    if (const auto* fc = std::get_if<FcDesc>(&node.op);
        fc != nullptr && node.kind == Node::Kind::kOp)
      want.insert(fc->AsGemm().ToString());
  ASSERT_GE(want.size(), 3u) << "lenet has two fc layers";
  std::set<std::string> got;
  for (const auto& b : run.value("benchmarks", nlohmann::json::array())) {
    if (b.value("run_type", "") != "iteration") continue;
    auto parsed = ParseCaseName(b.at("name").get<std::string>());
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_FALSE(b.value("error_occurred", false)) << b.dump();
    EXPECT_NE(b.value("label", "").find("result checked"), std::string::npos) << b.dump();
    EXPECT_GT(b.value("flops", 0.0), 0.0) << b.dump();
    got.insert(parsed->shape);
  }
  EXPECT_EQ(got, want) << output;
}

TEST(SuiteTest, Bf16MovesHalfTheBytesOfFp32) {
  // bytes_per_second x seconds per iteration = the bytes one call moves,
  // whatever the timing: bf16 activations are 2 bytes, fp32 ones 4.
  std::string output;
  const nlohmann::json run = RunJson(
      "bytes", "--preset=tiny --families=pool,batchnorm,relu --precisions=fp32,bf16", &output);
  std::map<std::string, double> bytes;  // name with the precision blanked -> bytes per call
  std::map<std::string, double> fp32;
  int compared = 0;
  std::string skipped;
  for (const auto& [name, entries] : IterationsByCase(run)) {
    const nlohmann::json& b = entries.front();
    if (b.value("error_occurred", false)) {
      if (name.find("/bf16/") != std::string::npos) skipped = b.value("error_message", "");
      continue;
    }
    ASSERT_EQ(b.at("time_unit"), "us") << name;
    const double per_call =
        b.at("bytes_per_second").get<double>() * b.at("real_time").get<double>() * 1e-6;
    CaseName c = *ParseCaseName(name);
    const std::string precision = c.precision;
    c.precision = "*";
    (precision == "fp32" ? fp32 : bytes)[c.ToString()] = per_call;
  }
  if (bytes.empty()) {
    ASSERT_TRUE(absl::StrContains(skipped, "unsupported")) << skipped;
    GTEST_SKIP() << "bf16 does not run here: " << skipped;
  }
  for (const auto& [key, bf16] : bytes) {
    ASSERT_TRUE(fp32.count(key)) << key;
    EXPECT_NEAR(bf16 / fp32[key], 0.5, 1e-6) << key << ": " << bf16 << " vs " << fp32[key];
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

TEST(SuiteTest, CpuReplicasRunAsOneCaseWithTheirRankCount) {
  std::string output;
  const nlohmann::json run = RunJson("replicas",
                                     "--preset=tiny --families=train --replicas=1,2 --bucket_mb=1 "
                                     "--benchmark_repetitions=1",
                                     &output);
  auto cases = IterationsByCase(run);
  ASSERT_EQ(cases.count("train/trivial/fp32/synthetic/batch:2/gpus:0/replicas:2"), 1u) << output;
  ASSERT_EQ(cases.count("train/trivial/fp32/synthetic/batch:2/gpus:0"), 1u) << output;
  const nlohmann::json& two = cases["train/trivial/fp32/synthetic/batch:2/gpus:0/replicas:2"][0];
  const nlohmann::json& one = cases["train/trivial/fp32/synthetic/batch:2/gpus:0"][0];
  ASSERT_FALSE(two.value("error_occurred", false)) << two.dump();
  EXPECT_EQ(two.at("ranks").get<double>(), 2);
  EXPECT_EQ(one.at("ranks").get<double>(), 1);
  // Global throughput: twice the per-replica rate.
  EXPECT_NEAR(two.at("images_per_second").get<double>(),
              2 * two.at("images_per_second_per_replica").get<double>(),
              1e-6 * two.at("images_per_second").get<double>());
  EXPECT_GE(two.at("buckets").get<double>(), 1);
  EXPECT_EQ(run.at("context").at("bucket_bytes"), "1048576");
}

TEST(SuiteTest, RealDataTrainsFromTheGeneratedSetWithoutADataDir) {
  std::string output;
  const nlohmann::json run =
      RunJson("real",
              "--preset=tiny --families=train --data=real --distortions=full "
              "--benchmark_repetitions=1",
              &output);
  EXPECT_TRUE(absl::StartsWith(run.at("context").at("data_dir").get<std::string>(), "generated"))
      << run.at("context").dump();
  EXPECT_EQ(run.at("context").at("distortions"), "full");
  auto cases = IterationsByCase(run);
  ASSERT_EQ(cases.count("train/trivial/fp32/real/batch:2/gpus:0"), 1u) << output;
  const nlohmann::json& b = cases["train/trivial/fp32/real/batch:2/gpus:0"][0];
  ASSERT_FALSE(b.value("error_occurred", false)) << b.dump();
  EXPECT_GT(b.at("images_per_second").get<double>(), 0);
  EXPECT_TRUE(absl::StrContains(b.at("label").get<std::string>(), "tfrecord data")) << b.dump();
  // The flag reached the pipeline that fed the steps.
  EXPECT_TRUE(absl::StrContains(b.at("label").get<std::string>(), "full colour distortion"))
      << b.dump();
}

TEST(SuiteTest, ABadDataDirIsAnErrorBeforeAnyCase) {
  std::string output;
  const std::string missing = TempPath("no_such_data");
  EXPECT_EQ(WEXITSTATUS(RunBench(
                absl::StrCat("--preset=tiny --families=train --data=real --data_dir=", missing),
                &output)),
            2)
      << output;
  EXPECT_TRUE(absl::StrContains(output, missing)) << output;
  EXPECT_FALSE(absl::StrContains(output, ".cc:")) << output;  // no source locations
  EXPECT_FALSE(absl::StrContains(output, "[1/")) << output;   // no case started
  const std::string empty = TempPath("empty_data");
  ASSERT_EQ(std::system(absl::StrCat("mkdir -p ", empty).c_str()), 0);
  EXPECT_EQ(
      WEXITSTATUS(RunBench(
          absl::StrCat("--preset=tiny --families=train --data=real --data_dir=", empty), &output)),
      2)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "empty")) << output;
  EXPECT_NE(RunBench("--preset=tiny --families=train --data=real --on_bad_record=ignore", &output),
            0);
  EXPECT_TRUE(absl::StrContains(output, "ignore")) << output;
}

// The published preset runs real data beside synthetic when a dataset is
// given (the page's two tables), so its --data_dir is read (a missing one is
// an error naming it); --data still decides when given.
TEST(SuiteTest, PublishedPresetAddsRealDataWhenADatasetIsGiven) {
  std::string output;
  const std::string missing = TempPath("no_published_data");
  EXPECT_EQ(WEXITSTATUS(
                RunBench(absl::StrCat("--preset=published --list --data_dir=", missing), &output)),
            2)
      << output;
  EXPECT_TRUE(absl::StrContains(output, missing)) << output;
  ASSERT_EQ(
      RunBench(absl::StrCat("--preset=published --list --data=synthetic --data_dir=", missing),
               &output),
      0)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "train/resnet50/fp32/synthetic/")) << output;
  EXPECT_FALSE(absl::StrContains(output, "/real/")) << output;
}

TEST(SuiteTest, BadFlagsAreClearErrors) {
  std::string output;
  EXPECT_NE(RunBench("--preset=huge", &output), 0);
  EXPECT_NE(output.find("unknown preset 'huge'"), std::string::npos) << output;
  EXPECT_NE(RunBench("--preset=tiny --models=resnet9000 --list", &output), 0);
  EXPECT_NE(output.find("resnet9000"), std::string::npos) << output;
  EXPECT_NE(RunBench("--preset=tiny --batch_sizes=8,x --list", &output), 0);
  EXPECT_NE(output.find("'x'"), std::string::npos) << output;
  EXPECT_NE(RunBench("--no_such_flag", &output), 0);
  EXPECT_NE(RunBench("--preset=tiny --replicas=0 --list", &output), 0);
  EXPECT_NE(output.find("--replicas"), std::string::npos) << output;
  EXPECT_NE(RunBench("--preset=tiny --bucket_mb=0 --list", &output), 0);
  EXPECT_NE(output.find("--bucket_mb=0"), std::string::npos) << output;
  EXPECT_NE(RunBench("--preset=tiny --collective_timeout=x --list", &output), 0);
  EXPECT_EQ(WEXITSTATUS(RunBench("--preset=tiny --distortions=yiq --list", &output)), 2);
  EXPECT_NE(output.find("--distortions=yiq: colour distortion \"yiq\": expected none, fast or full"),
            std::string::npos)
      << output;
  EXPECT_NE(RunBench("--preset=tiny --collective_bytes=1024 --list", &output), 0);
  EXPECT_NE(output.find("--collective_bytes=1024: give MIN,MAX"), std::string::npos) << output;
  // nccl-tests' K/M/G suffixes (-b 1K -e 1M), and what does not parse named.
  ASSERT_EQ(RunBench("--preset=tiny --families=allreduce --collective_ranks=1 "
                     "--collective_bytes=1K,2k --list",
                     &output),
            0)
      << output;
  EXPECT_NE(output.find("bytes:1024/"), std::string::npos) << output;
  EXPECT_NE(output.find("bytes:2048/"), std::string::npos) << output;
  EXPECT_NE(RunBench("--preset=tiny --collective_bytes=1X,2 --list", &output), 0);
  EXPECT_NE(output.find("'1X' is not a byte count"), std::string::npos) << output;
  ASSERT_EQ(RunBench("--preset=tiny --families=allreduce --collective_ranks=1,3 "
                     "--collective_bytes=64,128 --list",
                     &output),
            0)
      << output;
  EXPECT_EQ(
      output,
      "allreduce/local/fp32/sum/bytes:64/ranks:1\nallreduce/local/fp32/sum/bytes:128/ranks:1\n"
      "allreduce/local/fp32/sum/bytes:64/ranks:3\n"
      "allreduce/local/fp32/sum/bytes:128/ranks:3\n");
  // The older names are aliases; given both, they must agree.
  std::string aliased;
  ASSERT_EQ(RunBench("--preset=tiny --families=allreduce --allreduce_ranks=1,3 "
                     "--allreduce_bytes=64,128 --list",
                     &aliased),
            0)
      << aliased;
  EXPECT_EQ(aliased, output);
  EXPECT_NE(RunBench("--preset=tiny --collective_iters=3 --allreduce_iters=4 --list", &output), 0);
  EXPECT_NE(output.find("--collective_iters=3 and --allreduce_iters=4 disagree"), std::string::npos)
      << output;
  // The element types and the sweep's step factor, as nccl-tests' -d and -f.
  ASSERT_EQ(RunBench("--preset=tiny --families=allreduce --collective_ranks=2 "
                     "--collective_bytes=8,512 --collective_factor=8 "
                     "--collective_dtypes=int64,bf16 --list",
                     &output),
            0)
      << output;
  EXPECT_EQ(
      output,
      "allreduce/local/int64/sum/bytes:8/ranks:2\nallreduce/local/int64/sum/bytes:64/ranks:2\n"
      "allreduce/local/int64/sum/bytes:512/ranks:2\nallreduce/local/bf16/sum/bytes:8/ranks:2\n"
      "allreduce/local/bf16/sum/bytes:64/ranks:2\n"
      "allreduce/local/bf16/sum/bytes:512/ranks:2\n");
  // Every collective, the reductions as nccl-tests' -o (the copies have
  // none), sizes rounded to a whole count per rank as nccl-tests rounds
  // (all-gather and reduce-scatter over 3 ranks: 96 of 100 bytes).
  ASSERT_EQ(RunBench("--preset=tiny --families=allgather,reducescatter,broadcast,reduce "
                     "--collective_ranks=3 --collective_bytes=100,100 --collective_ops=max,avg "
                     "--list",
                     &output),
            0)
      << output;
  EXPECT_EQ(output,
            "allgather/local/fp32/none/bytes:96/ranks:3\n"
            "reducescatter/local/fp32/max/bytes:96/ranks:3\n"
            "reducescatter/local/fp32/avg/bytes:96/ranks:3\n"
            "broadcast/local/fp32/none/bytes:100/ranks:3\n"
            "reduce/local/fp32/max/bytes:100/ranks:3\nreduce/local/fp32/avg/bytes:100/ranks:3\n");
  ASSERT_EQ(RunBench("--preset=tiny --families=reduce --collective_ranks=2 "
                     "--collective_bytes=64,64 --collective_ops=all --list",
                     &output),
            0)
      << output;
  EXPECT_EQ(output,
            "reduce/local/fp32/sum/bytes:64/ranks:2\nreduce/local/fp32/prod/bytes:64/ranks:2\n"
            "reduce/local/fp32/max/bytes:64/ranks:2\nreduce/local/fp32/min/bytes:64/ranks:2\n"
            "reduce/local/fp32/avg/bytes:64/ranks:2\n");
  EXPECT_NE(RunBench("--preset=tiny --collective_ops=mean --list", &output), 0);
  EXPECT_NE(output.find("--collective_ops: 'mean'"), std::string::npos) << output;
  EXPECT_NE(RunBench("--preset=tiny --collective_root=-1 --list", &output), 0);
  EXPECT_NE(output.find("--collective_root=-1"), std::string::npos) << output;
  EXPECT_NE(RunBench("--preset=tiny --families=allreduce --collective_factor=1 --list", &output),
            0);
  EXPECT_NE(output.find("--collective_factor=1"), std::string::npos) << output;
  EXPECT_NE(
      RunBench("--preset=tiny --families=allreduce --collective_dtypes=uint8 --list", &output), 0);
  EXPECT_NE(output.find("--collective_dtypes: 'uint8'"), std::string::npos) << output;
}

}  // namespace
}  // namespace cnnbench::bench
