// //bench:all --help: the suite's flags by group with their defaults, the
// presets, then Google Benchmark's flags.
#ifndef CNNBENCH_BENCH_USAGE_H_
#define CNNBENCH_BENCH_USAGE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

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

// Before anything reads a flag: --help or --helpfull printed (the run
// exits 0), or a command line the one rule for every flag's value refuses
// (CheckCommandLine, bench/cli/flag_read.h: its message on stderr, exit
// status 2). nullopt: the run goes on.
std::optional<int> HelpOrRefusal(int argc, const char* const* argv);

// A status's message as the suite prints it (`cnnbench: <message>`):
// without the source locations it passed through (core/status.h's
// WithoutSourceLocations) unless --verbose or CNNBENCH_VERBOSE=1 asks for
// them; never empty.
std::string UserMessage(const absl::Status& status);

// Prints the suite's help, then Google Benchmark's, on stdout; `full` adds
// the flags neither defines (Abseil's own: --flagfile, --fromenv, ...).
// The caller exits 0.
void PrintHelp(bool full = false);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_USAGE_H_
