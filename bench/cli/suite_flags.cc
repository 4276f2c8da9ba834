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
#include "bench/cli/flag_read.h"
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
ABSL_FLAG(std::string, models, "",
          "models for training cases, e.g. resnet50,vgg16,mobilenet (tf_cnn_benchmarks' names: "
          "mobilenet is MobileNetV2, also mobilenet_v2; v1 is mobilenet_v1)");
ABSL_FLAG(std::string, kernel_models, "", "models whose distinct layers become kernel cases");
ABSL_FLAG(std::string, batch_sizes, "", "per-device batch sizes (default: each model's own)");
ABSL_FLAG(std::string, precisions, "", "fp32,tf32,fp16,bf16");
ABSL_FLAG(std::string, gpus, "", "GPU counts, e.g. 1,2,4,8 (0 = the CPU)");
ABSL_FLAG(std::string, replicas, "",
          "data-parallel CPU replicas for the gpus:0 training cases, e.g. 1,2 (default 1); "
          "GPU cases take one replica per GPU");
ABSL_FLAG(int, bucket_mb, -1,
          "gradient all-reduce bucket size in MiB for data-parallel training (default 25)");
ABSL_FLAG(bool, overlap, cnnbench::bench::TrainCaseOptions().overlap,
          "data-parallel training: all-reduce each gradient bucket during backward (false: "
          "all of them after backward, to measure what overlap gains)");
ABSL_FLAG(bool, fuse_relu, cnnbench::bench::TrainCaseOptions().fuse_relu,
          "training: fold each ReLU into the batch norm or residual add before it, and each "
          "SiLU, hard-swish, sigmoid or GELU into the batch norm before it (false: every layer "
          "on its own, the baseline fusion is measured against)");
ABSL_FLAG(bool, keep_step_times, cnnbench::bench::SuiteOptions().keep_step_times,
          "train and infer cases write each repetition's step times into the JSON "
          "(\"step_times_ms\"); false leaves the list out, never the step statistics");
ABSL_FLAG(std::string, display_every, "auto",
          "train and infer cases print 'step i/N  images/sec: X +/- Y (jitter = Z)' on stderr "
          "every N timed steps; 0: never; auto: every 10 when stderr is a terminal and the "
          "first timed step predicts over 10 s of timed steps");
ABSL_FLAG(double, drift_threshold, cnnbench::bench::SuiteOptions().drift_threshold,
          "a case of 20 or more timed steps whose last tenth of steps is more than this much "
          "slower than its first tenth is flagged in its label and in the report (0.05: 5%)");
ABSL_FLAG(std::string, trace_file, "",
          "train and infer cases: after the first repetition's timed steps, one more step "
          "(batch) written as a Chrome trace (Perfetto, chrome://tracing), never part of the "
          "timed figures: to this path when one case is traced, else to this path with each "
          "case's name inserted before the extension (replicas: one process row each)");
ABSL_FLAG(int, power_sample_ms, cnnbench::bench::SuiteOptions().power_sample_ms,
          "read the power, energy and clock sensors (NVML on GPUs, RAPL and cpufreq on the CPU) "
          "every this many ms on a thread of their own over each repetition's timed span; 0: off");
ABSL_FLAG(bool, train_accuracy, cnnbench::bench::TrainCaseOptions().accuracy,
          "training cases report the last step's batch top-1/top-5 (its logits kept to the "
          "step's end)");
ABSL_FLAG(std::string, gpu_layout, "nhwc",
          "GPU activations of the fp16/bf16/tf32 cases: nhwc (tensor cores' layout) or nchw "
          "(fp32 cases are NCHW either way)");
ABSL_FLAG(std::string, cuda_batch_norm, "graph",
          "GPU training batch norm: graph (cuDNN graphs with the ReLU fused in, on NHWC "
          "activations where an engine builds) or legacy (cuDNN's batch norm calls and a "
          "separate ReLU pass)");
