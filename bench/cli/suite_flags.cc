#include "bench/cli/suite_flags.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>
#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/cases/collective/collective_cases.h"
#include "bench/output/context.h"
#include "bench/cli/flag_values.h"
#include "bench/harness/harness.h"
#include "bench/cases/infer/infer_cases.h"
#include "bench/suite/names.h"
#include "bench/suite/suite.h"
#include "benchmark/benchmark.h"
#include "core/compile_log.h"
#include "train/trace.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/gpu_runtime.h"
#include "core/platform.h"
#include "core/status.h"
#include "kernels/collectives/communicator.h"
#include "kernels/cuda/engine_pick.h"
#include "kernels/cuda/plan_choices.h"

ABSL_FLAG(std::string, preset, "",
          absl::StrCat(absl::StrJoin(cnnbench::bench::kPresetNames, " | "),
                       " (default: published with a GPU, quick without)"));
ABSL_FLAG(std::string, families, "",
          absl::StrCat("case families: ", cnnbench::bench::RegisteredFamilyList()));
ABSL_FLAG(std::string, models, "", "models for training cases, e.g. resnet50,vgg16");
ABSL_FLAG(std::string, kernel_models, "", "models whose distinct layers become kernel cases");
ABSL_FLAG(std::string, batch_sizes, "", "per-device batch sizes (default: each model's own)");
ABSL_FLAG(std::string, precisions, "", "fp32,tf32,fp16,bf16");
ABSL_FLAG(std::string, gpus, "", "GPU counts, e.g. 1,2,4,8 (0 = the CPU)");
ABSL_FLAG(std::string, replicas, "",
          "data-parallel CPU replicas for the gpus:0 training cases, e.g. 1,2 (default 1); "
          "GPU cases take one replica per GPU");
ABSL_FLAG(int, bucket_mb, -1,
          "gradient all-reduce bucket size in MiB for data-parallel training (default 25)");
ABSL_FLAG(bool, overlap, true,
          "data-parallel training: all-reduce each gradient bucket during backward (false: "
          "all of them after backward, to measure what overlap gains)");
ABSL_FLAG(bool, fuse_relu, true,
          "training: fold each ReLU into the batch norm or residual add before it (false: "
          "every layer on its own, the baseline fusion is measured against)");
ABSL_FLAG(bool, keep_step_times, true,
          "train and infer cases write each repetition's step times into the JSON "
          "(\"step_times_ms\"); false leaves the list out, never the step statistics");
ABSL_FLAG(std::string, display_every, "auto",
          "train and infer cases print 'step i/N  images/sec: X +/- Y (jitter = Z)' on stderr "
          "every N timed steps; 0: never; auto: every 10 when stderr is a terminal and the "
          "first timed step predicts over 10 s of timed steps");
ABSL_FLAG(double, drift_threshold, 0.05,
          "a case of 20 or more timed steps whose last tenth of steps is more than this much "
          "slower than its first tenth is flagged in its label and in the report (0.05: 5%)");
ABSL_FLAG(std::string, trace_file, "",
          "train and infer cases: after the first repetition's timed steps, one more step "
          "(batch) written as a Chrome trace (Perfetto, chrome://tracing), never part of the "
          "timed figures: to this path when one case is traced, else to this path with each "
          "case's name inserted before the extension (replicas: one process row each)");
ABSL_FLAG(int, power_sample_ms, 100,
          "read the power, energy and clock sensors (NVML on GPUs, RAPL and cpufreq on the CPU) "
          "every this many ms on a thread of their own over each repetition's timed span; 0: off");
ABSL_FLAG(bool, train_accuracy, true,
          "training cases report the last step's batch top-1/top-5 (its logits kept to the "
          "step's end)");
ABSL_FLAG(std::string, gpu_layout, "nhwc",
          "GPU activations of the fp16/bf16/tf32 cases: nhwc (tensor cores' layout) or nchw "
          "(fp32 cases are NCHW either way)");
