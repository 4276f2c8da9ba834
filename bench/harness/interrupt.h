// Ctrl-C (SIGINT) and SIGTERM during a run: the handler only records the
// signal; the harness sees it before the next case or iteration, skips the
// rest, and the run ends normally with the finished cases written and an
// exit status of 128 + the signal (130, 143). A second signal ends the
// process at once (the default action), after removing the output file's
// unfinished temporary (RemoveOnSecondSignal), so nothing half-written stays.
// A second signal from the process that sent the first (kill() from the
// same pid: GNU timeout signalling the child and then its group, mpirun
// forwarding) is the same request and does not count; a second Ctrl-C
// (from the terminal) or a signal from another process does.
#ifndef CNNBENCH_BENCH_INTERRUPT_H_
#define CNNBENCH_BENCH_INTERRUPT_H_

namespace cnnbench::bench {

void InstallInterruptHandlers();
// The signal received (SIGINT or SIGTERM), 0 while none has arrived.
int InterruptSignal();
// The file a second signal removes before the process ends ("" or null:
// none). The path is copied (up to 4095 bytes); set it before the run.
void RemoveOnSecondSignal(const char* path);
// Under an MPI launcher, which answers a signal by signalling every rank
// and, a second later (OpenMPI's odls_base_sigkill_timeout), killing them:
// the first signal renames `snapshot` (the finished cases, a complete file
// rewritten as each case finishes: ResultFile::KeepSnapshots) onto `target`
// at once, so the finished cases survive the kill; the run's own end
// replaces it if it gets there. Paths are copied (up to 4095 bytes each);
// set them before the run; null or "": none.
void PublishOnFirstSignal(const char* snapshot, const char* target);
// Under an MPI launcher: a signal from the parent (mpirun, or its daemon)
// after a first one is the launcher following up the same request (it
// passes the user's signal on as SIGTERM to every rank), never a second.
void TreatParentSignalsAsOneRequest(bool on);
// The exit status that says the run was interrupted by `signal`.
inline int InterruptExitCode(int signal) { return 128 + signal; }

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_INTERRUPT_H_
