// The convergence check: trains a zoo model for N steps on a learnable data
// set (tools/make_dataset's class-coloured images, generated here unless a
// folder is given) and evaluates it on the set's validation split with the
// inference executor, printing the loss and accuracy curve; the check fails
// below a top-1 threshold. It shows that a backend's numbers make a model
// learn, which unit tests' tolerances alone do not.
#ifndef CNNBENCH_TOOLS_CONVERGENCE_CONVERGENCE_H_
#define CNNBENCH_TOOLS_CONVERGENCE_CONVERGENCE_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dtype.h"

namespace cnnbench::convergence {

struct Options {
  std::string model = "lenet";
  std::string backend = "onednn";  // reference, onednn (the CPU) or cuda (GPU 0)
  Precision precision = Precision::kFp32;
  int64_t batch = 16;
  int64_t image_size = 16;  // 0: the model's own
  int steps = 120;
  int eval_every = 40;  // also after the last step; 0: only then
  double learning_rate = 0.02;
  double momentum = 0.9;
  uint64_t seed = 1;
  // The data: a folder in either format, or empty for one generated here
  // (`images` train and images / 4 validation images of `classes` classes,
  // small colour JPEGs, removed afterwards).
  std::string data_dir;
  int64_t images = 512;
  int classes = 10;
  double min_top1 = 0.5;  // the final validation top-1 the check needs
  // Tests only: every weight gradient zeroed as it is produced (a backward
  // pass scaled by 0), so the check must fail.
  bool zero_gradients_for_testing = false;
};

struct Point {
  int step = 0;
  double train_loss = 0;       // of the last step
  double train_top1 = 0;       // of the last step's batch
  double validation_loss = 0;  // mean cross-entropy over the validation split
  double validation_top1 = 0, validation_top5 = 0;
  int64_t validation_images = 0;
};

struct Result {
  std::vector<Point> curve;
  double chance = 0;  // 1 / classes
  bool passed = false;
  // Why training stopped early without learning (a loss that is not a
  // number: too high a learning rate); "" when it ran its steps.
  std::string diverged;
};

// Runs the check, printing its settings and each point of the curve on `out`
// (nullptr: silent); the verdict is Verdict's, for the caller to print once
// its results are safely written. Errors (a bad option, a backend that is
// absent) are statuses; a model that does not learn, or whose loss stops
// being a number, is a Result with passed false (diverged says why for the
// latter).
absl::StatusOr<Result> Run(const Options& options, std::FILE* out);

// The check's last line: the final top-1 against the threshold and PASS or
// FAIL (or why training stopped without learning).
std::string Verdict(const Options& options, const Result& result);

// The curve as JSON: {"model":..., "backend":..., "precision":..., "points":[...]}.
std::string ToJson(const Options& options, const Result& result);

// Whether a file can be written at `path`, asked before the training the
// file is for (as the suite's ResultFile::Open asks of --benchmark_out): its
// folder must exist and take a new file (a temporary one, made and
// removed); a folder named as the file, or a device or pipe that cannot be
// opened for writing, is an error. What only the write can tell (a full
// disk) is still an error then.
absl::Status CheckOutputPath(const std::string& path);

}  // namespace cnnbench::convergence

#endif  // CNNBENCH_TOOLS_CONVERGENCE_CONVERGENCE_H_
