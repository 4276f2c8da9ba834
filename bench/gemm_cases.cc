// GEMM cases on the CPU through oneDNN's sgemm: a square sweep.
#include "bench/gemm_cases.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "dnnl.h"

namespace cnnbench::bench {
namespace {

void RunSgemm(benchmark::State& state, int64_t m, int64_t n, int64_t k) {
  std::vector<float> a(m * k), b(k * n), c(m * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) - 2;
  // Check one element against a plain dot product before timing.
  if (dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n) !=
      dnnl_success) {
    state.SkipWithError("dnnl_sgemm failed");
    return;
  }
  double expect = 0;
  for (int64_t p = 0; p < k; ++p) expect += a[(m - 1) * k + p] * b[p * n + (n - 1)];
  if (c[(m - 1) * n + (n - 1)] != static_cast<float>(expect)) {
    state.SkipWithError(absl::StrCat("dnnl_sgemm result mismatch: ", c[(m - 1) * n + n - 1],
                                     " vs ", expect)
                            .c_str());
    return;
  }
  for (auto _ : state) {
    dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["flops"] = benchmark::Counter(2.0 * m * n * k,
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel("onednn sgemm");
}

}  // namespace

void RegisterGemmCases(const std::vector<int64_t>& sizes) {
  for (int64_t s : sizes) {
    benchmark::RegisterBenchmark(
        absl::StrCat("gemm/fp32/cpu/gemm:m", s, "n", s, "k", s).c_str(),
        [s](benchmark::State& state) { RunSgemm(state, s, s, s); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
}

}  // namespace cnnbench::bench
