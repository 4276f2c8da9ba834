#include "tests/testing/temp_files.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace cnnbench::test_files {

std::string FreshTempDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name;
  std::error_code error;
  std::filesystem::remove_all(dir, error);
  MakeDirs(dir);
  return dir;
}

void MakeDirs(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) {
    std::fprintf(stderr, "cannot make %s: %s\n", path.c_str(), error.message().c_str());
    std::abort();
  }
}

void WriteLine(const std::string& path, const std::string& text) {
  std::ofstream(path) << text << "\n";
}

}  // namespace cnnbench::test_files
