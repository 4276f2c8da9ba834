#include "bench/interrupt.h"

#include <unistd.h>

#include <csignal>

namespace cnnbench::bench {
namespace {

volatile std::sig_atomic_t received_signal = 0;
char remove_path[4096] = {};  // read by the handler: set before it is installed

void RecordSignal(int signal) {
  if (received_signal != 0) {
    // The second: remove the unfinished output, then end as the signal would
    // (unlink, signal and raise are async-signal-safe).
    if (remove_path[0] != '\0') ::unlink(remove_path);
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
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
  // A second Ctrl-C kills a run that does not stop soon enough (the handler
  // restores the default action and raises it again).
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int InterruptSignal() { return received_signal; }

void RemoveOnSecondSignal(const char* path) {
  size_t n = 0;
  if (path != nullptr)
    for (; path[n] != '\0' && n + 1 < sizeof(remove_path); ++n) remove_path[n] = path[n];
  remove_path[n] = '\0';
}

}  // namespace cnnbench::bench