ABSL_FLAG(std::string, cuda_batch_norm, "graph",
          "GPU training batch norm: graph (cuDNN graphs with the ReLU fused in, on NHWC "
          "activations where an engine builds) or legacy (cuDNN's batch norm calls and a "
          "separate ReLU pass)");
ABSL_FLAG(int, cuda_rtc_attempts, -1,
          "GPU: at most this many builds of cuDNN engines compiled at run time (NVRTC, seconds "
          "each) per convolution or batch norm graph, success or failure, tried only where no "
          "precompiled engine builds (-1: $CNNBENCH_CUDA_RTC_ATTEMPTS, else 2; 0: none)");
ABSL_FLAG(int, cuda_rtc_process_builds, -1,
          "GPU: at most this many builds of run-time compiled cuDNN engines in the whole "
          "process, success or failure (-1: $CNNBENCH_CUDA_RTC_PROCESS_BUILDS, else 24)");
ABSL_FLAG(std::string, cuda_plan_cache, "",
          "GPU: a plan-choice file. Each convolution pass's timed cuDNN engine and each batch "
          "norm graph's form and engines are written there, and a later run with the same cuDNN "
          "and GPU builds those engines alone, untimed; a foreign or corrupt file is ignored "
          "('': $CNNBENCH_CUDA_PLAN_CACHE, else none)");
ABSL_FLAG(int, threads_per_replica, -1,
          "OpenMP threads of each CPU replica (default: the cores divided among the replicas)");
ABSL_FLAG(int, collective_timeout, -1,
          "seconds a collective may wait for the other ranks before failing with the ranks "
          "that did not arrive (default 300)");
ABSL_FLAG(std::string, data, "", "synthetic,real");
ABSL_FLAG(int, input_cores, -1,
          "data:real training: CPU cores for the input pipeline's decode threads, taken from "
          "the compute's threads (default 0: one decode thread shares the cores)");
ABSL_FLAG(std::string, distortions, "none",
          "colour distortion of real training images (--data=real, input cases): none; fast "
          "(brightness, saturation); full (tf_cnn_benchmarks' --distortions, RGB path: "
          "brightness, saturation, hue, contrast, in one of its two orders)");
ABSL_FLAG(std::string, data_dir, "", "ImageNet TFRecords or an image folder for --data=real");
ABSL_FLAG(std::string, platform, "",
          "short platform name for reports (default: from the hardware)");
ABSL_FLAG(int, steps, -1,
          "timed steps per repetition of a training case (--benchmark_min_time does not "
          "apply to them)");
ABSL_FLAG(int, warmup_steps, -1, "untimed steps before a training case");
ABSL_FLAG(int, repetitions, -1,
          "repetitions of every case (aggregates: mean, median, stddev, cv); the same as "
          "--benchmark_repetitions");
ABSL_FLAG(int, image_size, 0, "override every model's image size (0: each model's own)");
ABSL_FLAG(int, kernel_batch, -1, "batch of kernel cases (0: each model's default batch)");
ABSL_FLAG(int, max_kernel_shapes, -1, "distinct layers per model and kernel family (0: all)");
ABSL_FLAG(std::string, backend, "", "CPU backend: onednn (default) or reference");
ABSL_FLAG(std::string, cpu_conv_algorithm, "timed",
          "oneDNN convolutions: timed (each pass's candidates timed once when its kernel is "
          "created, the fastest kept), direct (direct convolution only: the baseline), "
          "winograd (Winograd wherever oneDNN has it, else direct), auto (oneDNN's heuristic)");
ABSL_FLAG(bool, cuda_graph, true,
          "GPU training cases: capture each step once as a CUDA graph and replay it "
          "(false: enqueue every kernel every step)");
ABSL_FLAG(double, compile_deadline_s, 0,
          "seconds after the start past which building plans stops: each case still "
          "compiling then ends with 'deadline: ...' naming the layer and pass, and the results "
          "file is written (0: $CNNBENCH_COMPILE_DEADLINE_S, else none)");
