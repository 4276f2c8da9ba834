// Per-layer kernel cases: every distinct conv, fc, pool, batch-norm and ReLU
// layer of the chosen models (taken from the zoo's graphs, so a model's layers
// and its kernel cases never disagree), each pass timed on its own through
// the backend's Kernel interface.
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/names.h"
#include "bench/suite.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/status.h"
#include "kernels/backends.h"
#include "models/zoo.h"
#include "train/init.h"

namespace cnnbench::bench {
namespace {

enum class Pass { kForward, kBackwardData, kBackwardWeights };

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
  std::unique_ptr<Kernel> kernel;
  std::vector<Buffer> buffers;
  KernelArgs args;
  int repetitions_done = 0;
  absl::Status failure;
};

absl::StatusOr<Buffer> FilledBuffer(const TensorSpec& spec, Rng& rng, float value_scale) {
  ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(Device::Cpu(), std::max<size_t>(spec.bytes, 64)));
  if (spec.dtype == DType::kI32) {
    std::memset(b.data(), 0, b.size());  // labels: class 0 is always valid
  } else {
    float* f = static_cast<float*>(b.data());
    for (size_t i = 0; i < b.size() / sizeof(float); ++i)
      f[i] = static_cast<float>((rng.Uniform() * 2 - 1) * value_scale);
  }
  return b;
}

absl::Status Prepare(KernelCase& c) {
  if (c.precision != Precision::kFp32 && c.precision != Precision::kBf16)
    return absl::UnimplementedError(absl::StrCat("unsupported: ", PrecisionName(c.precision),
                                                 " kernels on the CPU"));
  ASSIGN_OR_RETURN(c.backend, CreateBackend(c.options->backend, Device::Cpu()));
  ASSIGN_OR_RETURN(c.kernel,
                   c.backend->Create(c.desc, ActivationType(c.precision), /*inputs=*/{}));
  const KernelSignature& sig = c.kernel->signature();
  Rng rng(99);
  auto add = [&](const TensorSpec& spec, float scale) -> absl::StatusOr<void*> {
    ASSIGN_OR_RETURN(Buffer b, FilledBuffer(spec, rng, scale));
    c.buffers.push_back(std::move(b));
    return c.buffers.back().data();
  };
  KernelArgs& a = c.args;
  for (const TensorSpec& in : sig.inputs) {
    ASSIGN_OR_RETURN(void* x, add(in, 1.0f));
    a.x.push_back(x);
    ASSIGN_OR_RETURN(void* dx, add(in, 0.0f));
    a.dx.push_back(dx);
  }
  ASSIGN_OR_RETURN(a.y, add(sig.output, 0.0f));
  ASSIGN_OR_RETURN(void* dy, add(sig.output, 1.0f));
  a.dy = dy;
  for (const TensorSpec& p : sig.params) {
    ASSIGN_OR_RETURN(void* w, add(p, 0.1f));
    a.params.push_back(w);
    ASSIGN_OR_RETURN(void* dw, add(p, 0.0f));
    a.dparams.push_back(dw);
  }
  for (const TensorSpec& s : sig.state) {
    ASSIGN_OR_RETURN(void* st, add(s, 0.0f));
    float* f = static_cast<float*>(st);
    for (size_t i = 0; i < s.bytes / sizeof(float); ++i) f[i] = 1.0f;  // positive variances
    a.state.push_back(st);
  }
  ASSIGN_OR_RETURN(a.saved, add(TensorSpec{DType::kU8, Shape{}, Layout::kX, sig.saved_bytes}, 0));
  ASSIGN_OR_RETURN(a.scratch,
                   add(TensorSpec{DType::kU8, Shape{}, Layout::kX, sig.scratch_bytes}, 0));
  a.training = true;
  // One forward fills `saved` for the backward passes, and warms up.
  RETURN_IF_ERROR(c.kernel->Forward(a));
  return absl::OkStatus();
}

absl::Status RunPass(KernelCase& c) {
  switch (c.pass) {
    case Pass::kForward: return c.kernel->Forward(c.args);
    case Pass::kBackwardData: {
      RETURN_IF_ERROR(c.kernel->BackwardData(c.args));
      // Batch norm's "bwd" is both passes, as the training step runs it.
      if (std::holds_alternative<BatchNormDesc>(c.desc)) return c.kernel->BackwardWeights(c.args);
      return absl::OkStatus();
    }
    case Pass::kBackwardWeights: return c.kernel->BackwardWeights(c.args);
  }
  return absl::OkStatus();
}

void RunKernelCase(benchmark::State& state, KernelCase* c, Progress* progress) {
  progress->Announce(c->progress_index);
  if (c->kernel == nullptr && c->failure.ok()) {
    c->failure = Prepare(*c);
    if (!c->failure.ok()) {
      c->kernel.reset();
      c->buffers.clear();
    }
  }
  if (!c->failure.ok()) {
    state.SkipWithError(std::string(c->failure.message()).c_str());
    return;
  }
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    absl::Status s = RunPass(*c);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
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
  state.SetLabel(c->kernel->implementation());
  if (++c->repetitions_done >= c->options->repetitions) {
    c->kernel.reset();
    c->buffers.clear();
    c->args = KernelArgs{};
    c->backend.reset();
  }
}

// Bytes a memory-bound pass reads and writes: each activation once per touch.
double MemoryBytes(const OpDesc& desc, Pass pass) {
  auto tensor_bytes = [](const Dims4& d) { return 4.0 * d.elements(); };
  if (const auto* p = std::get_if<PoolDesc>(&desc)) {
    const double in = tensor_bytes(p->input()), out = tensor_bytes(p->output());
    return pass == Pass::kForward ? in + out : in + 2 * out;
  }
  if (const auto* bn = std::get_if<BatchNormDesc>(&desc)) {
    const double t = tensor_bytes(bn->dims);
    return pass == Pass::kForward ? 3 * t : 4 * t;  // statistics pass + normalise; backward reads x, dy twice
  }
  if (const auto* r = std::get_if<ReluDesc>(&desc)) {
    const double t = tensor_bytes(r->dims);
    return pass == Pass::kForward ? 2 * t : 3 * t;
  }
  return 0;
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
    for (const Node& node : graph.nodes) {
      if (node.kind != Node::Kind::kOp) continue;
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
          if (const auto* conv = std::get_if<ConvDesc>(&node.op)) c->flops = conv->ForwardFlops();
          if (const auto* fc = std::get_if<FcDesc>(&node.op)) c->flops = fc->ForwardFlops();
          c->bytes = MemoryBytes(node.op, pass);
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