ABSL_FLAG(int, cuda_rtc_attempts, cnnbench::bench::CudaCaseOptions().rtc_attempts,
          "GPU: at most this many builds of cuDNN engines compiled at run time (NVRTC, seconds "
          "each) per convolution or batch norm graph, success or failure, tried only where no "
          "precompiled engine builds (-1: $CNNBENCH_CUDA_RTC_ATTEMPTS, else 2; 0: none)");
ABSL_FLAG(int, cuda_rtc_process_builds, cnnbench::bench::CudaCaseOptions().rtc_process_builds,
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
ABSL_FLAG(bool, cuda_graph, cnnbench::bench::CudaCaseOptions().graph,
          "GPU training cases: capture each step once as a CUDA graph and replay it "
          "(false: enqueue every kernel every step)");
ABSL_FLAG(double, compile_deadline_s, cnnbench::bench::SuiteOptions().compile_deadline_s,
          "seconds after the start past which building plans stops: each case still "
          "compiling then ends with 'deadline: ...' naming the layer and pass, and the results "
          "file is written (0: $CNNBENCH_COMPILE_DEADLINE_S, else none)");
ABSL_FLAG(std::string, store, "results/cnnbench.db",
          "where the run is kept when it ends (docs/history.md): a SQLite file, a shared "
          "PostgreSQL store (postgresql://user@host/db), or none");
ABSL_FLAG(bool, list, false, "print the cases that would run (after --benchmark_filter) and exit");
ABSL_FLAG(bool, verbose, false,
          "print each skipped case's full reason on stderr, with the source locations it "
          "passed through, and the compile log (one line per layer and pass while plans are "
          "built; also CNNBENCH_VERBOSE=1)");

namespace cnnbench::bench {
namespace {

// A plain string flag, when given, must not be empty.
std::string NotEmpty(const std::string& value) {
  return value.empty() ? "empty (leave it out for the default)" : "";
}

// The list flags, and what follows from them: the infer cases follow
// --models and --batch_sizes unless --infer_models and --infer_batch_sizes
// say otherwise (a model the user names is run).
absl::Status ApplyListFlags(SuiteOptions& o) {
  RETURN_IF_ERROR_AS_IS(ReadList(FLAGS_families, &o.families));
  RETURN_IF_ERROR_AS_IS(ReadList(FLAGS_models, &o.train.models));
  RETURN_IF_ERROR_AS_IS(ReadList(FLAGS_kernel_models, &o.kernel.models));
  RETURN_IF_ERROR_AS_IS(ReadList(FLAGS_batch_sizes, &o.train.batch_sizes, int64_t{1}));
  RETURN_IF_ERROR_AS_IS(ReadList(FLAGS_precisions, &o.precisions));
  RETURN_IF_ERROR_AS_IS(ReadList(FLAGS_gpus, &o.gpus, 0));
  RETURN_IF_ERROR_AS_IS(ReadList(FLAGS_data, &o.train.data));
  RETURN_IF_ERROR_AS_IS(ReadList(FLAGS_replicas, &o.train.replicas, 1));
  if (FlagGiven(FLAGS_models))
    RETURN_IF_ERROR_AS_IS(CanonicalizeModelNames("--models", &o.train.models));
  if (FlagGiven(FLAGS_kernel_models))
    RETURN_IF_ERROR_AS_IS(CanonicalizeModelNames("--kernel_models", &o.kernel.models));
  // --collective_*, --bandwidth_*, --infer_*, --input_*: errors name the flag.
  RETURN_IF_ERROR_AS_IS(ApplyCollectiveFlags(o));
  RETURN_IF_ERROR_AS_IS(ApplyBandwidthFlags(o));
  RETURN_IF_ERROR_AS_IS(ApplyInferFlags(o));
  RETURN_IF_ERROR_AS_IS(ApplyInputFlags(o));
  if (FlagGiven(FLAGS_models) && !FlagGiven("infer_models")) o.infer.models = o.train.models;
  if (FlagGiven(FLAGS_batch_sizes) && !FlagGiven("infer_batch_sizes"))
    o.infer.batch_sizes = o.train.batch_sizes;
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
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_steps, 1, &o.train.steps));
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_warmup_steps, 0, &o.train.warmup_steps));
  int repetitions = -1;
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_repetitions, 1, &repetitions));
  RETURN_IF_ERROR_AS_IS(ApplyTimingFlags(timing, repetitions, o));
  int image_size = static_cast<int>(o.image_size);
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_image_size, 0, &image_size));  // 0: each model's own
  o.image_size = image_size;
  int kernel_batch = static_cast<int>(o.kernel.batch);
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_kernel_batch, 0, &kernel_batch));
  o.kernel.batch = kernel_batch;
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_max_kernel_shapes, 0, &o.kernel.max_shapes));
  int bucket_mb = static_cast<int>(o.train.bucket_bytes >> 20);
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_bucket_mb, 1, &bucket_mb));
  o.train.bucket_bytes = static_cast<size_t>(bucket_mb) << 20;
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_input_cores, 0, &o.train.input_cores));
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_power_sample_ms, 0, &o.power_sample_ms));
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_threads_per_replica, 1, &o.train.threads_per_replica));
  int timeout_s = static_cast<int>(absl::ToInt64Seconds(o.collective_timeout));
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_collective_timeout, 1, &timeout_s));
  o.collective_timeout = absl::Seconds(timeout_s);
  return absl::OkStatus();
}

