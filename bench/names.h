// Benchmark case names: built in one place, parsed back, and checked against
// the grammar (docs/benchmarks.md):
//   train/<model>/<precision>/<data>/batch:<B>/gpus:<G>        gpus:0 = the CPU
//   conv/<fwd|bwd_data|bwd_filter>/<precision>/<device>/<shape>
//   fc/<fwd|bwd_data|bwd_filter>/<precision>/<device>/<shape>
//   pool/<max|avg>/<fwd|bwd>/<precision>/<device>/<shape>
//   batchnorm/<fwd|bwd>/<precision>/<device>/<shape>
//   relu/<fwd|bwd>/<precision>/<device>/<shape>
//   gemm/<precision>/<device>/<shape>
//   allreduce/<nccl|mpi|local>/<dtype>/bytes:<S>/ranks:<N>
//   input/<tfrecord|folder>/<preprocess>/threads:<T>
#ifndef CNNBENCH_BENCH_NAMES_H_
#define CNNBENCH_BENCH_NAMES_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cnnbench::bench {

struct CaseName {
  std::string family;  // train, conv, fc, pool, batchnorm, relu, gemm, allreduce, input
  std::string model, precision, data;  // train
  int64_t batch = 0;
  int gpus = 0;
  std::string pass;       // fwd, bwd_data, bwd_filter, bwd
  std::string algorithm;  // pool: max, avg
  std::string device;     // cpu, cuda:0
  std::string shape;      // canonical descriptor string
  std::string impl, dtype;  // allreduce
  int64_t bytes = 0;
  int ranks = 0;
  std::string source, preprocess;  // input
  int threads = 0;

  std::string ToString() const;
};

std::string TrainCaseName(absl::string_view model, absl::string_view precision,
                          absl::string_view data, int64_t batch, int gpus);
std::string KernelCaseName(absl::string_view family, absl::string_view pass,
                           absl::string_view precision, absl::string_view device,
                           absl::string_view shape);  // pool: pass is "max/fwd" etc.
std::string AllReduceCaseName(absl::string_view impl, absl::string_view dtype, int64_t bytes,
                              int ranks);

// Parses a name as Google Benchmark writes it: suffixes it adds
// ("/manual_time", "/real_time", "/iterations:N", "/repeats:N", "/threads:N"
// after ours, "_mean" etc. on aggregates) are removed first. The error says
// which part breaks the grammar; callers add the name (and file, entry).
absl::StatusOr<CaseName> ParseCaseName(absl::string_view name);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_NAMES_H_
