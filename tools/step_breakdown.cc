// step_breakdown: compares a training case's step time with the sum of its
// layers' kernel cases measured in the same run (framework overhead).
//   ./bazelw run //tools:step_breakdown -- --json=run.json --model=resnet50 --batch=32
// Every conv/fc/pool/batchnorm/relu node of the model contributes the mean
// time of its kernel cases (fwd, and the backward passes the step runs);
// other nodes (add, concat, dropout, loss) and the update have no case and
// are listed as uncovered.
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/invocation.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/names.h"
#include "models/zoo.h"
#include "nlohmann/json.hpp"

ABSL_FLAG(std::string, json, "", "Google Benchmark JSON of one run");
ABSL_FLAG(std::string, model, "resnet50", "zoo model of the training case");
ABSL_FLAG(int, batch, 32, "batch size of the training case");
ABSL_FLAG(std::string, precision, "fp32", "precision of the cases");
ABSL_FLAG(int, image_size, 0, "image size override the run used (0: the model's)");

namespace cnnbench {
namespace {

double ToSeconds(double value, const std::string& unit) {
  if (unit == "ns") return value * 1e-9;
  if (unit == "us") return value * 1e-6;
  if (unit == "ms") return value * 1e-3;
  return value;
}

int Main(int argc, char** argv) {
  ChangeToInvocationDirectory();  // --json is relative to the user's folder
  absl::ParseCommandLine(argc, argv);
  const std::string path = absl::GetFlag(FLAGS_json);
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "step_breakdown: cannot open --json=%s\n", path.c_str());
    return 2;
  }
  nlohmann::json run;
  try {
    run = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "step_breakdown: %s is not JSON: %s\n", path.c_str(), e.what());
    return 2;
  }
  // Mean seconds per iteration of every case (mean aggregate when present).
  std::map<std::string, std::pair<double, int>> sums;
  std::map<std::string, double> means;
  for (const auto& b : run.value("benchmarks", nlohmann::json::array())) {
    if (b.value("error_occurred", false)) continue;
    auto name = bench::ParseCaseName(b.value("name", ""));
    if (!name.ok()) continue;
    const double t = ToSeconds(b.value("real_time", 0.0), b.value("time_unit", "ns"));
    if (b.value("run_type", "") == "aggregate") {
      if (b.value("aggregate_name", "") == "mean") means[name->ToString()] = t;
    } else {
      auto& s = sums[name->ToString()];
      s.first += t;
      s.second += 1;
    }
  }
  for (const auto& [name, s] : sums)
    if (!means.count(name)) means[name] = s.first / s.second;

  const std::string precision = absl::GetFlag(FLAGS_precision);
  ModelOptions mo;
  mo.batch = absl::GetFlag(FLAGS_batch);
  mo.image_size = absl::GetFlag(FLAGS_image_size);
  auto graph = BuildModel(absl::GetFlag(FLAGS_model), mo);
  if (!graph.ok()) {
    std::fprintf(stderr, "step_breakdown: %s\n", std::string(graph.status().message()).c_str());
    return 2;
  }
  const std::string train =
      bench::TrainCaseName(absl::GetFlag(FLAGS_model), precision, "synthetic", mo.batch, 0);
  if (!means.count(train)) {
    std::fprintf(stderr, "step_breakdown: %s has no successful case %s\n", path.c_str(),
                 train.c_str());
    return 2;
  }
  // Which nodes get gradients: the first layers (reading only the images)
  // skip their backward-data pass, as the step does.
  std::vector<bool> needs_grad(graph->nodes.size(), false);
  double covered = 0;
  int missing = 0;
  std::map<std::string, int> uncovered;
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    const Node& node = graph->nodes[i];
    if (node.kind != Node::Kind::kOp) continue;
    bool inputs_need_grad = false;
    for (int in : node.inputs) inputs_need_grad = inputs_need_grad || needs_grad[in];
    const std::string shape = OpDescToString(node.op);
    std::vector<std::string> cases;
    if (std::holds_alternative<ConvDesc>(node.op) || std::holds_alternative<FcDesc>(node.op)) {
      const std::string family = std::holds_alternative<ConvDesc>(node.op) ? "conv" : "fc";
      cases.push_back(bench::KernelCaseName(family, "fwd", precision, "cpu", shape));
      if (inputs_need_grad)
        cases.push_back(bench::KernelCaseName(family, "bwd_data", precision, "cpu", shape));
      cases.push_back(bench::KernelCaseName(family, "bwd_filter", precision, "cpu", shape));
      needs_grad[i] = true;
    } else if (const auto* pool = std::get_if<PoolDesc>(&node.op)) {
      const std::string alg = pool->algorithm == PoolAlgorithm::kMax ? "max" : "avg";
      cases.push_back(bench::KernelCaseName("pool", alg + "/fwd", precision, "cpu", shape));
      if (inputs_need_grad)
        cases.push_back(bench::KernelCaseName("pool", alg + "/bwd", precision, "cpu", shape));
      needs_grad[i] = inputs_need_grad;
    } else if (std::holds_alternative<BatchNormDesc>(node.op)) {
      cases.push_back(bench::KernelCaseName("batchnorm", "fwd", precision, "cpu", shape));
      cases.push_back(bench::KernelCaseName("batchnorm", "bwd", precision, "cpu", shape));
      needs_grad[i] = true;
    } else if (std::holds_alternative<ReluDesc>(node.op)) {
      cases.push_back(bench::KernelCaseName("relu", "fwd", precision, "cpu", shape));
      if (inputs_need_grad)
        cases.push_back(bench::KernelCaseName("relu", "bwd", precision, "cpu", shape));
      needs_grad[i] = inputs_need_grad;
    } else {
      uncovered[std::string(OpKind(node.op))]++;
      needs_grad[i] = inputs_need_grad;
      continue;
    }
    for (const auto& c : cases) {
      auto it = means.find(c);
      if (it == means.end()) {
        std::fprintf(stderr, "missing kernel case: %s\n", c.c_str());
        ++missing;
      } else {
        covered += it->second;
      }
    }
  }
  const double step = means[train];
  std::printf("model %s batch %lld (%s): %s\n", absl::GetFlag(FLAGS_model).c_str(),
              static_cast<long long>(mo.batch),
              precision.c_str(), path.c_str());
  std::printf("training step (mean):            %10.3f ms\n", step * 1e3);
  std::printf("sum of its layers' kernel cases: %10.3f ms\n", covered * 1e3);
  std::printf("step / sum of kernels:           %10.4f\n", step / covered);
  std::string nodes;
  for (const auto& [kind, count] : uncovered) absl::StrAppend(&nodes, " ", kind, " x", count);
  std::printf("nodes without kernel cases (in the step, not the sum):%s, sgd update\n",
              nodes.c_str());
  if (missing > 0) {
    std::printf("%d kernel case(s) missing from the run: the sum is incomplete\n", missing);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace cnnbench

int main(int argc, char** argv) { return cnnbench::Main(argc, argv); }
