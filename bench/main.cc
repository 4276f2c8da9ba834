// //bench:all: registers the suite that fits this machine (or what the flags
// ask for), adds the platform and methodology to the JSON context, and runs
// Google Benchmark. Its --benchmark_* flags work as it documents them; the
// timing ones (repetitions, min_time) are read here too, because every case
// states its own timing settings (docs/benchmarks.md says which flag governs
// which family).
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/context.h"
#include "bench/harness.h"
#include "bench/names.h"
#include "bench/suite.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/invocation.h"

ABSL_FLAG(std::string, preset, "",
          "quick | published | full | tiny (default: published with a GPU, quick without)");
ABSL_FLAG(std::string, families, "",
          absl::StrCat("case families: ", cnnbench::bench::RegisteredFamilyList()));
ABSL_FLAG(std::string, models, "", "models for training cases, e.g. resnet50,vgg16");
ABSL_FLAG(std::string, kernel_models, "", "models whose distinct layers become kernel cases");
ABSL_FLAG(std::string, batch_sizes, "", "per-device batch sizes (default: each model's own)");
ABSL_FLAG(std::string, precisions, "", "fp32,tf32,fp16,bf16");
ABSL_FLAG(std::string, gpus, "", "GPU counts, e.g. 1,2,4,8 (0 = the CPU)");
ABSL_FLAG(std::string, data, "", "synthetic,real");
ABSL_FLAG(std::string, data_dir, "", "ImageNet TFRecords or an image folder for --data=real");
ABSL_FLAG(std::string, platform, "", "short platform name for reports (default: from the hardware)");
ABSL_FLAG(int, steps, -1,
          "timed steps per repetition of a training case (--benchmark_min_time does not "
          "apply to them)");
ABSL_FLAG(int, warmup_steps, -1, "untimed steps before a training case");
ABSL_FLAG(int, repetitions, -1,
          "repetitions of every case (aggregates: mean, median, stddev, cv); the same as "
          "--benchmark_repetitions");
ABSL_FLAG(int, image_size, 0, "override every model's image size");
ABSL_FLAG(int, kernel_batch, -1, "batch of kernel cases (0: each model's default batch)");
ABSL_FLAG(int, max_kernel_shapes, -1, "distinct layers per model and kernel family (0: all)");
ABSL_FLAG(std::string, backend, "", "CPU backend: onednn (default) or reference");
ABSL_FLAG(bool, list, false, "print the cases that would run and exit");

