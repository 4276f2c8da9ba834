// Files for tests that read folders the kernel writes (powercap, cpufreq):
// a fresh folder under the test's temporary directory, and a one-line file.
#ifndef CNNBENCH_TESTS_TESTING_TEMP_FILES_H_
#define CNNBENCH_TESTS_TESTING_TEMP_FILES_H_

#include <string>

namespace cnnbench::test_files {

// TEST_TMPDIR/<name> (or /tmp/<name>), emptied and made; aborts the test
// program when it cannot be made.
std::string FreshTempDir(const std::string& name);
// Makes `path` a folder and its parents.
void MakeDirs(const std::string& path);
// Writes `text` and a newline to `path`, replacing it.
void WriteLine(const std::string& path, const std::string& text);

}  // namespace cnnbench::test_files

#endif  // CNNBENCH_TESTS_TESTING_TEMP_FILES_H_
