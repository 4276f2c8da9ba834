// //bench:all: registers the suite that fits this machine (or what the flags
// ask for), adds the platform and methodology to the JSON context, and runs
// Google Benchmark. Its --benchmark_* flags work as it documents them; the
// timing ones (repetitions, min_time) are read here too, because every case
// states its own timing settings (docs/benchmarks.md says which flag governs
// which family). --benchmark_out is written by the suite (bench/result_output.h)
// so that no run loses or half-writes a file, and every write is checked.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/case_filter.h"
#include "bench/collective_cases.h"
#include "bench/context.h"
#include "bench/harness.h"
#include "bench/infer_cases.h"
#include "bench/interrupt.h"
#include "bench/names.h"
#include "bench/power_sampler.h"
#include "bench/preflight.h"
#include "bench/result_output.h"
#include "bench/suite.h"
#include "bench/usage.h"
#include "benchmark/benchmark.h"
#include "core/compile_log.h"
#include "core/crash_handler.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/gpu_runtime.h"
#include "core/invocation.h"
#include "core/platform.h"
#include "core/status.h"
#include "kernels/collectives/communicator.h"
#include "kernels/collectives/mpi.h"
#include "kernels/collectives/nccl.h"
#include "kernels/cuda/engine_pick.h"

ABSL_FLAG(std::string, preset, "",
          "quick | published | full | tiny (default: published with a GPU, quick without)");
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
          "single-replica train and infer cases: after the first repetition's timed steps, one "
          "more step (batch) written as a Chrome trace (Perfetto, chrome://tracing) to this path "
          "with the case's name inserted before the extension; never part of the timed figures");
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

