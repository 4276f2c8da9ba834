// What the runner registers: the options (flags and presets) and the case
// families. Every case is registered at run time from data.
#ifndef CNNBENCH_BENCH_SUITE_H_
#define CNNBENCH_BENCH_SUITE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cnnbench::bench {

struct SuiteOptions {
  std::string preset;                   // quick, published, full, tiny
  std::vector<std::string> families;    // train, conv, fc, pool, batchnorm, relu, gemm, allreduce
  std::vector<std::string> models;      // training cases
  std::vector<std::string> kernel_models;  // whose distinct layers become kernel cases
  int max_kernel_shapes = 0;            // per model and family; 0: all
  std::vector<int64_t> batch_sizes;     // empty: each model's default batch size
  std::vector<std::string> precisions;  // fp32, tf32, fp16, bf16
  std::vector<int> gpus;                // 0 = the CPU
  std::vector<std::string> data;        // synthetic, real
  std::string data_dir;
  int64_t image_size = 0;               // 0: each model's own
  int64_t kernel_batch = 0;             // batch of kernel cases; 0: the model's training batch
  int warmup_steps = 10;
  int steps = 100;
  int repetitions = 5;
  double kernel_min_time = 0.5;  // seconds per kernel case repetition
  std::vector<int64_t> gemm_sizes;
  int64_t allreduce_min_bytes = 8;
  int64_t allreduce_max_bytes = int64_t{1} << 30;
  std::vector<int> allreduce_ranks;
  std::string backend = "onednn";  // for CPU cases
  std::string platform;
};

// The preset's defaults for this machine (`gpu_count` GPUs visible).
absl::StatusOr<SuiteOptions> PresetOptions(const std::string& preset, int gpu_count);

// Registers every case `options` asks for; returns their names in order.
absl::StatusOr<std::vector<std::string>> RegisterSuite(const SuiteOptions& options);

// The reason a case is skipped with: out-of-memory failures start with
// "OOM" (tables print them as OOM, as the published page does), whatever
// file:line annotations the error gathered on its way up.
std::string SkipMessage(const absl::Status& status);

// Case families (each registers its cases; `progress` numbers them).
class Progress;
absl::Status RegisterTrainCases(const SuiteOptions& options, Progress& progress);
absl::Status RegisterKernelCases(const SuiteOptions& options, Progress& progress);
absl::Status RegisterGemmCases(const SuiteOptions& options, Progress& progress);
absl::Status RegisterAllReduceCases(const SuiteOptions& options, Progress& progress);

// Numbers the cases as they are registered and prints "[i/N] name" on
// stderr when case i starts, so a long sweep shows where it is.
class Progress {
 public:
  // Returns the case's index; call Announce(index) from the case.
  int Add(const std::string& name);
  void Announce(int index);
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
  std::vector<bool> announced_;
};

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_SUITE_H_
