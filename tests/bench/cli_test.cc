// //bench:all's command line as a user meets it (bench/cli/): one rule for
// every flag's value (bench/cli/flag_read.h), each bad one the suite's own
// message and exit status 2, never Abseil's; --helpfull as --help; messages
// without source locations unless --verbose. Every run here stops before
// any case (--list, or an error).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/suite/suite.h"
#include "gtest/gtest.h"
#include "tests/testing/suite_paths.h"

namespace cnnbench::bench {
namespace {

using cnnbench::testing::BenchBinary;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs the suite with `args` (shell words); returns its exit status (-1
// when it did not exit normally) and its stdout and stderr in *output.
int RunBench(const std::string& args, std::string* output) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string log = absl::StrCat(tmp ? tmp : "/tmp", "/cli_test.log");
  const int rc = std::system(absl::StrCat(BenchBinary(), " ", args, " > ", log, " 2>&1").c_str());
  *output = ReadFile(log);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// A bad value of every kind: the suite's one-line message naming the flag,
// exit status 2, never Abseil's "Illegal value" (exit 1) nor a value kept
// silently.
void ExpectRefused(const std::string& args, const std::string& expected) {
  std::string output;
  EXPECT_EQ(RunBench(absl::StrCat("--preset=tiny ", args, " --list"), &output), 2) << args << "\n"
                                                                                   << output;
  EXPECT_TRUE(absl::StartsWith(output, "cnnbench: ")) << args << "\n" << output;
  EXPECT_TRUE(absl::StrContains(output, expected)) << args << "\n" << output;
  EXPECT_FALSE(absl::StrContains(output, "Illegal value")) << args << "\n" << output;
  EXPECT_FALSE(absl::StrContains(output, ": \n")) << "an empty reason: " << output;
}

TEST(CliTest, AFlagGivenTwiceIsAnErrorNamingBothValues) {
  std::string output;
  EXPECT_EQ(RunBench("--preset=quick --preset=tiny --list", &output), 2) << output;
  EXPECT_TRUE(absl::StrContains(
      output, "--preset is given twice, as --preset=quick and --preset=tiny: give it once"))
      << output;
  ExpectRefused("--models=lenet --models=trivial",
                "--models is given twice, as --models=lenet and --models=trivial");
  ExpectRefused("--overlap --nooverlap", "--overlap is given twice, as --overlap and --nooverlap");
  // Google Benchmark's flags too (it would keep the last).
  ExpectRefused("--benchmark_repetitions=1 --benchmark_repetitions=2",
                "--benchmark_repetitions is given twice, as --benchmark_repetitions=1 and "
                "--benchmark_repetitions=2");
}

TEST(CliTest, EveryKindOfNumberIsDecimalAndTooLargeSaysTheLimit) {
  // Whole numbers Abseil used to parse itself (exit 1, its own message).
  ExpectRefused("--steps=2147483648",
                "--steps=2147483648: '2147483648' is too large (at most 2147483647)");
  ExpectRefused("--input_batch=99999999999999999999",
                "'99999999999999999999' is too large (at most 9223372036854775807)");
  ExpectRefused("--collective_root=0x1", "--collective_root=0x1: '0x1' is not a whole number");
  // A value-taking flag takes the next word (Abseil's `--steps 5`); last, it has none.
  ExpectRefused("--steps", "--steps=--list: '--list' is not a whole number");
  std::string output;
  EXPECT_EQ(RunBench("--preset=tiny --steps", &output), 2) << output;
  EXPECT_TRUE(absl::StrContains(output, "cnnbench: --steps needs a value")) << output;
  // List items, byte counts, Google Benchmark's numbers: the same rule.
  ExpectRefused("--batch_sizes=0x10", "--batch_sizes=0x10: '0x10' is not a whole number");
  ExpectRefused("--batch_sizes=99999999999999999999",
                "'99999999999999999999' is too large (at most 9223372036854775807)");
  ExpectRefused("--collective_bytes=1,99999999999G",
                "'99999999999G' is too large (at most 8589934591G)");
  ExpectRefused("--benchmark_repetitions=0x2", "'0x2' is not a whole number");
  // Decimals and switches.
  ExpectRefused("--drift_threshold=0x1", "--drift_threshold=0x1: '0x1' is not a decimal number");
  ExpectRefused("--overlap=maybe", "--overlap=maybe: 'maybe' is not true or false");
}

TEST(CliTest, SpacesAroundAValueOrAListItemAreRefusedEverywhere) {
  ExpectRefused("'--batch_sizes= 2'", "--batch_sizes= 2: ' 2' has spaces around it");
  ExpectRefused("'--families=train, infer'", "' infer' has spaces around it");
  ExpectRefused("'--collective_root= 1'", "' 1' has spaces around it");
  ExpectRefused("'--benchmark_filter=gemm '", "'gemm ' has spaces around it");
}

// One type under two names says so in words, not "'fp32' is fp32".
TEST(CliTest, ATypeGivenTwiceUnderTwoNamesSaysSo) {
  ExpectRefused("--families=allreduce --collective_dtypes=fp32,float",
                "'fp32' and 'float' are the same type (fp32;");
}

// --help says 0 is --image_size's default (each model's own size): the
// value is accepted.
TEST(CliTest, ImageSizeZeroIsTheDefaultHelpSays) {
  std::string output;
  ASSERT_EQ(RunBench("--help", &output), 0) << output;
  EXPECT_TRUE(absl::StrContains(output, "--image_size (default: 0)")) << output;
  EXPECT_EQ(RunBench("--preset=tiny --image_size=0 --list", &output), 0) << output;
  ExpectRefused("--image_size=-1", "--image_size=-1");
}

// --helpfull is --help (every preset in its usage line, exit 0) with the
// flags no part of the suite defines.
TEST(CliTest, HelpfullListsEveryPresetAndExitsZero) {
  std::string output;
  EXPECT_EQ(RunBench("--helpfull", &output), 0) << output;
  std::vector<std::string> presets(std::begin(kPresetNames), std::end(kPresetNames));
  EXPECT_TRUE(absl::StrContains(output, absl::StrCat("--preset=", absl::StrJoin(presets, "|"))))
      << output;
  for (const std::string& preset : presets)
    EXPECT_TRUE(absl::StrContains(output, absl::StrCat("\n  ", preset, ": families "))) << preset;
  EXPECT_TRUE(absl::StrContains(output, "Google Benchmark's flags")) << output;
  EXPECT_TRUE(absl::StrContains(output, "\nAbseil's flags:\n  --flagfile")) << output;
}

// A flag error that passed through RETURN_IF_ERROR: its source locations
// for --verbose only.
TEST(CliTest, MessagesCarrySourceLocationsOnlyWithVerbose) {
  const std::string args = "--preset=tiny --families=train --trace_file=/nonexistent_dir/t.json";
  std::string output;
  EXPECT_EQ(RunBench(args, &output), 2) << output;
  EXPECT_TRUE(absl::StartsWith(output, "cnnbench: --trace_file=/nonexistent_dir/t.json: "))
      << output;
  EXPECT_FALSE(absl::StrContains(output, ".cc:")) << output;
  EXPECT_EQ(RunBench(args + " --verbose", &output), 2) << output;
  EXPECT_TRUE(absl::StrContains(output, "bench/cli/suite_flags.cc:")) << output;
}

}  // namespace
}  // namespace cnnbench::bench
