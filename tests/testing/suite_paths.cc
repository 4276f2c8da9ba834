#include "tests/testing/suite_paths.h"

#include <cstdlib>

namespace cnnbench::testing {

std::string RunfilePath(const std::string& relative) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return std::string(srcdir != nullptr ? srcdir : ".") + "/" +
         (workspace != nullptr ? workspace : "cnnbench") + "/" + relative;
}

std::string TempPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name;
}

}  // namespace cnnbench::testing
