// Per-layer kernel cases: every distinct conv, fc, pool, batch-norm and ReLU
// layer of the chosen models (taken from the zoo's graphs, so a model's layers
// and its kernel cases never disagree), each pass timed on its own through
// the backend's Kernel interface, on the CPU and, where one is visible, a GPU.
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "bench/harness/harness.h"
#include "bench/cases/kernel/kernel_runner.h"
#include "bench/cases/kernel/layer_cases.h"
#include "bench/suite/names.h"
#include "bench/suite/suite.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/status.h"

namespace cnnbench::bench {
namespace {

struct KernelCase {
  OpDesc desc;
  Shape input;  // the layer's input in the network
  Pass pass;
  Precision precision;
  Device device;
};

class KernelWorkload : public Workload {
 public:
  static absl::StatusOr<std::unique_ptr<Workload>> Prepare(const KernelCase& c,
                                                           const SuiteOptions& options) {
    std::unique_ptr<KernelWorkload> w(new KernelWorkload(c));
    ASSIGN_OR_RETURN(w->backend_, CreateCaseBackend(options, c.device));
    ASSIGN_OR_RETURN(w->runner_,
                     KernelRunner::Create(w->backend_.get(), c.desc, c.precision, c.input));
    return std::unique_ptr<Workload>(std::move(w));
  }

  const Stream& stream() const override { return runner_->stream(); }
  absl::Status Run() override { return runner_->Run(case_.pass); }
  absl::Status Report(benchmark::State& state) override {
    const double flops = PassFlops(case_.desc);
    const double bytes = PassBytes(case_.desc, case_.pass, ActivationType(case_.precision));
    if (flops > 0)
      state.counters["flops"] =
          benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
    if (bytes > 0)
      state.counters["bytes_per_second"] =
          benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
    state.SetLabel(runner_->implementation(case_.pass));
    return absl::OkStatus();
  }

 private:
  explicit KernelWorkload(const KernelCase& c) : case_(c) {}
  KernelCase case_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<KernelRunner> runner_;  // after backend_: destroyed first
};

}  // namespace

absl::Status RegisterKernelCases(const SuiteOptions& options, Harness& harness) {
  auto wants = [&](Family family) {
    for (const auto& f : options.families)
      if (f == FamilyName(family)) return true;
    return false;
  };
  std::set<std::string> seen;
  for (const std::string& model : options.kernel.models) {
    ASSIGN_OR_RETURN(Graph graph, KernelModelGraph(options, model));
    std::map<Family, int> per_family;
    for (const LayerCases& layer : GraphLayerCases(graph)) {
      const Family family = *layer.family;
      if (!wants(family)) continue;
      if (!seen.insert(layer.shape).second) continue;
      if (options.kernel.max_shapes > 0 && per_family[family]++ >= options.kernel.max_shapes)
        continue;
      for (const std::string& device_name : KernelDevices(options)) {
        ASSIGN_OR_RETURN(const Device device, Device::Parse(device_name));
        for (const std::string& precision_name : options.precisions) {
          ASSIGN_OR_RETURN(Precision precision, ParsePrecision(precision_name));
          for (const LayerPass& pass : layer.passes) {
            const KernelCase c{graph.nodes[layer.node].op, layer.input, pass.pass, precision,
                               device};
            TimedCase timed;
            timed.name =
                KernelCaseName(family, pass.name, precision_name, device_name, layer.shape);
            timed.family = FamilyName(family);
            timed.unit = benchmark::kMicrosecond;
            timed.prepare = [c, &options] { return KernelWorkload::Prepare(c, options); };
            harness.Register(std::move(timed));
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
