// //bench:all --help: the suite's flags by group with their defaults, the
// presets, then Google Benchmark's flags.
#ifndef CNNBENCH_BENCH_USAGE_H_
#define CNNBENCH_BENCH_USAGE_H_

#include <string>
#include <vector>

namespace cnnbench::bench {

struct FlagGroup {
  std::string title;
  std::vector<std::string> flags;  // Abseil flag names
};

// The suite's flags as --help groups them.
const std::vector<FlagGroup>& SuiteFlagGroups();

// True when argv asks for help (--help, -h, -help, --helpshort).
bool WantsHelp(int argc, const char* const* argv);

// Prints the suite's help, then Google Benchmark's, on stdout.
void PrintHelp();

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_USAGE_H_
