// The signals that stop a run, and one rule for all of them
// (docs/benchmarks.md, "Output file, interrupts and exit status"):
//
// SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 each ask the run to
// stop (a terminal's Ctrl-C and Ctrl-\, a scheduler's or `timeout`'s
// SIGTERM, a dropped ssh session's SIGHUP, a batch system's SIGUSR1/2
// warning before the end). The handler only records the first; the harness
// sees it before the next case or iteration, skips the rest, and the run
// ends normally with the finished cases written and an exit status of 128 +
// the signal. The results file already holds the finished cases before any
// signal (bench/output/result_output.h rewrites it as each case finishes),
// and a thread woken by the first signal (FirstSignalWatcher) rewrites it at
// once saying which signal stopped it, before a launcher's follow-up kill.
//
// A second signal ends the process at once (the default action), after
// removing the output's temporary file (RemoveOnSecondSignal): the target
// keeps the finished cases. A second signal from the process that sent the
// first (kill() from the same pid: GNU timeout signalling the child and then
// its group, mpirun forwarding) is the same request and does not count; a
// second Ctrl-C (from the terminal) or a signal from another process does.
// SIGPIPE is ignored: a console piped into a program that has gone fails
// its writes instead of killing the run before its file is written.
#ifndef CNNBENCH_BENCH_INTERRUPT_H_
#define CNNBENCH_BENCH_INTERRUPT_H_

#include <functional>
#include <string>
#include <thread>

namespace cnnbench::bench {

void InstallInterruptHandlers();
// The first stop signal this process received, 0 while none has arrived.
int InterruptSignal();
// "SIGINT", "SIGHUP", ...; "signal N" for another.
std::string SignalName(int signal);

// Under an MPI job the ranks agree on stopping (Harness::SetStopAgreement):
// the agreed signal and the rank it reached (the highest such rank). A
// rank the signal did not reach stops with the others and says why.
void SetAgreedStop(int signal, int rank);
// This process's signal, else the one agreed across ranks; 0: none.
int StopSignal();
// The stop in words: "SIGTERM", or "SIGINT (to rank 1)" when it reached
// another rank only. "" while there is none.
std::string StopDescription();

// The file a second signal removes before the process ends ("" or null:
// none). The path is copied (up to 4095 bytes); set it before the run.
void RemoveOnSecondSignal(const char* path);
// Under an MPI launcher: a signal from the parent (mpirun, or its daemon)
// after a first one is the launcher following up the same request (it
// passes the user's signal on as SIGTERM to every rank), never a second.
void TreatParentSignalsAsOneRequest(bool on);
// The exit status that says the run was interrupted by `signal`.
inline int InterruptExitCode(int signal) { return 128 + signal; }

// Runs `on_first_signal` once, on a thread of its own (not in the signal
// handler, so it may allocate, lock and write files), as soon as the first
// stop signal arrives. At most one watcher at a time; the destructor stops
// and joins its thread, after the work when a signal has arrived by then
// (a signal arriving later wakes nothing).
class FirstSignalWatcher {
 public:
  explicit FirstSignalWatcher(std::function<void()> on_first_signal);
  ~FirstSignalWatcher();
  FirstSignalWatcher(const FirstSignalWatcher&) = delete;
  FirstSignalWatcher& operator=(const FirstSignalWatcher&) = delete;

 private:
  std::thread thread_;
};

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_INTERRUPT_H_