absl::StatusOr<SuiteOptions> OptionsFromFlags(const BenchmarkTimingFlags& timing) {
  for (const auto* flag : {&FLAGS_preset, &FLAGS_data_dir, &FLAGS_platform, &FLAGS_backend})
    RETURN_IF_ERROR_AS_IS(CheckNotEmpty(*flag));
  std::string preset = absl::GetFlag(FLAGS_preset);
  const int gpu_count = CudaDeviceCount();
  if (preset.empty()) preset = gpu_count > 0 ? "published" : "quick";
  auto options = PresetOptions(preset, gpu_count);
  if (!options.ok()) return options.status();
  SuiteOptions& o = *options;
  absl::Status s;
  if (!(s = ParseList(FLAGS_families, &o.families)).ok()) return s;
  if (!(s = ParseList(FLAGS_models, &o.train.models)).ok()) return s;
  if (!(s = ParseList(FLAGS_kernel_models, &o.kernel.models)).ok()) return s;
  if (!(s = ParseList(FLAGS_batch_sizes, &o.train.batch_sizes)).ok()) return s;
  if (!(s = ParseList(FLAGS_precisions, &o.precisions)).ok()) return s;
  if (!(s = ParseList(FLAGS_gpus, &o.gpus)).ok()) return s;
  if (!(s = ParseList(FLAGS_data, &o.train.data)).ok()) return s;
  if (!(s = ParseList(FLAGS_replicas, &o.train.replicas)).ok()) return s;
  // --collective_* (bench/collective_cases.cc): errors name the flag.
  if (!(s = ApplyCollectiveFlags(o, [](const absl::CommandLineFlag& f) { return Given(f); })).ok())
    return s;
  if (!(s = ApplyBandwidthFlags(o)).ok()) return s;
  if (!(s = ApplyInferFlags(o, [](const absl::CommandLineFlag& f) { return Given(f); })).ok())
    return s;
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
  o.data_dir = absl::GetFlag(FLAGS_data_dir);
  // The published page has a real-data table beside the synthetic one: with
  // a dataset given (and no --data), the published preset runs both.
  if (o.preset == "published" && !o.data_dir.empty() && !Given(FLAGS_data))
    o.train.data = {"synthetic", "real"};
  if (absl::StatusOr<input::ColorDistortion> d =
          input::ParseColorDistortion(absl::GetFlag(FLAGS_distortions));
      d.ok()) {
    o.distortions = *d;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("--distortions: ", d.status().message()));
  }

  absl::StatusOr<int> count = CountFlag(FLAGS_steps, 1, o.train.steps);
  if (!count.ok()) return count.status();
  o.train.steps = *count;
  if (!(count = CountFlag(FLAGS_warmup_steps, 0, o.train.warmup_steps)).ok()) return count.status();
  o.train.warmup_steps = *count;
  if (!(count = CountFlag(FLAGS_repetitions, 1, -1)).ok()) return count.status();
  if (!(s = ApplyTimingFlags(timing, *count, o)).ok()) return s;
  if (!(count = CountFlag(FLAGS_image_size, 1, 0)).ok()) return count.status();
  if (*count > 0) o.image_size = *count;
  if (!(count = CountFlag(FLAGS_kernel_batch, 0, o.kernel.batch)).ok()) return count.status();
  o.kernel.batch = *count;
  if (!(count = CountFlag(FLAGS_max_kernel_shapes, 0, o.kernel.max_shapes)).ok())
    return count.status();
  o.kernel.max_shapes = *count;
  if (!(count = CountFlag(FLAGS_bucket_mb, 1, static_cast<int>(o.train.bucket_bytes >> 20))).ok())
    return count.status();
  o.train.bucket_bytes = static_cast<size_t>(*count) << 20;
  if (!(count = CountFlag(FLAGS_input_cores, 0, 0)).ok()) return count.status();
  o.train.input_cores = *count;
  if (!(count = CountFlag(FLAGS_threads_per_replica, 1, 0)).ok()) return count.status();
  o.train.threads_per_replica = *count;
  if (!(count = CountFlag(FLAGS_collective_timeout, 1,
                          static_cast<int>(absl::ToInt64Seconds(o.collective_timeout))))
           .ok())
    return count.status();
  o.collective_timeout = absl::Seconds(*count);
  o.train.overlap = absl::GetFlag(FLAGS_overlap);
  o.train.fuse_relu = absl::GetFlag(FLAGS_fuse_relu);
  o.train.accuracy = absl::GetFlag(FLAGS_train_accuracy);
  o.keep_step_times = absl::GetFlag(FLAGS_keep_step_times);
  o.trace_file = absl::GetFlag(FLAGS_trace_file);
  if (Given(FLAGS_trace_file) && o.trace_file.empty())
    return absl::InvalidArgumentError("--trace_file is empty (leave it out for no trace)");
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
  if (absl::StatusOr<CpuConvAlgorithm> algorithm =
          ParseCpuConvAlgorithm(absl::GetFlag(FLAGS_cpu_conv_algorithm));
      algorithm.ok()) {
    o.cpu_conv_algorithm = *algorithm;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--cpu_conv_algorithm: ", algorithm.status().message()));
  }
  o.platform = absl::GetFlag(FLAGS_platform);
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
  o.cuda.rtc_attempts = absl::GetFlag(FLAGS_cuda_rtc_attempts);
  if (o.cuda.rtc_attempts < -1)
    return absl::InvalidArgumentError(absl::StrCat("--cuda_rtc_attempts: ", o.cuda.rtc_attempts,
                                                   " (a count >= 0, or -1 for the default)"));
  return options;
}

