#include "bench/interrupt.h"

#include <unistd.h>

#include <csignal>

namespace cnnbench::bench {
namespace {

volatile std::sig_atomic_t received_signal = 0;

void RecordSignal(int signal) {
  received_signal = signal;
  static const char kMessage[] =
      "\ncnnbench: interrupted: stopping before the next iteration and writing the finished "
      "cases (a second signal ends the process at once)\n";
  // write() is async-signal-safe; nothing to do if it fails.
  if (::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1) < 0) return;
}

}  // namespace

void InstallInterruptHandlers() {
  struct sigaction action = {};
  action.sa_handler = RecordSignal;
  sigemptyset(&action.sa_mask);
  // Once only: a second Ctrl-C kills a run that does not stop soon enough.
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int InterruptSignal() { return received_signal; }

}  // namespace cnnbench::bench