ABSL_FLAG(bool, list, false, "print the cases that would run (after --benchmark_filter) and exit");
ABSL_FLAG(bool, verbose, false,
          "print each skipped case's full reason on stderr, with the source locations it "
          "passed through, and the compile log (one line per layer and pass while plans are "
          "built; also CNNBENCH_VERBOSE=1)");

namespace cnnbench::bench {
namespace {


// The flags the user gave (even with their default values), read from the
// command line itself: Abseil's public IsSpecifiedOnCommandLine is private
// in Debian's release, and its internal record is not an interface.
std::set<std::string>& GivenFlags() {
  static std::set<std::string>* given = new std::set<std::string>();
  return *given;
}

// Fills GivenFlags from argv: `--name`, `--name=value`, `-name`, and a
// boolean's `--noname`, up to a bare `--`.
void RecordGivenFlags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (!absl::ConsumePrefix(&arg, "-")) continue;
    absl::ConsumePrefix(&arg, "-");
    const std::string name(arg.substr(0, arg.find('=')));
    if (name.empty()) continue;
    GivenFlags().insert(name);
    if (absl::StartsWith(name, "no") && absl::FindCommandLineFlag(name) == nullptr)
      GivenFlags().insert(name.substr(2));
  }
}

bool Given(const absl::CommandLineFlag& flag) {
  return GivenFlags().count(std::string(flag.Name())) > 0;
}
template <typename T>
bool Given(const absl::Flag<T>& flag) {
  return Given(absl::GetFlagReflectionHandle(flag));
}

// Parses one item of a list flag.
absl::Status ParseItem(absl::string_view item, std::string* out) {
  *out = std::string(item);
  return absl::OkStatus();
}
template <typename T>
absl::Status ParseItem(absl::string_view item, T* out) {
  if (!absl::SimpleAtoi(item, out) || *out < 0)
    return absl::InvalidArgumentError(absl::StrCat("'", item, "' is not a number >= 0"));
  return absl::OkStatus();
}

// A comma-separated list flag, when given, replaces the preset's list: it
// must not be empty, nor hold an empty item or the same item twice.
template <typename T>
absl::Status ParseList(const absl::Flag<std::string>& flag, std::vector<T>* out) {
  if (!Given(flag)) return absl::OkStatus();
  const std::string name(absl::GetFlagReflectionHandle(flag).Name());
  const std::string value = absl::GetFlag(flag);
  if (value.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " is empty (leave it out for the preset's)"));
  std::vector<T> items;
  for (absl::string_view part : absl::StrSplit(value, ',')) {
    const std::string where = absl::StrCat("--", name, "=", value, ": ");
    if (part.empty()) return absl::InvalidArgumentError(absl::StrCat(where, "an empty item"));
    T item;
    if (absl::Status s = ParseItem(part, &item); !s.ok())
      return absl::InvalidArgumentError(absl::StrCat(where, s.message()));
    if (std::find(items.begin(), items.end(), item) != items.end())
      return absl::InvalidArgumentError(absl::StrCat(where, "'", part, "' is given twice"));
    items.push_back(item);
  }
  *out = std::move(items);
  return absl::OkStatus();
}

// A count flag's value when given (it must be >= `least`), else `fallback`.
absl::StatusOr<int> CountFlag(const absl::CommandLineFlag& flag, int least, int fallback) {
  if (!Given(flag)) return fallback;
  int value = 0;
  const std::string text = flag.CurrentValue();
  if (!absl::SimpleAtoi(text, &value) || value < least)
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag.Name(), "=", text, ": must be a whole number >= ", least));
  return value;
}
absl::StatusOr<int> CountFlag(const absl::Flag<int>& flag, int least, int fallback) {
  return CountFlag(absl::GetFlagReflectionHandle(flag), least, fallback);
}

// A plain string flag, when given, must not be empty.
absl::Status CheckNotEmpty(const absl::Flag<std::string>& flag) {
  if (Given(flag) && absl::GetFlag(flag).empty())
    return absl::InvalidArgumentError(absl::StrCat("--", absl::GetFlagReflectionHandle(flag).Name(),
                                                   " is empty (leave it out for the default)"));
  return absl::OkStatus();
}

