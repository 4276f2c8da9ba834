// Per-layer kernel cases: every distinct conv, fc, pool, batch-norm and ReLU
// layer of the chosen models (taken from the zoo's graphs, so a model's layers
// and its kernel cases never disagree), each pass timed on its own through
// the backend's Kernel interface.
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/kernel_runner.h"
#include "bench/names.h"
#include "bench/suite.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/status.h"
#include "kernels/backends.h"
#include "models/zoo.h"

namespace cnnbench::bench {
namespace {

struct KernelCase {
  std::string name;
  OpDesc desc;
  Pass pass;
  Precision precision;
  const SuiteOptions* options;
  int progress_index = 0;
  double flops = 0;  // per call; 0 for memory-bound ops
  double bytes = 0;  // per call, moved to and from memory (memory-bound ops)
  // Built on the first repetition, released after the last one.
  std::unique_ptr<Backend> backend;
  std::unique_ptr<KernelRunner> runner;
  int repetitions_done = 0;
  absl::Status failure;
};

absl::Status Prepare(KernelCase& c) {
  ASSIGN_OR_RETURN(c.backend, CreateBackend(c.options->backend, Device::Cpu()));
  ASSIGN_OR_RETURN(c.runner, KernelRunner::Create(c.backend.get(), c.desc, c.precision));
  return absl::OkStatus();
}

void RunKernelCase(benchmark::State& state, KernelCase* c, Progress* progress) {
  progress->Announce(c->progress_index);
  if (c->runner == nullptr && c->failure.ok()) {
    c->failure = Prepare(*c);
    if (!c->failure.ok()) c->backend.reset();
  }
  if (!c->failure.ok()) {
    state.SkipWithError(SkipMessage(c->failure).c_str());
    return;
  }
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    absl::Status s = c->runner->Run(c->pass);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!s.ok()) {
      state.SkipWithError(SkipMessage(s).c_str());
      break;
    }
    state.SetIterationTime(seconds);
  }
  if (c->flops > 0)
    state.counters["flops"] =
        benchmark::Counter(c->flops, benchmark::Counter::kIsIterationInvariantRate);
  if (c->bytes > 0)
    state.counters["bytes_per_second"] =
        benchmark::Counter(c->bytes, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(c->runner->implementation());
  if (++c->repetitions_done >= c->options->repetitions) {
    c->runner.reset();
    c->backend.reset();
  }
}

}  // namespace

absl::Status RegisterKernelCases(const SuiteOptions& options, Progress& progress) {
  auto wants = [&](const std::string& family) {
    for (const auto& f : options.families)
      if (f == family) return true;
    return false;
  };
  std::set<std::string> seen;
  for (const std::string& model : options.kernel_models) {
    ASSIGN_OR_RETURN(ModelInfo info, FindModel(model));
    ModelOptions mo;
    mo.batch = options.kernel_batch > 0 ? options.kernel_batch : info.default_batch;
    mo.image_size = options.image_size;
    ASSIGN_OR_RETURN(Graph graph, BuildModel(model, mo));
    std::map<std::string, int> per_family;
    // Which outputs get gradients, as in the training step: a layer that
    // reads only the images runs no backward-data pass, so it gets no case.
    std::vector<bool> needs_grad(graph.nodes.size(), false);
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const Node& node = graph.nodes[i];
      if (node.kind != Node::Kind::kOp) continue;
      bool inputs_need_grad = false;
      for (int in : node.inputs) inputs_need_grad = inputs_need_grad || needs_grad[in];
      needs_grad[i] = inputs_need_grad || std::holds_alternative<ConvDesc>(node.op) ||
                      std::holds_alternative<FcDesc>(node.op) ||
                      std::holds_alternative<BatchNormDesc>(node.op);
    }
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const Node& node = graph.nodes[i];
      if (node.kind != Node::Kind::kOp) continue;
      bool inputs_need_grad = false;
      for (int in : node.inputs) inputs_need_grad = inputs_need_grad || needs_grad[in];
      std::string family;
      std::vector<std::pair<std::string, Pass>> passes;
      if (std::holds_alternative<ConvDesc>(node.op) || std::holds_alternative<FcDesc>(node.op)) {
        family = std::holds_alternative<ConvDesc>(node.op) ? "conv" : "fc";
        passes = {{"fwd", Pass::kForward},
                  {"bwd_data", Pass::kBackwardData},
                  {"bwd_filter", Pass::kBackwardWeights}};
      } else if (const auto* pool = std::get_if<PoolDesc>(&node.op)) {
        family = "pool";
        const std::string alg = pool->algorithm == PoolAlgorithm::kMax ? "max" : "avg";
        passes = {{alg + "/fwd", Pass::kForward}, {alg + "/bwd", Pass::kBackwardData}};
      } else if (std::holds_alternative<BatchNormDesc>(node.op)) {
        family = "batchnorm";
        passes = {{"fwd", Pass::kForward}, {"bwd", Pass::kBackwardData}};
      } else if (std::holds_alternative<ReluDesc>(node.op)) {
        family = "relu";
        passes = {{"fwd", Pass::kForward}, {"bwd", Pass::kBackwardData}};
      } else {
        continue;
      }
      if (!wants(family)) continue;
      if (!inputs_need_grad && !std::holds_alternative<BatchNormDesc>(node.op))
        passes.erase(std::remove_if(passes.begin(), passes.end(),
                                    [](const auto& p) { return p.second == Pass::kBackwardData; }),
                     passes.end());
      const std::string shape = OpDescToString(node.op);
      if (!seen.insert(shape).second) continue;
      if (options.max_kernel_shapes > 0 && per_family[family]++ >= options.max_kernel_shapes)
        continue;
      for (const std::string& precision_name : options.precisions) {
        ASSIGN_OR_RETURN(Precision precision, ParsePrecision(precision_name));
        for (const auto& [pass_name, pass] : passes) {
          auto* c = new KernelCase();
          c->name = KernelCaseName(family, pass_name, precision_name, "cpu", shape);
          c->desc = node.op;
          c->pass = pass;
          c->precision = precision;
          c->options = &options;
          c->flops = PassFlops(node.op);
          c->bytes = PassBytes(node.op, pass);
          c->progress_index = progress.Add(c->name);
          benchmark::RegisterBenchmark(c->name.c_str(), RunKernelCase, c, &progress)
              ->MinTime(options.kernel_min_time)
              ->Repetitions(options.repetitions)
              ->UseManualTime()
              ->Unit(benchmark::kMicrosecond);
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