namespace cnnbench::bench {
namespace {

absl::Status SplitStrings(const std::string& flag, const std::string& value,
                          std::vector<std::string>* out) {
  if (value.empty()) return absl::OkStatus();
  out->clear();
  for (absl::string_view part : absl::StrSplit(value, ',', absl::SkipEmpty()))
    out->push_back(std::string(part));
  if (out->empty()) return absl::InvalidArgumentError(absl::StrCat("--", flag, " is empty"));
  return absl::OkStatus();
}

template <typename T>
absl::Status SplitNumbers(const std::string& flag, const std::string& value, std::vector<T>* out) {
  if (value.empty()) return absl::OkStatus();
  out->clear();
  for (absl::string_view part : absl::StrSplit(value, ',', absl::SkipEmpty())) {
    T v;
    if (!absl::SimpleAtoi(part, &v) || v < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, "=", value, ": '", part, "' is not a number >= 0"));
    out->push_back(v);
  }
  return absl::OkStatus();
}

absl::StatusOr<SuiteOptions> OptionsFromFlags(const BenchmarkTimingFlags& timing) {
  std::string preset = absl::GetFlag(FLAGS_preset);
  const int gpu_count = CudaDeviceCount();
  if (preset.empty()) preset = gpu_count > 0 ? "published" : "quick";
  auto options = PresetOptions(preset, gpu_count);
  if (!options.ok()) return options.status();
  SuiteOptions& o = *options;
  absl::Status s;
  if (!(s = SplitStrings("families", absl::GetFlag(FLAGS_families), &o.families)).ok()) return s;
  if (!(s = SplitStrings("models", absl::GetFlag(FLAGS_models), &o.models)).ok()) return s;
  if (!(s = SplitStrings("kernel_models", absl::GetFlag(FLAGS_kernel_models), &o.kernel_models)).ok()) return s;
  if (!(s = SplitNumbers("batch_sizes", absl::GetFlag(FLAGS_batch_sizes), &o.batch_sizes)).ok()) return s;
  if (!(s = SplitStrings("precisions", absl::GetFlag(FLAGS_precisions), &o.precisions)).ok()) return s;
  if (!(s = SplitNumbers("gpus", absl::GetFlag(FLAGS_gpus), &o.gpus)).ok()) return s;
  if (!(s = SplitStrings("data", absl::GetFlag(FLAGS_data), &o.data)).ok()) return s;
  for (int64_t b : o.batch_sizes)
    if (b == 0) return absl::InvalidArgumentError("--batch_sizes: a batch size must be >= 1");
  for (const auto& d : o.data)
    if (d != "synthetic" && d != "real")
      return absl::InvalidArgumentError(absl::StrCat("--data: unknown '", d, "' (synthetic, real)"));
  for (const auto& p : o.precisions)
    if (absl::Status parsed = ParsePrecision(p).status(); !parsed.ok())
      return absl::InvalidArgumentError(absl::StrCat("--precisions: ", parsed.message()));
  o.data_dir = absl::GetFlag(FLAGS_data_dir);
  if (absl::GetFlag(FLAGS_steps) >= 0) o.steps = absl::GetFlag(FLAGS_steps);
  if (absl::GetFlag(FLAGS_warmup_steps) >= 0) o.warmup_steps = absl::GetFlag(FLAGS_warmup_steps);
  if (o.steps < 1) return absl::InvalidArgumentError("--steps must be >= 1");
  if (!(s = ApplyTimingFlags(timing, absl::GetFlag(FLAGS_repetitions), o)).ok()) return s;
  if (absl::GetFlag(FLAGS_image_size) < 0)
    return absl::InvalidArgumentError("--image_size must be >= 0");
  if (absl::GetFlag(FLAGS_image_size) > 0) o.image_size = absl::GetFlag(FLAGS_image_size);
  if (absl::GetFlag(FLAGS_kernel_batch) >= 0) o.kernel_batch = absl::GetFlag(FLAGS_kernel_batch);
  if (absl::GetFlag(FLAGS_max_kernel_shapes) >= 0)
    o.max_kernel_shapes = absl::GetFlag(FLAGS_max_kernel_shapes);
  if (!absl::GetFlag(FLAGS_backend).empty()) o.backend = absl::GetFlag(FLAGS_backend);
  if (o.backend != "onednn" && o.backend != "reference")
    return absl::InvalidArgumentError(
        absl::StrCat("--backend: unknown '", o.backend, "' (onednn, reference)"));
  o.platform = absl::GetFlag(FLAGS_platform);
  return options;
}

void AddMethodologyContext(const SuiteOptions& o) {
  benchmark::AddCustomContext("preset", o.preset);
  benchmark::AddCustomContext("warmup_steps", absl::StrCat(o.warmup_steps));
  benchmark::AddCustomContext("steps", absl::StrCat(o.steps));
  benchmark::AddCustomContext("repetitions", absl::StrCat(o.repetitions));
  benchmark::AddCustomContext("kernel_min_time", absl::StrCat(o.kernel_min_time));
  benchmark::AddCustomContext("cpu_backend", o.backend);
  benchmark::AddCustomContext("optimizer", "sgd momentum 0.9");
  benchmark::AddCustomContext("data_dir", o.data_dir.empty() ? "none" : o.data_dir);
  benchmark::AddCustomContext(
      "methodology",
      absl::StrCat(o.warmup_steps, " warm-up steps, ", o.steps, " timed steps, ", o.repetitions,
                   " repetition(s), mean reported; kernel and GEMM cases: at least ",
                   o.kernel_min_time, " s per repetition"));
}

int Main(int argc, char** argv) {
  ChangeToInvocationDirectory();  // relative --benchmark_out paths: where the user typed them
  // Before Initialize, which removes them from argv.
  const absl::StatusOr<BenchmarkTimingFlags> timing = ReadBenchmarkTimingFlags(argc, argv);
  if (!timing.ok()) {
    std::fprintf(stderr, "cnnbench: %s\n", std::string(timing.status().message()).c_str());
    return 2;
  }
  benchmark::Initialize(&argc, argv);  // takes the --benchmark_* flags
  absl::SetProgramUsageMessage(
      "cnnbench suite: ./bazelw run //bench:all -- [--preset=quick|published|full] "
      "[--models=...] [--benchmark_filter=REGEX] [--benchmark_out=run.json "
      "--benchmark_out_format=json]");
  absl::ParseCommandLine(argc, argv);  // unknown flags: a clear message and exit 1

  // Both outlive the run: the registered cases point into them.
  const absl::StatusOr<SuiteOptions> options = OptionsFromFlags(*timing);
  if (!options.ok()) {
    std::fprintf(stderr, "cnnbench: %s\n", std::string(options.status().message()).c_str());
    return 2;
  }
  Harness harness(TimingOf(*options));
  auto names = RegisterSuite(*options, harness);
  if (!names.ok()) {
    std::fprintf(stderr, "cnnbench: %s\n", std::string(names.status().message()).c_str());
    return 2;
  }
  if (absl::GetFlag(FLAGS_list)) {
    for (const auto& n : *names) std::printf("%s\n", n.c_str());
    return 0;
  }
  PlatformInfo info = AddPlatformContext(options->platform);
  AddMethodologyContext(*options);
  std::fprintf(stderr, "cnnbench on %s (%s, %d CPU(s), %d GPU(s)): preset %s, %zu case(s)\n",
               info.platform.c_str(), info.cpu_model.c_str(), info.cpu_cores, info.gpu_count,
               options->preset.c_str(), names->size());
  benchmark::RunSpecifiedBenchmarks();
  harness.Release();
  benchmark::Shutdown();
  return 0;
}

}  // namespace
}  // namespace cnnbench::bench

int main(int argc, char** argv) { return cnnbench::bench::Main(argc, argv); }
