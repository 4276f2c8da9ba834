// Where an inference batch's time goes (//tools:step_breakdown --profile
// --infer): the forward pass run here batch after batch, first unprofiled
// (the figure the suite's infer case times), then with every layer timed
// (InferOptions::profile), and the profile's sum against the unprofiled
// batch, so a profile that costs time of its own says so. Layers are listed
// one by one and summed by kind (a convolution by window, stride and fused
// epilogue; pool, fc, the input reorders as "edges"). Reported, never
// asserted.
#ifndef CNNBENCH_TOOLS_INFER_PROFILE_H_
#define CNNBENCH_TOOLS_INFER_PROFILE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kernels/kernel.h"
#include "models/graph.h"
#include "train/inference.h"
#include "train/trace.h"

namespace cnnbench {

struct InferProfileOptions {
  InferOptions infer;  // precision and fusions (profile is set here)
  int batches = 50;    // timed batches, unprofiled and then profiled
  int warmup = 5;      // untimed batches before each
  // Each of the profiled batches' layer times (one column per batch) goes
  // here when not empty: the spread a single traced batch hides.
  std::string per_batch_file;
};

// A layer's kind for the sums: "conv 3x3", "conv 1x1/2+add", "pool", ...
// (from its descriptor string).
std::string LayerKind(const std::string& op);

// Runs the profile on `backend` and prints it to stdout.
absl::Status ProfileInference(const Graph& graph, Backend* backend,
                              const InferProfileOptions& options);

}  // namespace cnnbench

#endif  // CNNBENCH_TOOLS_INFER_PROFILE_H_
