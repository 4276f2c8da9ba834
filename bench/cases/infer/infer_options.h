// The infer family's part of SuiteOptions (bench/suite/suite.h): its
// options, set by the presets and its flags.
#ifndef CNNBENCH_BENCH_CASES_INFER_INFER_OPTIONS_H_
#define CNNBENCH_BENCH_CASES_INFER_INFER_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace cnnbench::bench {

// The options of the inference cases (bench/cases/infer/infer_cases.h).
struct InferCaseOptions {
  std::vector<std::string> models;   // empty: the training cases' models
  std::vector<int64_t> batch_sizes;  // empty: 1 and each model's training batch
  int warmup = 10;                   // untimed batches before the timed ones
  int iterations = 200;              // timed batches per repetition
  // The host-to-device copy of each batch (from pinned memory on a GPU)
  // inside the timed interval: end-to-end latency. Off: the batch is
  // resident on the device.
  bool include_copy = false;
  // Batch norms folded into the convolutions before them (InferOptions).
  bool fold_batch_norm = true;
  // ReLUs run as their convolution's epilogue (InferOptions::conv_relu;
  // the same flag sets TrainCaseOptions::conv_relu).
  bool conv_relu = true;
  // Residual adds run in the convolution before them (InferOptions::conv_add).
  bool conv_add = true;
  // Concatenations' inputs written in place (InferOptions::concat_in_place).
  bool concat_in_place = true;
};

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_CASES_INFER_INFER_OPTIONS_H_
