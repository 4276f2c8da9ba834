#include "bench/harness/interrupt.h"

#include <semaphore.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cnnbench::bench {
namespace {

// The signals that ask a run to stop (docs/benchmarks.md lists them and why).
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

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
// The stop agreed across an MPI job's ranks (signal, rank), one word too.
std::atomic<uint64_t> agreed_stop{0};
char remove_path[4096] = {};  // read by the handler: set before it is installed
volatile std::sig_atomic_t parent_is_same_request = 0;

// The first-signal watcher: the handler posts (sem_post is
// async-signal-safe), the watcher's thread wakes and does the work.
sem_t watcher_wake;
std::atomic<bool> watcher_on{false};

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

void Say(const char* text, size_t size) {
  // write() is async-signal-safe; nothing to do if it fails.
  if (::write(STDERR_FILENO, text, size) < 0) return;
}

void RecordSignal(int signal, siginfo_t* info, void*) {
  const int saved_errno = errno;
  const pid_t sender = Sender(info);
  uint64_t first = 0;
  if (first_request.compare_exchange_strong(first, Pack(signal, sender))) {
    if (watcher_on.load()) ::sem_post(&watcher_wake);
    static const char kMessage[] =
        "\ncnnbench: interrupted: stopping before the next iteration and writing the finished "
        "cases (a second signal from another sender ends the process at once; the finished "
        "cases stay in the results file)\n";
    Say(kMessage, sizeof(kMessage) - 1);
    errno = saved_errno;
    return;
  }
  const pid_t first_sender = static_cast<pid_t>(static_cast<uint32_t>(first >> 8));
  const bool from_parent = parent_is_same_request != 0 && sender != 0 && sender == ::getppid();
  if (sender != 0 && (sender == first_sender || from_parent)) {
    // One request from one sender, however delivered: GNU timeout signals
    // the child and then its process group, mpirun forwards and repeats.
    static const char kSame[] =
        "cnnbench: the same sender's signal again: still stopping after this iteration\n";
    Say(kSame, sizeof(kSame) - 1);
    errno = saved_errno;
    return;
  }
  // The second: remove the unfinished temporary (the target keeps the
  // cases finished so far), then end as the signal would (unlink, signal
  // and raise are async-signal-safe).
  if (remove_path[0] != '\0') ::unlink(remove_path);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

void InstallInterruptHandlers() {
  struct sigaction action = {};
  action.sa_sigaction = RecordSignal;
  // On one thread no handler runs inside another; on two at once, the one
  // atomic word decides which signal was first.
  sigemptyset(&action.sa_mask);
  for (int s : kSignals) sigaddset(&action.sa_mask, s);
  action.sa_flags = SA_RESTART | SA_SIGINFO;
  for (int s : kSignals) sigaction(s, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

int InterruptSignal() { return static_cast<int>(first_request.load() & 0xff); }

std::string SignalName(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: return absl::StrCat("signal ", signal);
  }
}

void SetAgreedStop(int signal, int rank) {
  agreed_stop.store((static_cast<uint64_t>(static_cast<uint32_t>(rank)) << 8) |
                    static_cast<uint64_t>(signal & 0xff));
}

int StopSignal() {
  if (const int own = InterruptSignal(); own != 0) return own;
  return static_cast<int>(agreed_stop.load() & 0xff);
}

std::string StopDescription() {
  if (const int own = InterruptSignal(); own != 0) return SignalName(own);
  const uint64_t agreed = agreed_stop.load();
  if ((agreed & 0xff) == 0) return "";
  return absl::StrCat(SignalName(static_cast<int>(agreed & 0xff)), " (to rank ",
                      static_cast<int>(static_cast<uint32_t>(agreed >> 8)), ")");
}

void RemoveOnSecondSignal(const char* path) { CopyPath(path, remove_path); }

void TreatParentSignalsAsOneRequest(bool on) { parent_is_same_request = on ? 1 : 0; }

FirstSignalWatcher::FirstSignalWatcher(std::function<void()> on_first_signal) {
  ::sem_init(&watcher_wake, 0, 0);
  watcher_on.store(true);
  thread_ = std::thread([work = std::move(on_first_signal)] {
    while (::sem_wait(&watcher_wake) != 0) {
    }  // EINTR: a signal arrived on this thread; wait on
    // Woken by the first signal, or by the destructor: the work is due
    // whenever a signal has arrived, however the two raced.
    if (InterruptSignal() != 0) work();
  });
  // A signal that came before the watcher: its work is due now.
  if (InterruptSignal() != 0) ::sem_post(&watcher_wake);
}

FirstSignalWatcher::~FirstSignalWatcher() {
  watcher_on.store(false);
  ::sem_post(&watcher_wake);
  thread_.join();
  ::sem_destroy(&watcher_wake);
}

}  // namespace cnnbench::bench
