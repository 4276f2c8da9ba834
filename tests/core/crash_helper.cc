// Crashes on purpose for crash_handler_test: `crash_helper segv` dereferences
// null inside CnnbenchCrashHere; `crash_helper abort` calls abort() there;
// `crash_helper term` waits for SIGTERM (whose handler must stay the one
// installed before the crash handler).
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include "core/crash_handler.h"

namespace {

volatile int* volatile null_pointer = nullptr;

void OnTerm(int) {
  const char text[] = "crash_helper: SIGTERM handled by the program\n";
  (void)!write(STDERR_FILENO, text, sizeof(text) - 1);
  _exit(42);
}

}  // namespace

extern "C" __attribute__((noinline)) void CnnbenchCrashHere(const char* how) {
  if (std::strcmp(how, "abort") == 0) std::abort();
  *null_pointer = 1;  // SIGSEGV
}

int main(int argc, char** argv) {
  std::signal(SIGTERM, OnTerm);
  cnnbench::InstallCrashHandler(argv[0]);
  const char* how = argc > 1 ? argv[1] : "segv";
  if (std::strcmp(how, "term") == 0) {
    std::raise(SIGTERM);
    return 1;
  }
  CnnbenchCrashHere(how);
  std::printf("not crashed\n");
  return 0;
}
