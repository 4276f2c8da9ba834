#include "bench/cli/usage.h"

#include <cstdio>
#include <initializer_list>
#include <map>
#include <set>
#include <string>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/cli/flag_read.h"
#include "bench/cli/suite_flags.h"
#include "bench/suite/suite.h"
#include "benchmark/benchmark.h"
#include "core/compile_log.h"
#include "core/device.h"
#include "core/status.h"

namespace cnnbench::bench {
namespace {

// A flag's default as a user reads it: the sentinels that mean "the
// preset's" say so.
std::string DefaultText(const absl::CommandLineFlag& flag) {
  static const std::set<std::string>* const from_preset = new std::set<std::string>{
      "families", "models", "kernel_models", "batch_sizes",      "precisions",
      "gpus",     "data",   "infer_models",  "infer_batch_sizes"};
  const std::string value = flag.DefaultValue();
  const std::string name(flag.Name());
  if (name == "preset") return "published with a GPU, quick without";
  if (name == "backend") return SuiteOptions().backend;
  if (value == "-1" || (value.empty() && from_preset->count(name))) return "the preset's";
  if (value.empty()) return "none";
  return value;
}

void PrintFlag(const absl::CommandLineFlag& flag) {
  std::printf("  --%s (default: %s)\n      %s\n", std::string(flag.Name()).c_str(),
              DefaultText(flag).c_str(), flag.Help().c_str());
}

std::string Items(const std::vector<std::string>& items) {
  return items.empty() ? "none" : absl::StrJoin(items, ",");
}

template <typename T>
std::string Numbers(const std::vector<T>& items, const char* when_empty) {
  return items.empty() ? when_empty : absl::StrJoin(items, ",");
}

void PrintPresets() {
  const int gpu_count = CudaDeviceCount();
  std::printf("\nPresets (--preset; default: %s here, as %d GPU(s) are visible):\n",
              gpu_count > 0 ? "published" : "quick", gpu_count);
  for (const char* name : kPresetNames) {
    absl::StatusOr<SuiteOptions> o = PresetOptions(name, gpu_count);
    if (!o.ok()) continue;
    std::printf(
        "  %s: families %s; models %s at batch %s; precisions %s; gpus %s; kernel cases of "
        "%s (%s layer(s) per family); gemm %s; %d warm-up steps, %d timed steps, %d "
        "repetition(s), kernel min time %g s; inference of %s at batch %s, %d warm-up and %d "
        "timed batches\n",
        name, Items(o->families).c_str(), Items(o->train.models).c_str(),
        Numbers(o->train.batch_sizes, "the model's default").c_str(), Items(o->precisions).c_str(),
        Numbers(o->gpus, "none").c_str(), Items(o->kernel.models).c_str(),
        o->kernel.max_shapes == 0 ? "all" : absl::StrCat(o->kernel.max_shapes).c_str(),
        Numbers(o->kernel.gemm_sizes, "none").c_str(), o->train.warmup_steps, o->train.steps,
        o->repetitions, o->kernel.min_time,
        Items(o->infer.models.empty() ? o->train.models : o->infer.models).c_str(),
        Numbers(o->infer.batch_sizes, "1 and the model's default").c_str(), o->infer.warmup,
        o->infer.iterations);
  }
}

}  // namespace

const std::vector<FlagGroup>& SuiteFlagGroups() {
  static const std::vector<FlagGroup>* const groups = new std::vector<FlagGroup>{
      {"Which cases",
       {"preset",          "families",           "models",        "kernel_models",
        "batch_sizes",     "precisions",         "gpus",          "data",
        "data_dir",        "image_size",         "kernel_batch",  "max_kernel_shapes",
        "backend",         "cpu_conv_algorithm", "cuda_graph",    "gpu_layout",
        "cuda_batch_norm", "cuda_rtc_attempts",  "cuda_rtc_process_builds", "cuda_plan_cache",
        "fuse_relu",
        "train_accuracy",
        "input_threads",   "input_batch",        "on_bad_record", "input_cores",
        "distortions"}},
      {"Data parallelism",
       {"replicas", "bucket_mb", "overlap", "threads_per_replica", "collective_timeout"}},
      {"Inference (the infer cases)",
       {"infer_models", "infer_batch_sizes", "infer_warmup", "infer_iterations",
        "infer_include_copy", "fold_batch_norm", "conv_relu", "conv_add",
        "concat_in_place"}},
      {"How long each case runs", {"steps", "warmup_steps", "repetitions", "compile_deadline_s"}},
      {"Inside a run (train and infer cases)",
       {"keep_step_times", "display_every", "drift_threshold", "power_sample_ms", "trace_file"}},
      {"Collectives (nccl-tests' -b -e -f -d -o -r -w -n)",
       {"collective_bytes", "collective_factor", "collective_ranks", "collective_dtypes",
        "collective_ops", "collective_root", "collective_warmup", "collective_iters",
        "collective_graph", "allreduce_bytes", "allreduce_ranks", "allreduce_warmup",
        "allreduce_iters"}},
      {"Memory bandwidth", {"bandwidth_bytes"}},
      {"Output", {"platform", "store", "list", "verbose"}},
  };
  return *groups;
}

std::string UsageLine() {
  return absl::StrCat("./bazelw run //bench:all -- [--preset=", absl::StrJoin(kPresetNames, "|"),
                      "] [--models=...] [--benchmark_filter=REGEX] [--benchmark_out=run.json "
                      "--benchmark_out_format=json]");
}

namespace {

// Whether argv holds one of `forms` (before a bare --).
bool HasArg(int argc, const char* const* argv, std::initializer_list<absl::string_view> forms) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") break;
    for (absl::string_view form : forms)
      if (arg == form) return true;
  }
  return false;
}

}  // namespace

