// //bench:all: registers the suite's cases, adds the platform to the JSON
// context, and runs Google Benchmark (all --benchmark_* flags work).
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "bench/context.h"
#include "bench/gemm_cases.h"
#include "benchmark/benchmark.h"

ABSL_FLAG(std::string, platform, "",
          "short platform name for reports (default: derived from the GPUs or the CPU)");

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // takes the --benchmark_* flags
  absl::SetProgramUsageMessage(
      "cnnbench suite. Flags: --platform=NAME plus Google Benchmark's --benchmark_* flags.");
  absl::ParseCommandLine(argc, argv);  // rejects unknown flags with a clear message

  cnnbench::PlatformInfo info = cnnbench::bench::AddPlatformContext(absl::GetFlag(FLAGS_platform));
  std::fprintf(stderr, "cnnbench on %s: %s, %d CPU(s), %d GPU(s)\n", info.platform.c_str(),
               info.cpu_model.c_str(), info.cpu_cores, info.gpu_count);

  cnnbench::bench::RegisterGemmCases({256, 512, 1024});
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
