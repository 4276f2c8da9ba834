// A run kept in the results store when it ends (docs/history.md): rank 0
// adds the JSON it wrote to the store named by --store (SQLite by default,
// results/cnnbench.db; a postgresql:// URI; none), then asks the store
// what changed with this run. The store never costs the run its results:
// a store that cannot be written is a warning, the JSON file stands, and
// the message says how to import it later.
#ifndef CNNBENCH_BENCH_RUN_STORE_H_
#define CNNBENCH_BENCH_RUN_STORE_H_

#include <string>

#include "absl/status/status.h"

namespace cnnbench::bench {

struct StoreReport {
  bool stored = false;
  // The run's closing lines: "stored as run 7 of this machine in
  // results/cnnbench.db; 1 change since the last run (...); dashboard:
  // ./bazelw run //tools:history -- dashboard", or why it was not stored.
  std::string lines;
};

// Checks --store's value before the run starts ("none", a path, or a
// postgresql:// URI); an error says what is wrong with it.
absl::Status CheckStoreSpec(const std::string& spec);

// Adds the JSON results file `json_path` to the store `spec`. `format` is
// the file's format: only JSON is read.
StoreReport StoreRun(const std::string& spec, const std::string& json_path,
                     const std::string& format);

// Prints the report: on stdout when the run was stored and `to_stdout`
// (after a console run's summary), else on stderr (a warning when it was
// not stored).
void PrintStoreReport(const StoreReport& stored, bool to_stdout);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_RUN_STORE_H_