bool WantsHelp(int argc, const char* const* argv) {
  return HasArg(argc, argv, {"--help", "-h", "-help", "--helpshort", "-helpshort"}) ||
         WantsFullHelp(argc, argv);
}

bool WantsFullHelp(int argc, const char* const* argv) {
  return HasArg(argc, argv, {"--helpfull", "-helpfull"});
}

std::optional<int> HelpOrRefusal(int argc, const char* const* argv) {
  if (WantsHelp(argc, argv)) {
    PrintHelp(WantsFullHelp(argc, argv));
    return 0;
  }
  if (absl::Status checked = CheckCommandLine(argc, argv); !checked.ok()) {
    std::fprintf(stderr, "cnnbench: %s\n", UserMessage(checked).c_str());
    return 2;  // a bad flag value (docs/benchmarks.md's exit statuses)
  }
  return std::nullopt;
}

std::string UserMessage(const absl::Status& status) {
  const bool verbose = absl::GetFlag(FLAGS_verbose) || CompileLogEnabled();
  std::string message =
      verbose ? std::string(status.message()) : WithoutSourceLocations(status.message());
  if (message.empty())
    message = absl::StrCat(absl::StatusCodeToString(status.code()), " (no reason given)");
  return message;
}

void PrintHelp(bool full) {
  std::printf(
      "cnnbench suite: training steps, layer kernels, GEMM and all-reduce cases as Google "
      "Benchmark cases.\n\n"
      "  %s\n\n"
      "Without --benchmark_out the JSON goes to results/<platform>-<time>.json and the run "
      "ends on the report's headline tables. Every run is also kept in results/cnnbench.db "
      "(--store) for //tools:history. A flag is given once; a value is read as typed "
      "(spaces around it are an error; whole numbers in decimal digits). A list flag takes "
      "comma-separated values; an empty or repeated item is an error. Exit status: 0 done, 1 "
      "the output could not be written (or an unknown flag), 2 a bad flag value or no case "
      "selected, 3 a case failed "
      "(not unsupported, not OOM; the output is written), 130/143 interrupted "
      "(SIGINT/SIGTERM; finished cases are written). docs/benchmarks.md has the details.\n",
      UsageLine().c_str());
  const auto flags = absl::GetAllFlags();
  std::set<std::string> shown;
  for (const FlagGroup& group : SuiteFlagGroups()) {
    std::printf("\n%s:\n", group.title.c_str());
    for (const std::string& name : group.flags) {
      auto it = flags.find(name);
      if (it == flags.end()) continue;
      PrintFlag(*it->second);
      shown.insert(name);
    }
  }
  // Flags defined under bench/ that no group names yet.
  bool other = false;
  for (const auto& [name, flag] : flags) {
    if (!absl::StrContains(flag->Filename(), "bench/") || shown.count(std::string(name))) continue;
    if (!other) std::printf("\nOther:\n");
    other = true;
    PrintFlag(*flag);
  }
  PrintPresets();
  std::printf("\nGoogle Benchmark's flags (also read from BENCHMARK_<NAME> variables):\n");
  std::fflush(stdout);
  benchmark::PrintDefaultHelp();
  std::fflush(stdout);
  if (!full) return;
  // --helpfull: the flags no part of the suite defines (Abseil's own).
  std::printf("\nAbseil's flags:\n");
  std::map<std::string, const absl::CommandLineFlag*> others;
  for (const auto& [name, flag] : flags)
    if (!absl::StrContains(flag->Filename(), "bench/")) others.emplace(std::string(name), flag);
  for (const auto& [name, flag] : others) PrintFlag(*flag);
  std::fflush(stdout);
}

}  // namespace cnnbench::bench
