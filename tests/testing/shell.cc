#include "tests/testing/shell.h"

#include <sys/wait.h>

#include <cstdio>

namespace cnnbench::testing {

std::string CaptureOutput(const std::string& command, int* exit_code) {
  std::string text;
  if (exit_code != nullptr) *exit_code = -1;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return text;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) text += buffer;
  const int status = ::pclose(pipe);
  if (exit_code != nullptr && WIFEXITED(status)) *exit_code = WEXITSTATUS(status);
  return text;
}

}  // namespace cnnbench::testing
