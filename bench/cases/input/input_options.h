// The input family's part of SuiteOptions (bench/suite/suite.h): its
// options, set by the presets and its flags.
#ifndef CNNBENCH_BENCH_CASES_INPUT_INPUT_OPTIONS_H_
#define CNNBENCH_BENCH_CASES_INPUT_INPUT_OPTIONS_H_

#include <cstdint>
#include <vector>

#include "input/pipeline/pipeline.h"

namespace cnnbench::bench {

// The input cases (and the real-data pipelines of train and infer cases).
struct InputCaseOptions {
  std::vector<int> threads;  // decode threads per case; empty: 1 and every hardware thread
  int64_t batch = 0;         // 0: the first training batch size, else 64
  // A bad record stops a real-data pipeline (kFail) or is counted and left out.
  input::BadRecordPolicy on_bad_record = input::BadRecordPolicy::kFail;
};

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_CASES_INPUT_INPUT_OPTIONS_H_
