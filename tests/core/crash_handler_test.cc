// The crash handler (core/crash_handler.h): a crashing program prints a
// stack that names the faulting function, every frame with its object and
// offset; SIGTERM keeps the program's own handler.
#include "core/crash_handler.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace cnnbench {
namespace {

std::string Helper() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return absl::StrCat(srcdir ? srcdir : ".", "/", workspace ? workspace : "cnnbench",
                      "/tests/core/crash_helper");
}

// Runs the helper; its stderr in *output, its wait status returned.
int RunHelper(const std::string& how, std::string* output) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string log = absl::StrCat(tmp ? tmp : "/tmp", "/crash_", how, ".log");
  const int status = std::system(absl::StrCat(Helper(), " ", how, " 2> ", log).c_str());
  std::ifstream in(log);
  output->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return status;
}

TEST(CrashHandlerTest, ANullDereferencePrintsAStackNamingTheFunction) {
  std::string output;
  RunHelper("segv", &output);
  EXPECT_TRUE(absl::StrContains(output, "SIGSEGV")) << output;
  EXPECT_TRUE(absl::StrContains(output, "CnnbenchCrashHere")) << output;
  EXPECT_TRUE(absl::StrContains(output, "main")) << output;
}

TEST(CrashHandlerTest, AnAbortPrintsAStackToo) {
  std::string output;
  RunHelper("abort", &output);
  EXPECT_TRUE(absl::StrContains(output, "SIGABRT")) << output;
  EXPECT_TRUE(absl::StrContains(output, "CnnbenchCrashHere")) << output;
}

TEST(CrashHandlerTest, SigtermKeepsTheProgramsOwnHandler) {
  std::string output;
  const int status = RunHelper("term", &output);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 42) << output;
  EXPECT_TRUE(absl::StrContains(output, "SIGTERM handled by the program")) << output;
  EXPECT_FALSE(absl::StrContains(output, "*** SIGTERM")) << output;
}

TEST(CrashHandlerTest, EveryFrameGetsItsObjectAndOffset) {
  std::string output;
  RunHelper("segv", &output);
  // The unwinder's walk: the faulting function in the program, and libc's
  // start-up frames, each with the object and the offset into it.
  EXPECT_TRUE(absl::StrContains(output, "*** backtrace")) << output;
  EXPECT_TRUE(absl::StrContains(output, "CnnbenchCrashHere [crash_helper+0x")) << output;
  EXPECT_TRUE(absl::StrContains(output, "[libc.so.6+0x")) << output;
}

}  // namespace
}  // namespace cnnbench
