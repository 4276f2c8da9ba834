// The crash handler (core/crash_handler.h): a crashing program prints a
// stack that names the faulting function; unnamed frames get their library
// and offset; SIGTERM keeps the program's own handler.
#include "core/crash_handler.h"

#include <dlfcn.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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

TEST(CrashHandlerTest, UnnamedFramesGetTheirLibraryAndOffset) {
  // An address inside libc (a function's): the line gains "[libc.so.6+0x...]"
  // with the offset from libc's load address.
  void* address = reinterpret_cast<void*>(&std::qsort);
  Dl_info info;
  ASSERT_NE(dladdr(address, &info), 0);
  const uintptr_t offset =
      reinterpret_cast<uintptr_t>(address) - reinterpret_cast<uintptr_t>(info.dli_fbase);
  const std::string line = absl::StrFormat("    @     %p         32  (unknown)\n", address);
  const std::string annotated = AnnotateCrashLine(line);
  EXPECT_TRUE(absl::StrContains(annotated, absl::StrFormat("+0x%x]", offset))) << annotated;
  EXPECT_TRUE(absl::StrContains(annotated, "libc")) << annotated;
  EXPECT_TRUE(absl::EndsWith(annotated, "]\n")) << annotated;
  // Named frames and other lines stay as they are.
  const std::string named = absl::StrFormat("    @     %p         32  qsort\n", address);
  EXPECT_EQ(AnnotateCrashLine(named), named);
  EXPECT_EQ(AnnotateCrashLine("*** SIGSEGV received ***\n"), "*** SIGSEGV received ***\n");
}

}  // namespace
}  // namespace cnnbench
