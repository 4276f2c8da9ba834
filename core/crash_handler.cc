#include "core/crash_handler.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/debugging/failure_signal_handler.h"
#include "absl/debugging/symbolize.h"

namespace cnnbench {
namespace {

// Writes " [name+0xoff]" for the object holding `address` into `out`
// (empty when the loader does not know the address). No allocation: it
// runs inside the signal handler, perhaps after the heap was corrupted.
void Locate(uintptr_t address, char* out, size_t size) {
  out[0] = '\0';
  Dl_info info;
  if (address == 0 || dladdr(reinterpret_cast<void*>(address), &info) == 0 ||
      info.dli_fname == nullptr)
    return;
  const char* name = info.dli_fname;
  const char* slash = std::strrchr(name, '/');
  if (slash != nullptr) name = slash + 1;
  if (*name == '\0') name = "program";
  std::snprintf(out, size, " [%s+0x%" PRIxPTR "]", name,
                address - reinterpret_cast<uintptr_t>(info.dli_fbase));
}

void WriteAll(const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = write(STDERR_FILENO, data, size);
    if (n <= 0) return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void WriteText(const char* text) { WriteAll(text, std::strlen(text)); }

// Abseil has written its report to stderr already (its frame walk needs
// frame pointers, which optimised code and vendor libraries lack); at its
// final flush (nullptr) this adds a walk by the unwinder (.eh_frame, as a
// debugger does), each frame with its name where the symbols say it and
// its object and offset always.
void Writer(const char* text) {
  if (text != nullptr) return;
  void* frames[64];
  const int count = backtrace(frames, 64);
  WriteText("*** backtrace (resolve here: addr2line -f -C -e <unstripped object> <offset>) ***\n");
  for (int i = 0; i < count; ++i) {
    const uintptr_t pc = reinterpret_cast<uintptr_t>(frames[i]);
    char name[256] = "(unknown)";
    // A return address points after the call: look up the byte before it.
    if (!absl::Symbolize(reinterpret_cast<void*>(i == 0 ? pc : pc - 1), name, sizeof(name))) {
      Dl_info info;
      if (dladdr(frames[i], &info) != 0 && info.dli_sname != nullptr)
        std::snprintf(name, sizeof(name), "%s", info.dli_sname);
    }
    char where[320];
    Locate(pc, where, sizeof(where));
    char line[640];
    std::snprintf(line, sizeof(line), "    #%-2d 0x%" PRIxPTR "  %s%s\n", i, pc, name, where);
    WriteText(line);
  }
}

}  // namespace

void InstallCrashHandler(const char* argv0) {
  static bool installed = false;
  if (installed) return;
  installed = true;
#if defined(__SANITIZE_ADDRESS__)
  return;  // AddressSanitizer's own SIGSEGV report says more
#endif
  if (argv0 != nullptr) absl::InitializeSymbolizer(argv0);
  // The unwinder loads on first use: not inside a signal handler.
  void* warm[2];
  backtrace(warm, 2);
  // Abseil also takes SIGTERM and SIGTRAP: give those back as they were.
  struct sigaction term {}, trap {};
  sigaction(SIGTERM, nullptr, &term);
  sigaction(SIGTRAP, nullptr, &trap);
  absl::FailureSignalHandlerOptions options;
  options.writerfn = Writer;
  // Symbolizing a large library's frames takes longer than Abseil's 3 s.
  options.alarm_on_failure_secs = 20;
  absl::InstallFailureSignalHandler(options);
  sigaction(SIGTERM, &term, nullptr);
  sigaction(SIGTRAP, &trap, nullptr);
}

}  // namespace cnnbench
