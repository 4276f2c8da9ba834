// GEMM benchmark cases.
#ifndef CNNBENCH_BENCH_GEMM_CASES_H_
#define CNNBENCH_BENCH_GEMM_CASES_H_

#include <cstdint>
#include <vector>

namespace cnnbench::bench {

// gemm/fp32/cpu/gemm:m<S>n<S>k<S> for each size S, through oneDNN's sgemm.
void RegisterGemmCases(const std::vector<int64_t>& sizes);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_GEMM_CASES_H_
