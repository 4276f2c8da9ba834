#include "bench/harness/interrupt.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>

namespace cnnbench::bench {
namespace {

// The first signal and its sender (a process that called kill; 0 for the
// terminal or the kernel), set once and as one word: a process-directed
// signal may run the handler on any thread, so two signals sent at once
// (GNU timeout's to the child and to its group) can be handled at the same
// time on two threads, and each must see both fields of the first or
// neither. A lock-free atomic is async-signal-safe.
std::atomic<uint64_t> first_request{0};
static_assert(std::atomic<uint64_t>::is_always_lock_free);
uint64_t Pack(int signal, pid_t sender) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(sender)) << 8) |
         static_cast<uint64_t>(signal & 0xff);
}
char remove_path[4096] = {};  // read by the handler: set before it is installed
char snapshot_path[4096] = {};
char publish_target[4096] = {};
volatile std::sig_atomic_t parent_is_same_request = 0;

void CopyPath(const char* path, char (&to)[4096]) {
  size_t n = 0;
  if (path != nullptr)
    for (; path[n] != '\0' && n + 1 < sizeof(to); ++n) to[n] = path[n];
  to[n] = '\0';
}

// The process that sent the signal with kill(), sigqueue() or tgkill()
// (user codes are <= 0), else 0: Ctrl-C from the terminal comes from the
// kernel.
pid_t Sender(const siginfo_t* info) {
  return info != nullptr && info->si_code <= 0 ? info->si_pid : 0;
}

void RecordSignal(int signal, siginfo_t* info, void*) {
  const pid_t sender = Sender(info);
  uint64_t first = 0;
  if (first_request.compare_exchange_strong(first, Pack(signal, sender))) {
    // The first: the finished cases onto the target now, before a launcher's
    // kill (rename is async-signal-safe; no snapshot yet: nothing finished,
    // the target stays as it was).
    if (snapshot_path[0] != '\0' && publish_target[0] != '\0')
      ::rename(snapshot_path, publish_target);
    static const char kMessage[] =
        "\ncnnbench: interrupted: stopping before the next iteration and writing the finished "
        "cases (a second signal ends the process at once)\n";
    // write() is async-signal-safe; nothing to do if it fails.
    if (::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1) < 0) return;
    return;
  }
  const pid_t first_sender = static_cast<pid_t>(static_cast<uint32_t>(first >> 8));
  const bool from_parent = parent_is_same_request != 0 && sender != 0 && sender == ::getppid();
  if (sender != 0 && (sender == first_sender || from_parent)) {
    // One request from one sender, however delivered: GNU timeout signals
    // the child and then its process group, mpirun forwards and repeats.
    static const char kSame[] =
        "cnnbench: the same sender's signal again: still stopping after this iteration\n";
    if (::write(STDERR_FILENO, kSame, sizeof(kSame) - 1) < 0) return;
    return;
  }
  // The second: remove the unfinished output, then end as the signal would
  // (unlink, signal and raise are async-signal-safe).
  if (remove_path[0] != '\0') ::unlink(remove_path);
  if (snapshot_path[0] != '\0') ::unlink(snapshot_path);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

void InstallInterruptHandlers() {
  struct sigaction action = {};
  action.sa_sigaction = RecordSignal;
  // On one thread neither handler runs inside the other; on two at once,
  // the one atomic word decides which signal was first.
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  // A second Ctrl-C kills a run that does not stop soon enough (the handler
  // restores the default action and raises it again).
  action.sa_flags = SA_RESTART | SA_SIGINFO;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int InterruptSignal() { return static_cast<int>(first_request.load() & 0xff); }

void RemoveOnSecondSignal(const char* path) { CopyPath(path, remove_path); }

void PublishOnFirstSignal(const char* snapshot, const char* target) {
  CopyPath(snapshot, snapshot_path);
  CopyPath(target, publish_target);
}

void TreatParentSignalsAsOneRequest(bool on) { parent_is_same_request = on ? 1 : 0; }

}  // namespace cnnbench::bench
