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

// The one-line usage: how the suite is run, with every preset
// (kPresetNames). --help's first line and Abseil's usage message.
std::string UsageLine();

// True when argv asks for help (--help, -h, -help, --helpshort, --helpfull).
bool WantsHelp(int argc, const char* const* argv);
// True when it asks for every flag (--helpfull).
bool WantsFullHelp(int argc, const char* const* argv);

// Prints the suite's help, then Google Benchmark's, on stdout; `full` adds
// the flags neither defines (Abseil's own: --flagfile, --fromenv, ...).
// The caller exits 0.
void PrintHelp(bool full = false);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_USAGE_H_
