// The bandwidth family's part of SuiteOptions (bench/suite/suite.h): its
// options, set by the presets and its flags.
#ifndef CNNBENCH_BENCH_CASES_BANDWIDTH_BANDWIDTH_OPTIONS_H_
#define CNNBENCH_BENCH_CASES_BANDWIDTH_BANDWIDTH_OPTIONS_H_

#include <cstdint>
#include <vector>

namespace cnnbench::bench {

// The bandwidth cases: array sizes (STREAM asks for at least 4x the
// last-level cache) and host thread counts (empty: 1, 2, 4, ... and the
// default OpenMP team).
struct BandwidthCaseOptions {
  std::vector<int64_t> bytes = {int64_t{64} << 20};
  std::vector<int> threads;
};

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_CASES_BANDWIDTH_BANDWIDTH_OPTIONS_H_
