// Running a shell command from a test and keeping what it printed.
#ifndef CNNBENCH_TESTS_TESTING_SHELL_H_
#define CNNBENCH_TESTS_TESTING_SHELL_H_

#include <string>

namespace cnnbench::testing {

// Runs `command` under sh with stderr joined to stdout; returns what it
// printed, and its exit status in `exit_code` when given (-1: it did not
// exit normally, or could not be started).
std::string CaptureOutput(const std::string& command, int* exit_code = nullptr);

}  // namespace cnnbench::testing

#endif  // CNNBENCH_TESTS_TESTING_SHELL_H_
