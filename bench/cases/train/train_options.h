// The train family's part of SuiteOptions (bench/suite/suite.h): its
// options, set by the presets and its flags.
#ifndef CNNBENCH_BENCH_CASES_TRAIN_TRAIN_OPTIONS_H_
#define CNNBENCH_BENCH_CASES_TRAIN_TRAIN_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cnnbench::bench {

// The options of the train cases (and the grads cases' bucket).
struct TrainCaseOptions {
  std::vector<std::string> models;         // training cases
  std::vector<int64_t> batch_sizes;        // empty: each model's default batch size
  std::vector<int> replicas = {1};         // data-parallel CPU replicas (gpus:0 cases)
  size_t bucket_bytes = size_t{25} << 20;  // gradient all-reduce bucket (train and grads)
  bool overlap = true;                     // all-reduce buckets during backward
  bool fuse_relu = true;                   // TrainOptions::fuse_relu of every train case
  bool conv_relu = true;                   // TrainOptions::conv_relu (the --conv_relu flag)
  // top1/top5_accuracy of the last step's batch (TrainOptions::keep_logits).
  bool accuracy = true;
  int threads_per_replica = 0;    // CPU replicas' OpenMP threads; 0: cores / replicas
  std::vector<std::string> data;  // synthetic, real
  // data:real training: CPU cores given to the input pipeline's decode
  // threads and taken from the compute's OpenMP team (0: the pipeline's one
  // decode thread shares the cores).
  int input_cores = 0;
  int warmup_steps = 10;
  int steps = 100;
};

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_CASES_TRAIN_TRAIN_OPTIONS_H_
