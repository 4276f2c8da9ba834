#include "core/invocation.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace cnnbench {

void ChangeToInvocationDirectory() {
  const char* dir = std::getenv("BUILD_WORKING_DIRECTORY");
  if (dir != nullptr && *dir != '\0' && chdir(dir) != 0)
    std::fprintf(stderr, "warning: cannot change to %s; relative paths are from %s\n", dir,
                 std::getenv("PWD") ? std::getenv("PWD") : ".");
}

}  // namespace cnnbench
