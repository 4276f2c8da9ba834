// A Google Benchmark reporter for tests: keeps the iteration runs (one per
// repetition, aggregates left out) of what RunSpecifiedBenchmarks reports.
#ifndef CNNBENCH_TESTS_BENCH_RECORDER_H_
#define CNNBENCH_TESTS_BENCH_RECORDER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "bench/harness/harness.h"
#include "benchmark/benchmark.h"

namespace cnnbench::bench {

using BenchRun = benchmark::BenchmarkReporter::Run;

class Recorder : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<BenchRun>& runs) override {
    for (const BenchRun& r : runs)
      if (r.run_type == BenchRun::RT_Iteration) iterations.push_back(r);
  }
  std::vector<BenchRun> iterations;  // one per repetition

  // The runs of case `name` (its registered name before "/").
  std::vector<BenchRun> Of(const std::string& name) const {
    std::vector<BenchRun> out;
    for (const BenchRun& r : iterations)
      if (absl::StartsWith(r.benchmark_name(), name + "/")) out.push_back(r);
    return out;
  }
};

// Registers `c` alone on a harness of `timing` (with `stop_check`, when
// given), runs it and returns its iteration runs; the registry is cleared
// before and after.
inline std::vector<BenchRun> RunOneCase(TimedCase c, const TimingSettings& timing,
                                        std::function<bool()> stop_check = nullptr) {
  benchmark::ClearRegisteredBenchmarks();
  const std::string name = c.name;
  Harness harness(timing);
  if (stop_check) harness.SetStopCheck(std::move(stop_check));
  harness.Register(std::move(c));
  Recorder recorder;
  benchmark::RunSpecifiedBenchmarks(&recorder, "^" + name + "/");
  harness.Release();
  benchmark::ClearRegisteredBenchmarks();
  return recorder.iterations;
}

}  // namespace cnnbench::bench

#endif  // CNNBENCH_TESTS_BENCH_RECORDER_H_
