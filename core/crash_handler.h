// A stack trace on stderr when the process crashes (SIGSEGV, SIGBUS, SIGILL,
// SIGFPE, SIGABRT), so a crash inside a library on a machine we cannot log
// into still says where it happened. Abseil's failure signal handler
// prints the signal, the faulting address and its own frame walk; then a
// walk by the unwinder follows (it needs no frame pointers), one frame a
// line, each named where the symbols say and always with its object and
// the offset into it, `[libcudnn_engines_precompiled.so.9+0x1a2b3c]` (the
// device bundle's programs are stripped), which resolves against the
// unstripped build here:
//
//   addr2line -f -C -e bazel-bin/bench/all 0x1a2b3c
//
// SIGINT and SIGTERM keep whatever handler they had (bench/harness/interrupt.cc's).
// The signal is then raised again with its default action, so the exit
// status stays 128 + the signal.
#ifndef CNNBENCH_CORE_CRASH_HANDLER_H_
#define CNNBENCH_CORE_CRASH_HANDLER_H_

namespace cnnbench {

// Installs the handler; `argv0` lets the symbolizer read the program's own
// symbols. Call once, early in main.
void InstallCrashHandler(const char* argv0);

}  // namespace cnnbench

#endif  // CNNBENCH_CORE_CRASH_HANDLER_H_