// The list flags, and what follows from them: the infer cases follow
// --models and --batch_sizes unless --infer_models and --infer_batch_sizes
// say otherwise (a model the user names is run).
absl::Status ApplyListFlags(SuiteOptions& o) {
  RETURN_IF_ERROR_AS_IS(ParseList(FLAGS_families, &o.families));
  RETURN_IF_ERROR_AS_IS(ParseList(FLAGS_models, &o.train.models));
  RETURN_IF_ERROR_AS_IS(ParseList(FLAGS_kernel_models, &o.kernel.models));
  RETURN_IF_ERROR_AS_IS(ParseList(FLAGS_batch_sizes, &o.train.batch_sizes));
  RETURN_IF_ERROR_AS_IS(ParseList(FLAGS_precisions, &o.precisions));
  RETURN_IF_ERROR_AS_IS(ParseList(FLAGS_gpus, &o.gpus));
  RETURN_IF_ERROR_AS_IS(ParseList(FLAGS_data, &o.train.data));
  RETURN_IF_ERROR_AS_IS(ParseList(FLAGS_replicas, &o.train.replicas));
  if (Given(FLAGS_models)) RETURN_IF_ERROR_AS_IS(CheckModelNames("--models", o.train.models));
  if (Given(FLAGS_kernel_models))
    RETURN_IF_ERROR_AS_IS(CheckModelNames("--kernel_models", o.kernel.models));
  // --collective_*, --bandwidth_*, --infer_*: errors name the flag.
  auto given = [](const absl::CommandLineFlag& f) { return Given(f); };
  RETURN_IF_ERROR_AS_IS(ApplyCollectiveFlags(o, given));
  RETURN_IF_ERROR_AS_IS(ApplyBandwidthFlags(o));
  RETURN_IF_ERROR_AS_IS(ApplyInferFlags(o, given));
  auto given_by_name = [](const char* name) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    return flag != nullptr && Given(*flag);
  };
  if (Given(FLAGS_models) && !given_by_name("infer_models")) o.infer.models = o.train.models;
  if (Given(FLAGS_batch_sizes) && !given_by_name("infer_batch_sizes"))
    o.infer.batch_sizes = o.train.batch_sizes;
  for (int r : o.train.replicas)
    if (r == 0) return absl::InvalidArgumentError("--replicas: a replica count must be >= 1");
  for (int64_t b : o.train.batch_sizes)
    if (b == 0) return absl::InvalidArgumentError("--batch_sizes: a batch size must be >= 1");
  for (const auto& d : o.train.data)
    if (d != "synthetic" && d != "real")
      return absl::InvalidArgumentError(
          absl::StrCat("--data: unknown '", d, "' (synthetic, real)"));
  for (const auto& p : o.precisions)
    if (absl::Status parsed = ParsePrecision(p).status(); !parsed.ok())
      return absl::InvalidArgumentError(absl::StrCat("--precisions: ", parsed.message()));
  return absl::OkStatus();
}