void AddMethodologyContext(const SuiteOptions& o) {
  benchmark::AddCustomContext("preset", o.preset);
  benchmark::AddCustomContext("warmup_steps", absl::StrCat(o.train.warmup_steps));
  benchmark::AddCustomContext("steps", absl::StrCat(o.train.steps));
  benchmark::AddCustomContext("repetitions", absl::StrCat(o.repetitions));
  benchmark::AddCustomContext("kernel_min_time", absl::StrCat(o.kernel.min_time));
  benchmark::AddCustomContext("cpu_backend", o.backend);
  if (o.backend == "onednn")
    benchmark::AddCustomContext("cpu_conv_algorithm",
                                std::string(CpuConvAlgorithmName(o.cpu_conv_algorithm)));
  benchmark::AddCustomContext("cuda_graph", o.cuda.graph ? "true" : "false");
  benchmark::AddCustomContext("gpu_layout", o.cuda.nhwc ? "nhwc" : "nchw");
  benchmark::AddCustomContext("cuda_batch_norm", o.cuda.batch_norm_graphs ? "graph" : "legacy");
  benchmark::AddCustomContext(
      "cuda_rtc_attempts", absl::StrCat(cuda::ResolveRuntimeCompiledAttempts(o.cuda.rtc_attempts)));
  benchmark::AddCustomContext("image_size",
                              o.image_size > 0 ? absl::StrCat(o.image_size) : "model default");
  benchmark::AddCustomContext("optimizer", "sgd momentum 0.9");
  benchmark::AddCustomContext("bucket_bytes", absl::StrCat(o.train.bucket_bytes));
  benchmark::AddCustomContext("overlap", o.train.overlap ? "true" : "false");
  benchmark::AddCustomContext("fuse_relu", o.train.fuse_relu ? "true" : "false");
  benchmark::AddCustomContext("train_accuracy", o.train.accuracy ? "true" : "false");
  benchmark::AddCustomContext("keep_step_times", o.keep_step_times ? "true" : "false");
  benchmark::AddCustomContext("drift_threshold", absl::StrCat(o.drift_threshold));
  AddCollectiveContext(o);
  AddInferContext(o);
  benchmark::AddCustomContext("collective_timeout_s",
                              absl::StrCat(absl::ToInt64Seconds(o.collective_timeout)));
  const bool real =
      std::find(o.train.data.begin(), o.train.data.end(), "real") != o.train.data.end();
  const bool input_cases = std::find(o.families.begin(), o.families.end(),
                                     FamilyName(Family::kInput)) != o.families.end();
  benchmark::AddCustomContext(
      "data_dir", !o.data_dir.empty()   ? o.data_dir
                  : real || input_cases ? "generated: a data set made by the suite (make_dataset: "
                                          "256 train images of 200-500 px, 10 classes)"
                                        : "none");
  if (real) benchmark::AddCustomContext("input_cores", absl::StrCat(o.train.input_cores));
  if (real || input_cases)
    benchmark::AddCustomContext("distortions", input::ColorDistortionName(o.distortions));
  benchmark::AddCustomContext(
      "methodology",
      absl::StrCat(o.train.warmup_steps, " warm-up steps, ", o.train.steps, " timed steps, ",
                   o.repetitions, " repetition(s), mean reported; kernel and GEMM cases: at least ",
                   o.kernel.min_time, " s per repetition"));
}

// Exit statuses (docs/benchmarks.md): 0 the run finished and its output was
// written; 1 the output could not be written (Abseil also exits 1 on an
// unknown flag); 2 a bad flag value, or no case to run; 128 + signal when
// interrupted.
constexpr int kOutputFailed = 1;
constexpr int kBadUsage = 2;

// The console of the ranks other than 0 of an MPI job: they run every case
// (each is one rank of it) but rank 0 alone reports.
class SilentReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

int Fail(int code, const absl::Status& status) {
  std::fprintf(stderr, "cnnbench: %s\n", std::string(status.message()).c_str());
  return code;
}

