// gemm/<precision>/cpu/gemm:m<M>n<N>k<K>: a square sweep through oneDNN's
// matmul, each result spot-checked against a dot product in the same run.
#include <chrono>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/names.h"
#include "bench/suite.h"
#include "benchmark/benchmark.h"
#include "dnnl.h"
#include "kernels/desc.h"

namespace cnnbench::bench {
namespace {

struct GemmCase {
  std::string name;
  GemmDesc desc;
  int progress_index = 0;
};

void RunGemmCase(benchmark::State& state, GemmCase* c, Progress* progress) {
  progress->Announce(c->progress_index);
  const int64_t m = c->desc.m, n = c->desc.n, k = c->desc.k;
  std::vector<float> a(m * k), b(k * n), out(m * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) - 2;
  auto sgemm = [&] {
    return dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, out.data(), n);
  };
  if (sgemm() != dnnl_success) {
    state.SkipWithError(absl::StrCat("dnnl_sgemm failed on ", c->desc.ToString()).c_str());
    return;
  }
  // Small integers: the fp32 result is exact, so any difference is a bug.
  for (int64_t row : {int64_t{0}, m / 2, m - 1}) {
    double expect = 0;
    for (int64_t p = 0; p < k; ++p) expect += a[row * k + p] * b[p * n + (n - 1)];
    if (out[row * n + n - 1] != static_cast<float>(expect)) {
      state.SkipWithError(absl::StrCat("result check failed at row ", row, ": ",
                                       out[row * n + n - 1], " vs ", expect)
                              .c_str());
      return;
    }
  }
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    sgemm();
    benchmark::ClobberMemory();
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  state.counters["flops"] =
      benchmark::Counter(c->desc.Flops(), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel("onednn sgemm");
}

}  // namespace

absl::Status RegisterGemmCases(const SuiteOptions& options, Progress& progress) {
  for (int64_t s : options.gemm_sizes) {
    for (const std::string& precision : options.precisions) {
      if (precision != "fp32") continue;  // the sweep is fp32 on the CPU
      auto* c = new GemmCase();
      c->desc = GemmDesc{s, s, s, false, false};
      c->name = absl::StrCat("gemm/", precision, "/cpu/", c->desc.ToString());
      c->progress_index = progress.Add(c->name);
      benchmark::RegisterBenchmark(c->name.c_str(), RunGemmCase, c, &progress)
          ->MinTime(options.kernel_min_time)
          ->Repetitions(options.repetitions)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