// The count flags (each checked against its least value; the preset's when
// not given), the repetitions with Google Benchmark's timing flags.
absl::Status ApplyCountFlags(const BenchmarkTimingFlags& timing, SuiteOptions& o) {
  ASSIGN_OR_RETURN_AS_IS(o.train.steps, CountFlag(FLAGS_steps, 1, o.train.steps));
  ASSIGN_OR_RETURN_AS_IS(o.train.warmup_steps,
                         CountFlag(FLAGS_warmup_steps, 0, o.train.warmup_steps));
  ASSIGN_OR_RETURN_AS_IS(const int repetitions, CountFlag(FLAGS_repetitions, 1, -1));
  RETURN_IF_ERROR_AS_IS(ApplyTimingFlags(timing, repetitions, o));
  ASSIGN_OR_RETURN_AS_IS(const int image_size, CountFlag(FLAGS_image_size, 1, 0));
  if (image_size > 0) o.image_size = image_size;
  ASSIGN_OR_RETURN_AS_IS(o.kernel.batch, CountFlag(FLAGS_kernel_batch, 0, o.kernel.batch));
  ASSIGN_OR_RETURN_AS_IS(o.kernel.max_shapes,
                         CountFlag(FLAGS_max_kernel_shapes, 0, o.kernel.max_shapes));
  ASSIGN_OR_RETURN_AS_IS(
      const int bucket_mb,
      CountFlag(FLAGS_bucket_mb, 1, static_cast<int>(o.train.bucket_bytes >> 20)));
  o.train.bucket_bytes = static_cast<size_t>(bucket_mb) << 20;
  ASSIGN_OR_RETURN_AS_IS(o.train.input_cores, CountFlag(FLAGS_input_cores, 0, 0));
  ASSIGN_OR_RETURN_AS_IS(o.train.threads_per_replica, CountFlag(FLAGS_threads_per_replica, 1, 0));
  ASSIGN_OR_RETURN_AS_IS(
      const int timeout_s,
      CountFlag(FLAGS_collective_timeout, 1,
                static_cast<int>(absl::ToInt64Seconds(o.collective_timeout))));
  o.collective_timeout = absl::Seconds(timeout_s);
  return absl::OkStatus();
}

// The switches and settings of how cases run and are shown.
absl::Status ApplyRunFlags(SuiteOptions& o) {
  o.train.overlap = absl::GetFlag(FLAGS_overlap);
  o.train.fuse_relu = absl::GetFlag(FLAGS_fuse_relu);
  o.train.accuracy = absl::GetFlag(FLAGS_train_accuracy);
  o.keep_step_times = absl::GetFlag(FLAGS_keep_step_times);
  o.trace_file = absl::GetFlag(FLAGS_trace_file);
  if (Given(FLAGS_trace_file) || !o.trace_file.empty())
    RETURN_IF_ERROR(CheckTraceFilePath(o.trace_file, "--trace_file"));
  if (const std::string every = absl::GetFlag(FLAGS_display_every); every == "auto") {
    o.display_every = TimingSettings::kDisplayAuto;
  } else if (!absl::SimpleAtoi(every, &o.display_every) || o.display_every < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--display_every=", every, ": a number of steps >= 0 (0: never), or auto"));
  }
  o.drift_threshold = absl::GetFlag(FLAGS_drift_threshold);
  if (!(o.drift_threshold >= 0) || !std::isfinite(o.drift_threshold))
    return absl::InvalidArgumentError(absl::StrCat("--drift_threshold=", o.drift_threshold,
                                                   ": a fraction >= 0, e.g. 0.05 for 5%"));
  if (Given(FLAGS_backend)) o.backend = absl::GetFlag(FLAGS_backend);
  if (o.backend != "onednn" && o.backend != "reference")
    return absl::InvalidArgumentError(
        absl::StrCat("--backend: unknown '", o.backend, "' (onednn, reference)"));
  absl::StatusOr<CpuConvAlgorithm> algorithm =
      ParseCpuConvAlgorithm(absl::GetFlag(FLAGS_cpu_conv_algorithm));
  if (!algorithm.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("--cpu_conv_algorithm: ", algorithm.status().message()));
  o.cpu_conv_algorithm = *algorithm;
  o.platform = absl::GetFlag(FLAGS_platform);
  return absl::OkStatus();
}