// The switches and settings of how cases run and are shown.
absl::Status ApplyRunFlags(SuiteOptions& o) {
  RETURN_IF_ERROR_AS_IS(ReadValue(FLAGS_overlap, &o.train.overlap));
  RETURN_IF_ERROR_AS_IS(ReadValue(FLAGS_fuse_relu, &o.train.fuse_relu));
  RETURN_IF_ERROR_AS_IS(ReadValue(FLAGS_train_accuracy, &o.train.accuracy));
  RETURN_IF_ERROR_AS_IS(ReadValue(FLAGS_keep_step_times, &o.keep_step_times));
  RETURN_IF_ERROR_AS_IS(ReadValue(FLAGS_trace_file, &o.trace_file));
  if (FlagGiven(FLAGS_trace_file) || !o.trace_file.empty())
    RETURN_IF_ERROR(CheckTraceFilePath(o.trace_file, "--trace_file"));
  RETURN_IF_ERROR_AS_IS(ReadChoice(
      FLAGS_display_every,
      [](const std::string& every) -> absl::StatusOr<int> {
        if (every == "auto") return TimingSettings::kDisplayAuto;
        absl::StatusOr<int> steps = ParseWholeNumber<int>(every);
        if (!steps.ok() && absl::StrContains(steps.status().message(), "too large"))
          return steps.status();
        if (!steps.ok() || *steps < 0)
          return absl::InvalidArgumentError(
              absl::StrCat("'", every, "' is not a number of steps >= 0 (0: never) or auto"));
        return *steps;
      },
      &o.display_every));
  RETURN_IF_ERROR_AS_IS(ReadValue(FLAGS_drift_threshold, &o.drift_threshold, [](double v) {
    return v >= 0 && std::isfinite(v) ? "" : "a fraction >= 0, e.g. 0.05 for 5%";
  }));
  RETURN_IF_ERROR_AS_IS(ReadValue(FLAGS_backend, &o.backend, [](const std::string& b) {
    return b == "onednn" || b == "reference" ? "" : "unknown backend (onednn, reference)";
  }));
  RETURN_IF_ERROR_AS_IS(
      ReadChoice(FLAGS_cpu_conv_algorithm, ParseCpuConvAlgorithm, &o.cpu_conv_algorithm));
  RETURN_IF_ERROR_AS_IS(ReadValue(FLAGS_platform, &o.platform, NotEmpty));
  RETURN_IF_ERROR_AS_IS(ReadValue(FLAGS_data_dir, &o.data_dir, NotEmpty));
  RETURN_IF_ERROR_AS_IS(ReadChoice(FLAGS_distortions, input::ParseColorDistortion, &o.distortions));
  return absl::OkStatus();
}

