#include "bench/suite.h"

#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status.h"

namespace cnnbench::bench {

int Progress::Add(const std::string& name) {
  names_.push_back(name);
  announced_.push_back(false);
  return static_cast<int>(names_.size()) - 1;
}

void Progress::Announce(int index) {
  if (announced_[index]) return;
  announced_[index] = true;
  std::fprintf(stderr, "[%d/%zu] %s\n", index + 1, names_.size(), names_[index].c_str());
  std::fflush(stderr);
}

std::string SkipMessage(const absl::Status& status) {
  std::string message(status.message());
  if (IsOutOfMemory(status) && !absl::StartsWith(message, "OOM")) return "OOM: " + message;
  return message;
}

absl::StatusOr<SuiteOptions> PresetOptions(const std::string& preset, int gpu_count) {
  SuiteOptions o;
  o.preset = preset;
  o.precisions = {"fp32"};
  o.data = {"synthetic"};
  o.allreduce_ranks = {2, 4};
  if (preset == "published") {
    // The published page: five models at their batch sizes, 1..N GPUs,
    // synthetic data, 10 warm-up and 100 timed steps, 5 repetitions.
    o.families = {"train"};
    o.models = {"inception3", "resnet50", "resnet152", "alexnet", "vgg16"};
    for (int g = 1; g <= gpu_count; g *= 2) o.gpus.push_back(g);
    if (o.gpus.empty()) o.gpus = {0};
    if (gpu_count > 0) o.precisions = {"fp32", "fp16"};
    return o;
  }
  if (preset == "full") {
    o.families = {"train", "conv", "fc", "pool", "batchnorm", "relu", "gemm", "allreduce"};
    o.models = {"alexnet", "googlenet", "inception3", "inception4", "vgg16", "resnet50",
                "resnet50_v1.5", "resnet101", "resnet152", "mobilenet"};
    o.kernel_models = {"alexnet", "googlenet", "inception3", "vgg16", "resnet50"};
    o.gpus = {0};
    for (int g = 1; g <= gpu_count; g *= 2) o.gpus.push_back(g);
    o.gemm_sizes = {512, 1024, 2048, 4096};
    return o;
  }
  if (preset == "quick") {
    // Fits a small CPU in minutes and still covers several models and every
    // kernel family: short runs, one repetition, a few layers per family.
    o.families = {"train", "conv", "fc", "pool", "batchnorm", "relu", "gemm", "allreduce"};
    // Four of the published page's five models (resnet152 would double the time).
    o.models = {"inception3", "resnet50", "alexnet", "vgg16", "googlenet"};
    o.batch_sizes = {16};
    o.kernel_models = {"resnet50", "alexnet"};
    o.max_kernel_shapes = 3;
    o.kernel_batch = 16;
    o.gpus = {0};
    o.warmup_steps = 2;
    o.steps = 5;
    o.repetitions = 1;
    o.kernel_min_time = 0.2;
    o.gemm_sizes = {256, 1024};
    o.allreduce_max_bytes = int64_t{64} << 20;
    o.allreduce_ranks = {2};
    return o;
  }
  if (preset == "tiny") {
    // For tests: one small model at a small image size, one kernel per family.
    o.families = {"train", "conv", "fc", "pool", "batchnorm", "relu", "gemm", "allreduce"};
    o.models = {"trivial"};
    o.batch_sizes = {2};
    o.kernel_models = {"lenet"};
    o.max_kernel_shapes = 1;
    o.kernel_batch = 2;
    o.gpus = {0};
    o.warmup_steps = 1;
    o.steps = 2;
    o.repetitions = 2;
    o.kernel_min_time = 0.01;
    o.gemm_sizes = {64};
    o.allreduce_max_bytes = 4096;
    o.allreduce_min_bytes = 1024;
    o.allreduce_ranks = {2};
    return o;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown preset '", preset, "' (known: quick, published, full, tiny)"));
}

absl::StatusOr<std::vector<std::string>> RegisterSuite(const SuiteOptions& options) {
  // Lives as long as the registered cases (the whole run).
  static Progress* progress = new Progress();
  auto wants = [&](const char* family) {
    for (const auto& f : options.families)
      if (f == family) return true;
    return false;
  };
  for (const auto& f : options.families) {
    if (f != "train" && f != "conv" && f != "fc" && f != "pool" && f != "batchnorm" &&
        f != "relu" && f != "gemm" && f != "allreduce")
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown case family '", f,
          "' (known: train, conv, fc, pool, batchnorm, relu, gemm, allreduce)"));
  }
  if (wants("train")) RETURN_IF_ERROR(RegisterTrainCases(options, *progress));
  if (wants("conv") || wants("fc") || wants("pool") || wants("batchnorm") || wants("relu"))
    RETURN_IF_ERROR(RegisterKernelCases(options, *progress));
  if (wants("gemm")) RETURN_IF_ERROR(RegisterGemmCases(options, *progress));
  if (wants("allreduce")) RETURN_IF_ERROR(RegisterAllReduceCases(options, *progress));
  return progress->names();
}

}  // namespace cnnbench::bench
