// Where a run's results go: the --benchmark_out file, written so that a
// run never loses or half-writes one, and the console reporter.
//
// The file reporter keeps the results in memory and writes them when the
// run ends (also after an interrupt). A regular file, or a path that does
// not exist yet, is written to a temporary file beside it that is renamed
// into place, so an existing file is replaced only by a complete one; a
// pipe or a device is written directly. Every write and the close are
// checked: a failure is an error with the system's reason.
#ifndef CNNBENCH_BENCH_RESULT_OUTPUT_H_
#define CNNBENCH_BENCH_RESULT_OUTPUT_H_

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
  // Benchmark's --benchmark_out_format). A missing folder or a denied
  // permission is an error now, before anything runs.
  static absl::StatusOr<std::unique_ptr<ResultFile>> Open(const std::string& path,
                                                          const std::string& format);
  ~ResultFile();  // removes the temporary file unless Commit succeeded

  // The reporter to give benchmark::RunSpecifiedBenchmarks as its file reporter.
  benchmark::BenchmarkReporter* reporter();
  // Runs reported while `drop` returns true are left out of the file.
  void SetDropCheck(DropCheck drop);
  // Entries known only when the run ends (e.g. the load average then); a
  // JSON file's context gets them.
  void SetEndContext(std::function<ContextEntries()> end_context);

  // From now on, each case reported (json only; a target written through a
  // temporary file) also rewrites snapshot_path() as a complete file of the
  // cases so far, its context saying the run was stopped after them
  // (`interrupted`), by writing a fresh file and renaming it over the last,
  // so the snapshot is always whole. Under an MPI launcher the first signal
  // renames it onto the target (PublishOnFirstSignal), so the finished
  // cases outlive the launcher's kill a second later. Commit and Abandon
  // remove it.
  absl::Status KeepSnapshots();
  const std::string& snapshot_path() const { return snapshot_path_; }
  // The file the results replace (path() with links resolved).
  std::string Target() const;

  // Writes what was reported, closes the file and renames it into place.
  // Errors name the file and give the system's reason.
  absl::Status Commit();
  // Leaves the target as it was (removes the temporary file).
  void Abandon();

  const std::string& path() const { return path_; }
  // The temporary file the results go to until Commit ("" when the target
  // is written directly: a pipe or a device).
  const std::string& temp_path() const { return temp_path_; }

 private:
  class Reporter;
  ResultFile() = default;
  void RemoveSnapshot();

  std::string path_;
  std::string temp_path_;  // empty: written directly
  std::string snapshot_path_;  // empty: no snapshots
  int fd_ = -1;
  std::unique_ptr<Reporter> reporter_;
};

// The console reporter Google Benchmark would make (--benchmark_format),
// leaving out runs while `drop` returns true, and saying after the
// library's "built as DEBUG" warning what it means for the suite's figures.
std::unique_ptr<benchmark::BenchmarkReporter> MakeDisplayReporter(DropCheck drop);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_RESULT_OUTPUT_H_
