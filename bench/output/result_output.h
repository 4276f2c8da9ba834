// Where a run's results go: the --benchmark_out file, written so that a
// run never loses or half-writes one, and the console reporter.
//
// The file reporter keeps the results in memory. A regular file, or a path
// that does not exist yet, is written whole to a temporary file beside it
// (`<target>.cnnbench-<pid>.tmp`) that is renamed into place, so the target
// is only ever replaced by a complete file, never deleted first. That
// happens as each case finishes (the cases so far, a JSON context saying
// `interrupted`: the run had not ended), when a signal asks the run to stop
// (Checkpoint), and at the run's end (Commit). So whatever ends the process
// (a launcher's SIGKILL, the OOM killer, a crash), the target holds every
// case that finished. A pipe or a device is written directly, at the end.
// Every write and the close are checked: a failure is an error with the
// system's reason; a final write that fails saves the results elsewhere
// (rescue_path) and says where.
#ifndef CNNBENCH_BENCH_RESULT_OUTPUT_H_
#define CNNBENCH_BENCH_RESULT_OUTPUT_H_

#include <atomic>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "benchmark/benchmark.h"

namespace cnnbench::bench {

using ContextEntries = std::vector<std::pair<std::string, std::string>>;
// True while reported runs are to be left out (after an interrupt).
using DropCheck = std::function<bool()>;

class ResultFile {
 public:
  // Opens `path` for results in `format` (json, csv, console; Google
  // Benchmark's --benchmark_out_format). A missing folder, a folder given
  // as the file or a denied permission is an error now, before anything runs.
  static absl::StatusOr<std::unique_ptr<ResultFile>> Open(const std::string& path,
                                                          const std::string& format);
  ~ResultFile();  // removes the temporary file

  // The reporter to give benchmark::RunSpecifiedBenchmarks as its file reporter.
  benchmark::BenchmarkReporter* reporter();
  // Runs reported while `drop` returns true are left out of the file.
  void SetDropCheck(DropCheck drop);
  // Entries known only when the run ends (e.g. the load average then, an
  // interrupt); a JSON file's context gets them.
  void SetEndContext(std::function<ContextEntries()> end_context);
  // The `interrupted` entry of a JSON file written before the run's end,
  // given how many cases it holds (by default a plain statement of that).
  void SetPartialNote(std::function<std::string(int cases)> note);

  // Rewrites the target now as a complete file of the cases finished so
  // far, with the partial note (a signal arrived: the note says which).
  // Safe from another thread; nothing once Commit has run; nothing for a
  // pipe or a device, or before any case finished.
  absl::Status Checkpoint();

  // Writes the whole run, fsyncs and renames it into place. Errors name
  // the file and give the system's reason; the results are then saved in
  // a file of their own elsewhere (rescue_path(), said in the error) and
  // the target keeps the last complete file it held.
  absl::Status Commit();

  // As Commit, for a run that ends before Google Benchmark closes it (an
  // MPI job ended on a timed-out collective): the cases finished so far,
  // with the partial note, as Checkpoint writes them.
  absl::Status CommitPartial();

  const std::string& path() const { return path_; }
  // The file the results replace (path() with links resolved).
  std::string Target() const;
  // The temporary file a write goes through ("" when the target is written
  // directly: a pipe or a device).
  const std::string& temp_path() const { return temp_path_; }
  // How many cases the target holds as written so far (0: none yet).
  int cases_in_target() const;
  // After a failed Commit: where the results were saved instead ("": nowhere).
  const std::string& rescue_path() const { return rescue_path_; }

 private:
  class Reporter;
  ResultFile() = default;
  // Commit (`whole`) or CommitPartial.
  absl::Status Close(bool whole);
  // Writes `text` through the temporary file onto the target.
  absl::Status Replace(const std::string& text, bool sync);
  // The run's whole text in a new file under the first writable folder of
  // $TMPDIR, /tmp, /dev/shm and $HOME; "" when none takes it.
  std::string Rescue(const std::string& text, std::string* reasons);

  std::string path_;
  std::string target_;     // links resolved at Open
  std::string temp_path_;  // empty: written directly
  unsigned mode_ = 0644;   // the new file's permission bits
  int direct_fd_ = -1;     // a pipe or a device
  bool committed_ = false;
  bool failing_ = false;  // the last rewrite failed (said once)
  std::atomic<int> written_cases_{0};
  std::string rescue_path_;
  std::unique_ptr<Reporter> reporter_;
};

// The console reporter Google Benchmark would make (--benchmark_format),
// leaving out runs while `drop` returns true, and saying after the
// library's "built as DEBUG" warning what it means for the suite's figures.
std::unique_ptr<benchmark::BenchmarkReporter> MakeDisplayReporter(DropCheck drop);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_RESULT_OUTPUT_H_
