// Benchmark case names as DESIGN.md defines them, parsed into their parts:
//   train/<model>/<precision>/<data>/batch:<B>/gpus:<G>
//   conv/<fwd|bwd_data|bwd_filter>/<precision>/<device>/<shape>   (fc/ likewise)
//   pool/<max|avg>/<fwd|bwd>/<precision>/<device>/<shape>
//   batchnorm/<fwd|bwd>/<precision>/<device>/<shape>               (relu/ likewise)
//   gemm/<precision>/<device>/<shape>
//   allreduce/<impl>/<dtype>/bytes:<S>/ranks:<N>
//   input/<tfrecord|folder>/<preprocess>/threads:<T>
#ifndef CNNBENCH_TOOLS_REPORT_CASE_NAME_H_
#define CNNBENCH_TOOLS_REPORT_CASE_NAME_H_

#include <cstdint>
#include <string>
#include <tuple>
#include <variant>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cnnbench::report {

struct TrainCase {
  std::string model;      // tf_cnn_benchmarks' name: "resnet50"
  std::string precision;  // fp32, tf32, fp16, bf16
  std::string data;       // synthetic, real
  int batch = 0;          // per GPU
  int gpus = 0;           // 0: the CPU

  auto Tie() const { return std::tie(model, precision, data, batch, gpus); }
  bool operator<(const TrainCase& o) const { return Tie() < o.Tie(); }
  bool operator==(const TrainCase& o) const { return Tie() == o.Tie(); }
};

// Layer kernel and GEMM cases.
struct KernelCase {
  std::string op;       // conv, fc, pool, batchnorm, relu, gemm
  std::string variant;  // conv/fc: fwd, bwd_data, bwd_filter; pool: "max fwd"; gemm: ""
  std::string precision;
  std::string device;
  std::string shape;  // the descriptor's canonical string

  auto Tie() const { return std::tie(op, variant, precision, device, shape); }
  bool operator<(const KernelCase& o) const { return Tie() < o.Tie(); }
  bool operator==(const KernelCase& o) const { return Tie() == o.Tie(); }
};

struct AllReduceCase {
  std::string impl;  // nccl, mpi, local
  std::string dtype;
  int64_t bytes = 0;
  int ranks = 0;

  auto Tie() const { return std::tie(impl, dtype, bytes, ranks); }
  bool operator<(const AllReduceCase& o) const { return Tie() < o.Tie(); }
  bool operator==(const AllReduceCase& o) const { return Tie() == o.Tie(); }
};

struct InputCase {
  std::string source;  // tfrecord, folder
  std::string preprocess;
  int threads = 0;

  auto Tie() const { return std::tie(source, preprocess, threads); }
  bool operator<(const InputCase& o) const { return Tie() < o.Tie(); }
  bool operator==(const InputCase& o) const { return Tie() == o.Tie(); }
};

using CaseName = std::variant<TrainCase, KernelCase, AllReduceCase, InputCase>;

// Parses a name as Google Benchmark writes it: the suffixes it appends
// ("/real_time", "/manual_time", "/iterations:N", "/repeats:N",
// "/threads:N", "/min_time:X", ...) are dropped. The error says which part
// does not follow the grammar (callers add the file and entry).
absl::StatusOr<CaseName> ParseCaseName(absl::string_view name);

// The canonical name again, without suffixes: the key dashboards and
// comparisons use.
std::string CanonicalName(const CaseName& name);

// Precisions in the order tables show them; unknown ones sort last.
int PrecisionRank(absl::string_view precision);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_CASE_NAME_H_