// The GPU's settings, and the process-wide ones of plan building (the
// compile deadline, NVRTC builds, the plan choices file).
absl::Status ApplyCudaFlags(SuiteOptions& o) {
  RETURN_IF_ERROR_AS_IS(ReadValue(FLAGS_cuda_graph, &o.cuda.graph));
  RETURN_IF_ERROR_AS_IS(ReadChoice(
      FLAGS_gpu_layout,
      [](const std::string& layout) -> absl::StatusOr<bool> {
        if (layout != "nhwc" && layout != "nchw")
          return absl::InvalidArgumentError("unknown layout (nhwc, nchw)");
        return layout == "nhwc";
      },
      &o.cuda.nhwc));
  RETURN_IF_ERROR_AS_IS(ReadChoice(
      FLAGS_cuda_batch_norm,
      [](const std::string& bn) -> absl::StatusOr<bool> {
        if (bn != "graph" && bn != "legacy")
          return absl::InvalidArgumentError("unknown form (graph, legacy)");
        return bn == "graph";
      },
      &o.cuda.batch_norm_graphs));
  RETURN_IF_ERROR_AS_IS(ReadValue(FLAGS_compile_deadline_s, &o.compile_deadline_s, [](double v) {
    return v >= 0 && std::isfinite(v) ? "" : "seconds >= 0 (0: none)";
  }));
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_cuda_rtc_process_builds, -1, &o.cuda.rtc_process_builds));
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_cuda_rtc_attempts, -1, &o.cuda.rtc_attempts));
  RETURN_IF_ERROR_AS_IS(
      ReadValue(FLAGS_cuda_plan_cache, &o.cuda.plan_cache, [](const std::string& path) {
        const size_t slash = path.find_last_of('/');
        const std::string folder = slash == std::string::npos ? "." : path.substr(0, slash + 1);
        return !path.empty() && path.back() != '/' && access(folder.c_str(), W_OK) == 0
                   ? ""
                   : "a file in a folder that exists and is writable";
      }));
  return absl::OkStatus();
}

// What the options set for the whole process: the compile deadline, the
// NVRTC build budget, the plan choices file.
void ApplyProcessSettings(const SuiteOptions& o) {
  if (o.compile_deadline_s > 0) SetCompileDeadline(o.compile_deadline_s);
  cuda::SetRuntimeCompiledProcessBuilds(o.cuda.rtc_process_builds);
  if (!o.cuda.plan_cache.empty()) cuda::PlanChoices::Process().Open(o.cuda.plan_cache);
}

}  // namespace

absl::Status ApplySuiteFlags(const BenchmarkTimingFlags& timing, SuiteOptions& o) {
  RETURN_IF_ERROR_AS_IS(ApplyListFlags(o));
  // The published page has a real-data table beside the synthetic one: with
  // a dataset given (and no --data), the published preset runs both.
  if (o.preset == "published" && FlagGiven(FLAGS_data_dir) && !FlagGiven(FLAGS_data))
    o.train.data = {"synthetic", "real"};
  RETURN_IF_ERROR_AS_IS(ApplyCountFlags(timing, o));
  RETURN_IF_ERROR_AS_IS(ApplyRunFlags(o));
  RETURN_IF_ERROR_AS_IS(ApplyCudaFlags(o));
  return absl::OkStatus();
}

absl::StatusOr<SuiteOptions> SuiteOptionsFromFlags(const BenchmarkTimingFlags& timing) {
  std::string preset = absl::GetFlag(FLAGS_preset);
  if (FlagGiven(FLAGS_preset) && preset.empty())
    return absl::InvalidArgumentError("--preset is empty (leave it out for the default)");
  const int gpu_count = CudaDeviceCount();
  if (preset.empty()) preset = gpu_count > 0 ? "published" : "quick";
  ASSIGN_OR_RETURN_AS_IS(SuiteOptions o, PresetOptions(preset, gpu_count));
  RETURN_IF_ERROR_AS_IS(ApplySuiteFlags(timing, o));
  ApplyProcessSettings(o);
  return o;
}

}  // namespace cnnbench::bench
