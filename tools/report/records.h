// One flat record per measured cell, the shape dashboards ingest (JSON
// lines) and the unit of comparison between two runs.
#ifndef CNNBENCH_TOOLS_REPORT_RECORDS_H_
#define CNNBENCH_TOOLS_REPORT_RECORDS_H_

#include <optional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tools/report/results.h"

namespace cnnbench::report {

struct Record {
  std::string platform;
  std::string key;   // the canonical case name
  std::string kind;  // the family: train, infer, conv, gemm, allreduce, grads, input, ...
  // The headline number, higher is better: images/sec, TFLOP/s, GB/s or busbw GB/s.
  std::optional<double> value;
  // The repetitions' values of the counter `value` comes from, in that
  // counter's own units (empty where the files wrote only aggregates): the
  // samples --compare tests.
  std::vector<double> samples;
  std::string unit;
  std::string status;  // ok, oom, failed
  std::string error;
  nlohmann::ordered_json json;  // the JSON line
};

// Train records first (platform, model, precision, data, batch, gpus order),
// then peak, bandwidth, kernels, collectives, inference, gradient
// all-reduce and input, per platform: every family's cases.
std::vector<Record> MakeRecords(const Results& results);

// One JSON object per line.
std::string RenderJsonl(const std::vector<Record>& records);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_RECORDS_H_
