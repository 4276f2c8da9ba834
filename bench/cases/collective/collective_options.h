// The collective family's part of SuiteOptions (bench/suite/suite.h): its
// options, set by the presets and its flags.
#ifndef CNNBENCH_BENCH_CASES_COLLECTIVE_COLLECTIVE_OPTIONS_H_
#define CNNBENCH_BENCH_CASES_COLLECTIVE_COLLECTIVE_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace cnnbench::bench {

// The options of the collective cases: the size sweep (nccl-tests' -b, -e,
// -f), rank counts, types (-d), reductions (-o), root (-r), and the untimed
// and timed calls per variant (-w and -n; see docs/benchmarks.md for how
// their defaults compare). The grads cases share the ranks and iterations.
struct CollectiveCaseOptions {
  int64_t min_bytes = 8;
  int64_t max_bytes = int64_t{1} << 30;
  int factor = 2;
  std::vector<int> ranks;
  std::vector<std::string> dtypes = {"fp32"};  // canonical names
  std::vector<std::string> ops = {"sum"};      // ReduceOpName's
  int root = 0;
  int warmup = 5;
  int iters = 20;
  bool graph = false;  // nccl cases replay each timed loop as a CUDA graph (nccl-tests' -G)
};

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_CASES_COLLECTIVE_COLLECTIVE_OPTIONS_H_