// The GPU's settings, and the process-wide ones of plan building (the
// compile deadline, NVRTC builds, the plan choices file).
absl::Status ApplyCudaFlags(SuiteOptions& o) {
  o.cuda.graph = absl::GetFlag(FLAGS_cuda_graph);
  const std::string layout = absl::GetFlag(FLAGS_gpu_layout);
  if (layout != "nhwc" && layout != "nchw")
    return absl::InvalidArgumentError(
        absl::StrCat("--gpu_layout: unknown '", layout, "' (nhwc, nchw)"));
  o.cuda.nhwc = layout == "nhwc";
  const std::string bn = absl::GetFlag(FLAGS_cuda_batch_norm);
  if (bn != "graph" && bn != "legacy")
    return absl::InvalidArgumentError(
        absl::StrCat("--cuda_batch_norm: unknown '", bn, "' (graph, legacy)"));
  o.cuda.batch_norm_graphs = bn == "graph";
  const double deadline = absl::GetFlag(FLAGS_compile_deadline_s);
  if (!(deadline >= 0) || !std::isfinite(deadline))
    return absl::InvalidArgumentError(
        absl::StrCat("--compile_deadline_s: ", deadline, " (seconds >= 0; 0: none)"));
  if (deadline > 0) SetCompileDeadline(deadline);
  const int process_builds = absl::GetFlag(FLAGS_cuda_rtc_process_builds);
  if (process_builds < -1)
    return absl::InvalidArgumentError(absl::StrCat(
        "--cuda_rtc_process_builds: ", process_builds, " (a count >= 0, or -1 for the default)"));
  cuda::SetRuntimeCompiledProcessBuilds(process_builds);
  const std::string plan_cache = absl::GetFlag(FLAGS_cuda_plan_cache);
  if (!plan_cache.empty()) {
    const size_t slash = plan_cache.find_last_of('/');
    const std::string folder = slash == std::string::npos ? "." : plan_cache.substr(0, slash + 1);
    if (plan_cache.back() == '/' || access(folder.c_str(), W_OK) != 0)
      return absl::InvalidArgumentError(absl::StrCat(
          "--cuda_plan_cache: ", plan_cache, " (a file in a folder that exists and is writable)"));
    cuda::PlanChoices::Process().Open(plan_cache);
  }
  o.cuda.rtc_attempts = absl::GetFlag(FLAGS_cuda_rtc_attempts);
  if (o.cuda.rtc_attempts < -1)
    return absl::InvalidArgumentError(absl::StrCat("--cuda_rtc_attempts: ", o.cuda.rtc_attempts,
                                                   " (a count >= 0, or -1 for the default)"));
  return absl::OkStatus();
}

absl::StatusOr<SuiteOptions> OptionsFromFlags(const BenchmarkTimingFlags& timing) {
  for (const auto* flag : {&FLAGS_preset, &FLAGS_data_dir, &FLAGS_platform, &FLAGS_backend})
    RETURN_IF_ERROR_AS_IS(CheckNotEmpty(*flag));
  std::string preset = absl::GetFlag(FLAGS_preset);
  const int gpu_count = CudaDeviceCount();
  if (preset.empty()) preset = gpu_count > 0 ? "published" : "quick";
  ASSIGN_OR_RETURN_AS_IS(SuiteOptions o, PresetOptions(preset, gpu_count));
  RETURN_IF_ERROR_AS_IS(ApplyListFlags(o));
  o.data_dir = absl::GetFlag(FLAGS_data_dir);
  // The published page has a real-data table beside the synthetic one: with
  // a dataset given (and no --data), the published preset runs both.
  if (o.preset == "published" && !o.data_dir.empty() && !Given(FLAGS_data))
    o.train.data = {"synthetic", "real"};
  absl::StatusOr<input::ColorDistortion> distortions =
      input::ParseColorDistortion(absl::GetFlag(FLAGS_distortions));
  if (!distortions.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("--distortions: ", distortions.status().message()));
  o.distortions = *distortions;
  RETURN_IF_ERROR_AS_IS(ApplyCountFlags(timing, o));
  RETURN_IF_ERROR_AS_IS(ApplyRunFlags(o));
  RETURN_IF_ERROR_AS_IS(ApplyCudaFlags(o));
  return o;
}

}  // namespace

void RecordSuiteFlagsGiven(int argc, char** argv) { RecordGivenFlags(argc, argv); }

bool SuiteFlagGiven(const absl::CommandLineFlag& flag) { return Given(flag); }

absl::StatusOr<SuiteOptions> SuiteOptionsFromFlags(const BenchmarkTimingFlags& timing) {
  return OptionsFromFlags(timing);
}

}  // namespace cnnbench::bench
