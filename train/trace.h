// A traced training step as a Chrome trace event file (the JSON array
// format that Perfetto and chrome://tracing open): one lane per stream the
// step uses, one complete ("X") slice per layer and pass, with the layer's
// descriptor and implementation as arguments, and the edges' work (input
// reorders, gradient sums and casts) and the optimizer update as slices of
// their own.
#ifndef CNNBENCH_TRAIN_TRACE_H_
#define CNNBENCH_TRAIN_TRACE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace cnnbench {

struct TraceSlice {
  std::string name;      // the layer's name, or "(edges)", "(update)"
  std::string category;  // "forward", "backward", "update"
  std::string lane;      // "compute", "upload", "communication"
  std::string op;        // the descriptor string, where the slice is a layer's
  std::string implementation;
  double start_us = 0;  // since the traced step began
  double duration_us = 0;
};

// The trace file's text: lane names as thread-name metadata, then every
// slice; `process` names the process row (the case, e.g. "train/resnet50/...").
std::string ChromeTraceJson(const std::vector<TraceSlice>& slices, const std::string& process);

// Writes ChromeTraceJson to `path`; errors name the file and the system's reason.
absl::Status WriteChromeTrace(const std::string& path, const std::vector<TraceSlice>& slices,
                              const std::string& process);

}  // namespace cnnbench

#endif  // CNNBENCH_TRAIN_TRACE_H_
