// //bench:onednn_overhead as a user meets it: bf16 where oneDNN cannot run
// it (ONEDNN_MAX_CPU_ISA=AVX2 caps any CPU below avx512_bf16) is refused
// saying why, before anything is measured; --help lists the program's own
// flags; errors carry no status code or source location; the default
// timing follows what is timed (the plan it prints), and passes that were
// not measured leave the target unjudged. No assertion on a timing.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace cnnbench::bench {
namespace {

struct ToolRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs the binary with `env` (VAR=value ...) in front and `args`.
ToolRun RunTool(const std::string& env, const std::string& args) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string binary = absl::StrCat(srcdir ? srcdir : ".", "/",
                                          workspace ? workspace : "cnnbench", "/bench/onednn_overhead");
  const std::string log = absl::StrCat(tmp ? tmp : "/tmp", "/onednn_overhead.log");
  const int rc =
      std::system(absl::StrCat("env ", env, " ", binary, " ", args, " >", log, " 2>&1").c_str());
  std::ifstream in(log);
  ToolRun run;
  run.exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  run.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return run;
}

// Not a status code's name, not a file:line.
void ExpectPlain(const std::string& output) {
  for (const char* noise : {"UNIMPLEMENTED", "INVALID_ARGUMENT", "NOT_FOUND", ".cc:"})
    EXPECT_FALSE(absl::StrContains(output, noise)) << noise << " in:\n" << output;
}

TEST(OneDnnOverheadTest, Bf16WhereOneDnnCannotRunItIsRefusedSayingWhy) {
  const ToolRun run = RunTool("ONEDNN_MAX_CPU_ISA=AVX2", "--precision=fp32,bf16");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output,
                                "onednn_overhead: --precision=bf16: bf16 is unsupported here: "))
      << run.output;
  // The cap on a CPU with avx512_bf16, or the CPU itself.
  EXPECT_TRUE(
      absl::StrContains(run.output, "oneDNN is capped below avx512_bf16 (ONEDNN_MAX_CPU_ISA=AVX2)") ||
      absl::StrContains(run.output, "this CPU lacks avx512_bf16"))
      << run.output;
  EXPECT_FALSE(absl::StrContains(run.output, "target")) << run.output;
  EXPECT_FALSE(absl::StrContains(run.output, "timing ")) << "it measured:\n" << run.output;
  ExpectPlain(run.output);
}

TEST(OneDnnOverheadTest, HelpListsItsOwnFlags) {
  const ToolRun run = RunTool("", "--help");
  for (const char* flag : {"--model", "--batch", "--precision", "--benchmark_repetitions"})
    EXPECT_TRUE(absl::StrContains(run.output, flag)) << flag << " not in:\n" << run.output;
}

TEST(OneDnnOverheadTest, BadFlagsArePlainErrors) {
  ToolRun run = RunTool("", "--precision=fp8");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, "onednn_overhead: --precision=fp8: fp32 or bf16"))
      << run.output;
  ExpectPlain(run.output);
  run = RunTool("", "--model=no_such_model");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, "onednn_overhead: unknown model 'no_such_model'"))
      << run.output;
  ExpectPlain(run.output);
}

// A model's shapes run 3 repetitions by default (the fixed two, 10 of 1 s):
// the plan says so, and each pass's row counts them. A --benchmark_*
// flag given wins over the default.
TEST(OneDnnOverheadTest, TheDefaultTimingFollowsWhatIsTimed) {
  ToolRun run = RunTool("", "--model=lenet --batch=1 --benchmark_min_time=0.001");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output,
                                "timing 2 shapes x 3 passes x 3 cases (ours, direct, paired) = 18 "
                                "cases, 3 repetitions of at least 0.001 s (--benchmark_min_time)"))
      << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, " 3/3/3\n")) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, "\ntarget ")) << run.output;
  // The fixed shapes, none timed (the filter matches none): the plan's
  // default, and a target left unjudged, not "NOT met".
  run = RunTool("", "--benchmark_filter=^$");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output,
                                "10 repetitions of at least 1 s each: at least 180.0 s"))
      << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, "target not judged: 6 of 6 passes were not measured"))
      << run.output;
  EXPECT_FALSE(absl::StrContains(run.output, "NOT met")) << run.output;
}

}  // namespace
}  // namespace cnnbench::bench
