// The project's GoogleTest main: a crash prints a stack naming the library
// and offset of each frame (core/crash_handler.h) rather than dying silent,
// and `--verbose` (or CNNBENCH_VERBOSE=1) turns the compile log on.
#include <cstring>

#include "core/compile_log.h"
#include "core/crash_handler.h"
#include "gtest/gtest.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  cnnbench::InstallCrashHandler(argv[0]);
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--verbose") == 0) cnnbench::SetCompileLog(true);
  return RUN_ALL_TESTS();
}
