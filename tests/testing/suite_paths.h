// Where the tests that run //bench:all as a program find it and put their
// files: the binary in the test's runfiles, and a path under the test's
// temporary directory.
#ifndef CNNBENCH_TESTS_TESTING_SUITE_PATHS_H_
#define CNNBENCH_TESTS_TESTING_SUITE_PATHS_H_

#include <string>

namespace cnnbench::testing {

// $TEST_SRCDIR/$TEST_WORKSPACE/<relative> (./cnnbench/<relative> outside Bazel).
std::string RunfilePath(const std::string& relative);
// The suite's binary (a test's data: //bench:all).
inline std::string BenchBinary() { return RunfilePath("bench/all"); }
// $TEST_TMPDIR/<name> (/tmp/<name> outside Bazel); nothing is made.
std::string TempPath(const std::string& name);

}  // namespace cnnbench::testing

#endif  // CNNBENCH_TESTS_TESTING_SUITE_PATHS_H_