int Main(int argc, char** argv) {
  InstallCrashHandler(argv[0]);
  const std::string command_line = CommandLine(argc, argv);
  if (WantsHelp(argc, argv)) {
    PrintHelp();
    return 0;
  }
  ChangeToInvocationDirectory();  // relative --benchmark_out paths: where the user typed them
  // Before Initialize, which removes them from argv.
  const absl::StatusOr<BenchmarkTimingFlags> timing = ReadBenchmarkTimingFlags(argc, argv);
  if (!timing.ok()) return Fail(kBadUsage, timing.status());
  const std::string out_path = BenchmarkFlagValue(argc, argv, "benchmark_out").value_or("");
  const std::string out_format =
      BenchmarkFlagValue(argc, argv, "benchmark_out_format").value_or("json");
  const std::string display_format =
      BenchmarkFlagValue(argc, argv, "benchmark_format").value_or("console");
  for (const auto& [flag, format] : {std::pair{"benchmark_out_format", out_format},
                                     std::pair{"benchmark_format", display_format}}) {
    if (format != "console" && format != "json" && format != "csv")
      return Fail(kBadUsage,
                  absl::InvalidArgumentError(absl::StrCat(
                      "--", flag, "=", format, ": unknown format (console, json, csv)")));
  }
  // Google Benchmark would write --benchmark_out itself, unchecked, and
  // truncate it before knowing whether anything runs: ResultFile writes it
  // instead, and the library's own file goes to /dev/null.
  std::vector<char*> args(argv, argv + argc);
  std::string null_out = "--benchmark_out=/dev/null";
  if (!out_path.empty()) args.push_back(null_out.data());
  int args_count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&args_count, args.data());  // takes the --benchmark_* flags
  absl::SetProgramUsageMessage(
      "cnnbench suite: ./bazelw run //bench:all -- [--preset=quick|published|full] "
      "[--models=...] [--benchmark_filter=REGEX] [--benchmark_out=run.json "
      "--benchmark_out_format=json]; --help lists the flags");
  RecordGivenFlags(argc, argv);
  absl::ParseCommandLine(args_count, args.data());  // unknown flags: a clear message and exit 1

  // Both outlive the run: the registered cases point into them.
  absl::StatusOr<SuiteOptions> options = OptionsFromFlags(*timing);
  if (!options.ok()) return Fail(kBadUsage, options.status());

  // Under an MPI launcher: this process is one rank; rank 0 alone prints and
  // writes the output.
  MpiRanks mpi_ranks;
  std::unique_ptr<Communicator> world;
  if (MpiEnvironment::Launched()) {
    absl::StatusOr<MpiEnvironment*> env = MpiEnvironment::Get();
    if (!env.ok()) return Fail(kBadUsage, env.status());
    mpi_ranks.rank = (*env)->rank();
    mpi_ranks.size = (*env)->size();
    mpi_ranks.local_rank = (*env)->local_rank();
    const std::set<std::string> hosts((*env)->host_names().begin(), (*env)->host_names().end());
    mpi_ranks.hosts = static_cast<int>(hosts.size());
    mpi_ranks.library_version = (*env)->library_version();
    options->mpi = &mpi_ranks;
    CommunicatorOptions co;
    co.timeout = options->collective_timeout;
    absl::StatusOr<std::unique_ptr<Communicator>> comm = CreateMpiCommunicator(co);
    // A rank that never arrives leaves the others inside MPI: the job ends.
    if (absl::IsDeadlineExceeded(comm.status()))
      AbortMpiJob(kBadUsage,
                  absl::StrCat("cnnbench: rank ", mpi_ranks.rank, ": ", comm.status().message()));
    if (!comm.ok()) return Fail(kBadUsage, comm.status());
    world = *std::move(comm);
    // Kernel and GEMM cases involve no other rank: every process would time
    // the same thing. A job runs the families that span its ranks.
    std::vector<std::string> families;
    for (const std::string& f : options->families)
      if (const CaseFamily* family = FindCaseFamily(f); family != nullptr && family->spans_ranks)
        families.push_back(f);
    if (families.size() != options->families.size() && mpi_ranks.rank == 0)
      std::fprintf(stderr,
                   "cnnbench: under MPI (%d ranks) only the %s families run (one replica "
                   "or rank per process)\n",
                   mpi_ranks.size, SpanningFamilyList().c_str());
    options->families = std::move(families);
  }
  const bool rank0 = mpi_ranks.rank == 0;
  Harness harness(TimingOf(*options));
  harness.progress().set_quiet(!rank0);
  auto names = RegisterSuite(*options, harness);
  if (!names.ok()) return Fail(kBadUsage, names.status());

  // The cases --benchmark_filter lets run, as Google Benchmark will choose them.
  const absl::StatusOr<CaseFilter> filter = CaseFilter::Parse(benchmark::GetBenchmarkFilter());
  if (!filter.ok()) return Fail(kBadUsage, filter.status());
  std::vector<bool> selected(harness.case_count());
  std::vector<std::string> selected_names;
  for (int i = 0; i < harness.case_count(); ++i) {
    selected[i] = filter->Matches(harness.InstanceName(i));
    if (selected[i]) selected_names.push_back((*names)[i]);
  }
  harness.progress().Select(selected);
  if (selected_names.empty()) {
    return Fail(kBadUsage,
                absl::InvalidArgumentError(
                    filter->spec().empty()
                        ? std::string("no case to run: the options select none")
                        : absl::StrCat("no case to run: --benchmark_filter=", filter->spec(),
                                       " matches none of the ", harness.case_count(),
                                       " case(s) the options select (without the filter, "
                                       "--list shows them); no output was written")));
  }
  if (world != nullptr) {
    // Every rank must be about to make the same collectives.
    const PlatformInfo platform = CollectPlatformInfo();
    const std::vector<std::string> user_args(argv + 1, argv + argc);
    const absl::StatusOr<std::string> nccl = NcclVersion();
    const absl::Status agreed =
        Preflight(*world, {{"binary", absl::StrCat(platform.git_commit, " ", platform.build_config,
                                                   " ", BuildCompilationMode())},
                           {"flags", absl::StrJoin(user_args, " ")},
                           {"cases", absl::StrJoin(selected_names, ",")},
                           {"gpus visible", absl::StrCat(options->gpu_count)},
                           {"mpi", mpi_ranks.library_version},
                           {"nccl", nccl.ok() ? *nccl : "none"}});
    if (absl::IsDeadlineExceeded(agreed))
      AbortMpiJob(kBadUsage,
                  absl::StrCat("cnnbench: rank ", mpi_ranks.rank, ": ", agreed.message()));
    if (!agreed.ok())
      return Fail(kBadUsage, absl::FailedPreconditionError(
                                 absl::StrCat("rank ", mpi_ranks.rank, ": ", agreed.message())));
  }
  if (absl::GetFlag(FLAGS_list)) {
    if (rank0)
      for (const auto& n : selected_names) std::printf("%s\n", n.c_str());
    return 0;
  }

  std::unique_ptr<ResultFile> out;
  if (!out_path.empty() && rank0) {
    absl::StatusOr<std::unique_ptr<ResultFile>> opened = ResultFile::Open(out_path, out_format);
    if (!opened.ok()) return Fail(kOutputFailed, opened.status());
    out = *std::move(opened);
    out->SetDropCheck([&harness] { return harness.stopped(); });
    out->SetEndContext(EndOfRunContext);
  }
  if (out) RemoveOnSecondSignal(out->temp_path().c_str());
  InstallInterruptHandlers();
  harness.SetStopCheck([] { return InterruptSignal() != 0; });
  harness.set_verbose(absl::GetFlag(FLAGS_verbose));
  if (absl::GetFlag(FLAGS_verbose)) SetCompileLog(true);
  // The sensors, opened once; the context says which there are, or why none.
  const int power_ms = absl::GetFlag(FLAGS_power_sample_ms);
  if (power_ms < 0)
    return Fail(kBadUsage, absl::InvalidArgumentError(absl::StrCat(
                               "--power_sample_ms=", power_ms, ": milliseconds >= 0 (0: off)")));
  std::vector<std::string> gpu_bus_ids;
  for (int i = 0; i < options->gpu_count; ++i) {
    absl::StatusOr<gpu::DeviceProperties> props = gpu::GetDeviceProperties(i);
    gpu_bus_ids.push_back(props.ok() ? props->pci_bus_id : "");
  }
  PowerSensors power_sensors;
  if (power_ms > 0) {
    power_sensors = PowerSensors::Open(gpu_bus_ids);
    harness.SetPowerSensors(&power_sensors, std::chrono::milliseconds(power_ms));
  }
  benchmark::AddCustomContext(
      "power", power_ms > 0 ? power_sensors.Describe() : "off (--power_sample_ms=0)");
  benchmark::AddCustomContext("power_sample_ms", absl::StrCat(power_ms));

  PlatformInfo info = AddPlatformContext(options->platform);
  AddMethodologyContext(*options);
  AddRunContext(command_line);
  benchmark::AddCustomContext("ranks", absl::StrCat(mpi_ranks.size));
  benchmark::AddCustomContext("hosts", absl::StrCat(mpi_ranks.hosts));
  if (world != nullptr) benchmark::AddCustomContext("mpi_version", mpi_ranks.library_version);
  // NCCL picks its algorithm and protocol per call unless told; what it was
  // told is part of the conditions a multi-GPU figure was taken under.
  for (const char* name : {"NCCL_ALGO", "NCCL_PROTO"}) {
    const char* value = std::getenv(name);
    benchmark::AddCustomContext(absl::AsciiStrToLower(name), value != nullptr && *value != '\0'
                                                                 ? value
                                                                 : "auto (NCCL's choice)");
  }
  if (rank0)
    std::fprintf(
        stderr, "cnnbench (%s build) on %s (%s, %d CPU(s), %d GPU(s)): preset %s, %zu case(s)%s\n",
        BuildCompilationMode(), info.platform.c_str(), info.cpu_model.c_str(), info.cpu_cores,
        info.gpu_count, options->preset.c_str(), selected_names.size(),
        world != nullptr
            ? absl::StrCat(", ", mpi_ranks.size, " MPI ranks on ", mpi_ranks.hosts, " host(s)")
                  .c_str()
            : "");
  std::unique_ptr<benchmark::BenchmarkReporter> display =
      rank0 ? MakeDisplayReporter([&harness] { return harness.stopped(); })
            : std::make_unique<SilentReporter>();
  const size_t ran = out ? benchmark::RunSpecifiedBenchmarks(display.get(), out->reporter())
                         : benchmark::RunSpecifiedBenchmarks(display.get());
  harness.Release();
  benchmark::Shutdown();
  world.reset();
  if (MpiEnvironment::Launched()) {
    if (absl::StatusOr<MpiEnvironment*> env = MpiEnvironment::Get(); env.ok())
      (*env)->Finalize().IgnoreError();
  }
  if (ran == 0) {
    // The filter was checked above; Google Benchmark disagreeing still must not pass.
    return Fail(kBadUsage, absl::InternalError("no case ran; no output was written"));
  }
  if (out) {
    if (absl::Status written = out->Commit(); !written.ok()) return Fail(kOutputFailed, written);
  }
  if (const int signal = InterruptSignal(); signal != 0) {
    std::fprintf(stderr, "cnnbench: interrupted by %s; %s\n",
                 signal == SIGINT ? "SIGINT" : "SIGTERM",
                 out ? absl::StrCat("the cases finished before it are in ", out_path).c_str()
                     : "the cases finished before it are above");
    return InterruptExitCode(signal);
  }
  return 0;
}

}  // namespace
}  // namespace cnnbench::bench

int main(int argc, char** argv) { return cnnbench::bench::Main(argc, argv); }
