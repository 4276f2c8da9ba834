// The kernel family's part of SuiteOptions (bench/suite/suite.h): its
// options, set by the presets and its flags.
#ifndef CNNBENCH_BENCH_CASES_KERNEL_KERNEL_OPTIONS_H_
#define CNNBENCH_BENCH_CASES_KERNEL_KERNEL_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace cnnbench::bench {

// The options of the layer kernel cases (conv, fc, pool, batchnorm, relu)
// and the GEMM cases.
struct KernelCaseOptions {
  std::vector<std::string> models;  // whose distinct layers become kernel cases
  int max_shapes = 0;               // per model and family; 0: all
  int64_t batch = 0;                // batch of kernel cases; 0: the model's training batch
  double min_time = 0.5;            // seconds per kernel and GEMM case repetition
  bool min_time_from_user = false;  // --benchmark_min_time given
  std::vector<int64_t> gemm_sizes;
};

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_CASES_KERNEL_KERNEL_OPTIONS_H_
