// //tools:convergence's messages as a user reads them: the reason without
// the source locations it passed through (core/status.h's
// WithoutSourceLocations), which CNNBENCH_VERBOSE=1 keeps.
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace cnnbench {
namespace {

// Runs the tool with `args` after `env` (shell words); its exit status and
// stderr in *output.
int RunConvergence(const std::string& env, const std::string& args, std::string* output) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string log = absl::StrCat(tmp ? tmp : "/tmp", "/convergence_messages.log");
  const int rc = std::system(absl::StrCat("env ", env, " ", srcdir ? srcdir : ".", "/",
                                          workspace ? workspace : "cnnbench", "/tools/convergence ",
                                          args, " > /dev/null 2> ", log)
                                 .c_str());
  std::ifstream in(log);
  *output = std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(ConvergenceMessagesTest, AnErrorCarriesSourceLocationsOnlyWhenVerbose) {
  std::string output;
  EXPECT_EQ(RunConvergence("-u CNNBENCH_VERBOSE", "--model=no_such_model --steps=1", &output), 2)
      << output;
  EXPECT_TRUE(absl::StartsWith(output, "convergence: unknown model 'no_such_model'")) << output;
  EXPECT_FALSE(absl::StrContains(output, ".cc:")) << output;
  EXPECT_EQ(RunConvergence("CNNBENCH_VERBOSE=1", "--model=no_such_model --steps=1", &output), 2)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "tools/convergence/convergence.cc:")) << output;
}

}  // namespace
}  // namespace cnnbench
