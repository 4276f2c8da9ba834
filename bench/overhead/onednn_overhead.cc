// //bench:onednn_overhead: what our Kernel interface costs over oneDNN.
// A 3x3 convolution (32x64x56x56 -> 64, SAME) and a 2048^3 fully connected
// layer (no bias), forward, backward data and backward weights, each run
// through the oneDNN backend's Kernel and as the same oneDNN primitives
// called directly (created the same way: format_tag::any, user scratchpad,
// explicit diff descriptors). Both paths are checked to give the same
// result before timing; at the end the ratio ours/direct of FLOP/s (median
// over repetitions) is printed per pass. Target: >= 0.95.
//
//   ./bazelw run -c opt //bench:onednn_overhead [-- --benchmark_*=...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bench/output/context.h"
#include "bench/cases/kernel/layer_cases.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/status.h"
#include "dnnl.hpp"
#include "kernels/desc.h"
#include "kernels/kernel.h"
#include "kernels/onednn/onednn_backend.h"

namespace cnnbench::bench {
namespace {

using dnnl::memory;

constexpr Pass kPasses[] = {Pass::kForward, Pass::kBackwardData, Pass::kBackwardWeights};

const char* PassName(Pass pass) {
  switch (pass) {
    case Pass::kForward:
      return "fwd";
    case Pass::kBackwardData:
      return "bwd_data";
    case Pass::kBackwardWeights:
      return "bwd_weights";
  }
  return "?";
}

memory::desc Any(const memory::dims& dims) {
  return memory::desc(dims, memory::data_type::f32, memory::format_tag::any);
}

// Backward data with the weights as the forward stores them when oneDNN runs
// the same kernel that way, else in the layout it prefers: the choice
// kernels/onednn makes, restated here so the direct path does not go
// through our code.
template <typename PrimitiveDesc, typename Make>
PrimitiveDesc SameKernelOrPreferred(Make make, const memory::desc& stored,
                                    const memory::desc& any) {
  PrimitiveDesc preferred = make(any);
  if (preferred.weights_desc() == stored) return preferred;
  try {
    PrimitiveDesc as_stored = make(stored);
    if (std::string(as_stored.impl_info_str()) == preferred.impl_info_str()) return as_stored;
  } catch (const dnnl::error&) {
  }
  return preferred;
}

// One primitive with its arguments bound to memories oneDNN allocated.
struct DirectPrimitive {
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args;
};

// The layer's three passes as plain oneDNN: primitives, memories and a
// stream, built as kernels/onednn builds them.
class DirectLayer {
 public:
  static absl::StatusOr<std::unique_ptr<DirectLayer>> Create(const OpDesc& desc) {
    auto layer = std::unique_ptr<DirectLayer>(new DirectLayer());
    try {
      if (const auto* conv = std::get_if<ConvDesc>(&desc)) {
        if (conv->groups != 1 || conv->bias) return absl::InvalidArgumentError("plain convs only");
        layer->BuildConv(*conv);
      } else if (const auto* fc = std::get_if<FcDesc>(&desc)) {
        if (fc->bias) return absl::InvalidArgumentError("fc without bias only");
        layer->BuildFc(*fc);
      } else {
        return absl::InvalidArgumentError("only conv and fc");
      }
    } catch (const dnnl::error& e) {
      return absl::InternalError(absl::StrCat(OpDescToString(desc), ": oneDNN: ", e.what()));
    }
    return layer;
  }

  void Run(Pass pass) {
    DirectPrimitive& p = passes_[static_cast<int>(pass)];
    p.primitive.execute(stream_, p.args);
    stream_.wait();
  }

  memory& arg(Pass pass, int id) { return passes_[static_cast<int>(pass)].args.at(id); }
  // Backward data reads the weights in its own layout: reorder them once.
  void PrepareBackwardWeights() {
    dnnl::reorder(arg(Pass::kForward, DNNL_ARG_WEIGHTS), arg(Pass::kBackwardData, DNNL_ARG_WEIGHTS))
        .execute(stream_, arg(Pass::kForward, DNNL_ARG_WEIGHTS),
                 arg(Pass::kBackwardData, DNNL_ARG_WEIGHTS));
    stream_.wait();
  }

 private:
  DirectLayer() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    attr_.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  }

  // Memories for `ids`; an argument id met again in another pass (x, dy)
  // is the same tensor and shares the memory.
  DirectPrimitive Bind(const dnnl::primitive_desc_base& pd, dnnl::primitive primitive,
                       const std::vector<int>& ids) {
    DirectPrimitive p{std::move(primitive), {}};
    for (int id : ids) {
      memory::desc md = pd.query_md(dnnl::query::exec_arg_md, id);
      auto shared = tensors_.find(id);
      if (shared != tensors_.end() && shared->second.get_desc() == md) {
        p.args.emplace(id, shared->second);
      } else {
        memory m(md, engine_);
        tensors_.emplace(id, m);
        p.args.emplace(id, m);
      }
    }
    memory::desc scratchpad = pd.scratchpad_desc();
    if (scratchpad.get_size() > 0) p.args.emplace(DNNL_ARG_SCRATCHPAD, memory(scratchpad, engine_));
    return p;
  }

  void BuildConv(const ConvDesc& d) {
    const memory::dims src = {d.n, d.c, d.h.in, d.w.in};
    const memory::dims weights = {d.k, d.c, d.h.kernel, d.w.kernel};
    const memory::dims dst = {d.n, d.k, d.h.out, d.w.out};
    const memory::dims strides = {d.h.stride, d.w.stride};
    const memory::dims dilation = {d.h.dilation - 1, d.w.dilation - 1};
    const memory::dims pad_l = {d.h.pad_before, d.w.pad_before};
    const memory::dims pad_r = {d.h.pad_after, d.w.pad_after};
    const auto direct = dnnl::algorithm::convolution_direct;
    dnnl::convolution_forward::primitive_desc fwd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, direct, Any(src),
                                        Any(weights), Any(dst), strides, dilation, pad_l, pad_r),
        attr_, engine_);
    using BackwardDataPd = dnnl::convolution_backward_data::primitive_desc;
    const BackwardDataPd bwd_data = SameKernelOrPreferred<BackwardDataPd>(
        [&](const memory::desc& w) {
          return BackwardDataPd(
              dnnl::convolution_backward_data::desc(direct, fwd.src_desc(), w, fwd.dst_desc(),
                                                    strides, dilation, pad_l, pad_r),
              attr_, engine_, fwd);
        },
        fwd.weights_desc(), Any(weights));
    dnnl::convolution_backward_weights::primitive_desc bwd_weights(
        dnnl::convolution_backward_weights::desc(direct, fwd.src_desc(), fwd.weights_desc(),
                                                 fwd.dst_desc(), strides, dilation, pad_l, pad_r),
        attr_, engine_, fwd);
    passes_.push_back(
        Bind(fwd, dnnl::convolution_forward(fwd), {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST}));
    // Backward data's weights are its own copy (another layout).
    DirectPrimitive data = Bind(bwd_data, dnnl::convolution_backward_data(bwd_data),
                                {DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC});
    data.args.emplace(DNNL_ARG_WEIGHTS, memory(bwd_data.weights_desc(), engine_));
    passes_.push_back(std::move(data));
    passes_.push_back(Bind(bwd_weights, dnnl::convolution_backward_weights(bwd_weights),
                           {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS}));
  }

  void BuildFc(const FcDesc& d) {
    const memory::dims src = {d.n, d.ic}, weights = {d.oc, d.ic}, dst = {d.n, d.oc};
    dnnl::inner_product_forward::primitive_desc fwd(
        dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training, Any(src), Any(weights),
                                          Any(dst)),
        attr_, engine_);
    using BackwardDataPd = dnnl::inner_product_backward_data::primitive_desc;
    const BackwardDataPd bwd_data = SameKernelOrPreferred<BackwardDataPd>(
        [&](const memory::desc& w) {
          return BackwardDataPd(
              dnnl::inner_product_backward_data::desc(fwd.src_desc(), w, fwd.dst_desc()), attr_,
              engine_, fwd);
        },
        fwd.weights_desc(), Any(weights));
    dnnl::inner_product_backward_weights::primitive_desc bwd_weights(
        dnnl::inner_product_backward_weights::desc(fwd.src_desc(), fwd.weights_desc(),
                                                   fwd.dst_desc()),
        attr_, engine_, fwd);
    passes_.push_back(Bind(fwd, dnnl::inner_product_forward(fwd),
                           {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST}));
    DirectPrimitive data = Bind(bwd_data, dnnl::inner_product_backward_data(bwd_data),
                                {DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC});
    data.args.emplace(DNNL_ARG_WEIGHTS, memory(bwd_data.weights_desc(), engine_));
    passes_.push_back(std::move(data));
    passes_.push_back(Bind(bwd_weights, dnnl::inner_product_backward_weights(bwd_weights),
                           {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS}));
  }

  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::primitive_attr attr_;
  std::map<int, memory> tensors_;
  std::vector<DirectPrimitive> passes_;  // indexed by Pass
};

// Our path: the backend's kernel over buffers sized by its signature.
struct OurLayer {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Kernel> kernel;
  Buffer x, y, dx, dy, w, dw, scratch;
  KernelArgs args;

  absl::Status Run(Pass pass) {
    switch (pass) {
      case Pass::kForward:
        return kernel->Forward(args);
      case Pass::kBackwardData:
        return kernel->BackwardData(args);
      case Pass::kBackwardWeights:
        return kernel->BackwardWeights(args);
    }
    return absl::OkStatus();
  }
};

// Small integers: every sum is exact in fp32, so the two paths must agree
// to the bit whatever order their kernels add in.
void FillIntegers(void* data, size_t bytes, int seed) {
  float* f = static_cast<float*>(data);
  for (size_t i = 0; i < bytes / sizeof(float); ++i)
    f[i] = static_cast<float>(static_cast<int>((i * 7 + seed * 13) % 5) - 2);
}

// A layer set up both ways, with identical inputs, and checked to agree.
struct Case {
  std::string name;  // the descriptor string
  double flops = 0;  // per pass (the three passes cost the same)
  OurLayer ours;
  std::unique_ptr<DirectLayer> direct;
  absl::Status status;  // why the case cannot run, if it cannot
};

const memory::desc* NativeOf(const TensorSpec& spec) {
  return spec.is_plain() ? nullptr : static_cast<const memory::desc*>(spec.native.get());
}

// The byte layouts must match for the comparison (and for "the same
// primitive"): a plain spec matches the plain row-major descriptor.
bool SameBytesLayout(const TensorSpec& spec, const memory::desc& md) {
  if (const memory::desc* native = NativeOf(spec)) return *native == md;
  memory::format_tag tag =
      md.dims().size() == 4 ? memory::format_tag::abcd : memory::format_tag::ab;
  return md == memory::desc(md.dims(), md.data_type(), tag);
}

absl::Status CheckSame(const char* what, const Buffer& ours, memory& direct) {
  if (ours.size() < direct.get_desc().get_size() ||
      std::memcmp(ours.data(), direct.get_data_handle(), direct.get_desc().get_size()) != 0)
    return absl::InternalError(absl::StrCat(what, ": our result differs from oneDNN's"));
  return absl::OkStatus();
}

absl::Status SetUp(const OpDesc& desc, Case& c) {
  c.name = OpDescToString(desc);
  c.flops = std::holds_alternative<ConvDesc>(desc) ? std::get<ConvDesc>(desc).ForwardFlops()
                                                   : std::get<FcDesc>(desc).ForwardFlops();
  OurLayer& o = c.ours;
  ASSIGN_OR_RETURN(o.backend, CreateOneDnnBackend());
  ASSIGN_OR_RETURN(o.kernel, o.backend->Create(desc, DType::kF32, {}));
  const KernelSignature& sig = o.kernel->signature();
  const Device cpu = Device::Cpu();
  ASSIGN_OR_RETURN(o.x, Buffer::Allocate(cpu, sig.inputs[0].bytes));
  ASSIGN_OR_RETURN(o.dx, Buffer::Allocate(cpu, sig.inputs[0].bytes));
  ASSIGN_OR_RETURN(o.y, Buffer::Allocate(cpu, sig.output.bytes));
  ASSIGN_OR_RETURN(o.dy, Buffer::Allocate(cpu, sig.output.bytes));
  ASSIGN_OR_RETURN(o.w, Buffer::Allocate(cpu, sig.params[0].bytes));
  ASSIGN_OR_RETURN(o.dw, Buffer::Allocate(cpu, sig.params[0].bytes));
  ASSIGN_OR_RETURN(o.scratch, Buffer::Allocate(cpu, std::max<size_t>(sig.scratch_bytes, 64)));
  o.args.x = {o.x.data()};
  o.args.y = o.y.data();
  o.args.params = {o.w.data()};
  o.args.dy = o.dy.data();
  o.args.dx = {o.dx.data()};
  o.args.dparams = {o.dw.data()};
  o.args.scratch = o.scratch.data();
  FillIntegers(o.x.data(), o.x.size(), 1);
  FillIntegers(o.w.data(), o.w.size(), 2);
  FillIntegers(o.dy.data(), o.dy.size(), 3);

  ASSIGN_OR_RETURN(c.direct, DirectLayer::Create(desc));
  DirectLayer& d = *c.direct;
  struct Pair {
    const TensorSpec& spec;
    const Buffer& buffer;
    memory& direct;
  };
  const Pair inputs[] = {{sig.inputs[0], o.x, d.arg(Pass::kForward, DNNL_ARG_SRC)},
                         {sig.params[0], o.w, d.arg(Pass::kForward, DNNL_ARG_WEIGHTS)},
                         {sig.output, o.dy, d.arg(Pass::kBackwardData, DNNL_ARG_DIFF_DST)}};
  for (const Pair& p : inputs) {
    if (!SameBytesLayout(p.spec, p.direct.get_desc()))
      return absl::InternalError(
          absl::StrCat(c.name, ": our layout ", p.spec.DebugString(), " is not oneDNN's"));
    std::memcpy(p.direct.get_data_handle(), p.buffer.data(), p.direct.get_desc().get_size());
  }
  d.PrepareBackwardWeights();
  for (Pass pass : kPasses) {
    RETURN_IF_ERROR(o.Run(pass));
    d.Run(pass);
  }
  RETURN_IF_ERROR(CheckSame("forward y", o.y, d.arg(Pass::kForward, DNNL_ARG_DST)));
  RETURN_IF_ERROR(
      CheckSame("backward data dx", o.dx, d.arg(Pass::kBackwardData, DNNL_ARG_DIFF_SRC)));
  RETURN_IF_ERROR(
      CheckSame("backward weights dw", o.dw, d.arg(Pass::kBackwardWeights, DNNL_ARG_DIFF_WEIGHTS)));
  return absl::OkStatus();
}

void Register(Case& c) {
  for (Pass pass : kPasses) {
    for (bool ours : {true, false}) {
      const std::string name = absl::StrCat("onednn_overhead/", c.name, "/", PassName(pass), "/",
                                            ours ? "ours" : "direct");
      benchmark::RegisterBenchmark(name.c_str(),
                                   [&c, pass, ours](benchmark::State& state) {
                                     if (!c.status.ok()) {
                                       state.SkipWithError(c.status.ToString().c_str());
                                       return;
                                     }
                                     for (auto _ : state) {
                                       if (ours) {
                                         absl::Status status = c.ours.Run(pass);
                                         if (!status.ok()) {
                                           state.SkipWithError(status.ToString().c_str());
                                           break;
                                         }
                                       } else {
                                         c.direct->Run(pass);
                                       }
                                     }
                                     state.counters["flops"] = benchmark::Counter(
                                         c.flops, benchmark::Counter::kIsIterationInvariantRate);
                                   })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
    // The same two calls alternated within one case, each timed on its own:
    // a burst of load from elsewhere on the shared host then hits both paths
    // of a pair, where separate cases can catch it in one path only.
    const std::string paired =
        absl::StrCat("onednn_overhead/", c.name, "/", PassName(pass), "/paired");
    benchmark::RegisterBenchmark(
        paired.c_str(),
        [&c, pass](benchmark::State& state) {
          if (!c.status.ok()) {
            state.SkipWithError(c.status.ToString().c_str());
            return;
          }
          using Clock = std::chrono::steady_clock;
          double ours_seconds = 0, direct_seconds = 0;
          int64_t calls = 0;
          for (auto _ : state) {
            const bool ours_first = calls % 2 == 0;  // neither path always runs on a warm cache
            double seconds[2];
            for (int k = 0; k < 2; ++k) {
              const Clock::time_point start = Clock::now();
              if ((k == 0) == ours_first) {
                absl::Status status = c.ours.Run(pass);
                if (!status.ok()) {
                  state.SkipWithError(status.ToString().c_str());
                  return;
                }
              } else {
                c.direct->Run(pass);
              }
              seconds[k] = std::chrono::duration<double>(Clock::now() - start).count();
            }
            ours_seconds += ours_first ? seconds[0] : seconds[1];
            direct_seconds += ours_first ? seconds[1] : seconds[0];
            state.SetIterationTime(seconds[0] + seconds[1]);
            ++calls;
          }
          state.counters["ours_flops"] = c.flops * calls / ours_seconds;
          state.counters["direct_flops"] = c.flops * calls / direct_seconds;
          state.counters["ratio"] = direct_seconds / ours_seconds;
        })
        ->Unit(benchmark::kMillisecond)
        ->UseManualTime();
  }
}

// The console reporter, plus each run's FLOP/s or paired ratio kept for the
// ratio table.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  // Plain text (no colour codes): the output goes into docs/results.
  RatioReporter() : ConsoleReporter(OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
      for (const char* counter : {"flops", "ratio"}) {
        auto it = run.counters.find(counter);
        if (it != run.counters.end())
          values_[run.run_name.function_name].push_back(it->second.value);
      }
    }
  }

  // Median of `name`'s repetitions (FLOP/s, or the paired ratio); 0 when
  // it did not run.
  double Median(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end() || it->second.empty()) return 0;
    std::vector<double> v = it->second;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
  size_t Count(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? 0 : it->second.size();
  }

 private:
  std::map<std::string, std::vector<double>> values_;
};

}  // namespace
}  // namespace cnnbench::bench

int main(int argc, char** argv) {
  using namespace cnnbench;
  using namespace cnnbench::bench;
  // Defaults that make one run a fair comparison on a shared machine:
  // repetitions in random order, so drift hits both paths alike. Flags
  // given on the command line come later and win.
  std::vector<char*> args = {argv[0]};
  std::string repetitions = "--benchmark_repetitions=10";
  std::string interleave = "--benchmark_enable_random_interleaving=true";
  std::string min_time = "--benchmark_min_time=1";
  args.push_back(repetitions.data());
  args.push_back(interleave.data());
  args.push_back(min_time.data());
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  const PlatformInfo info = AddPlatformContext("");
  std::printf("onednn_overhead on %s (%s, %d CPUs), oneDNN %s\n", info.host_name.c_str(),
              info.cpu_model.c_str(), info.cpu_cores, info.onednn_version.c_str());

  const char* kShapes[] = {
      "conv:mb32_ic64oc64_ih56oh56kh3sh1ph1_iw56ow56kw3sw1pw1",  // 3x3, SAME
      "fc:mb2048ic2048oc2048_nobias",                            // the 2048^3 GEMM
  };
  std::vector<std::unique_ptr<Case>> cases;
  for (const char* text : kShapes) {
    auto c = std::make_unique<Case>();
    absl::StatusOr<OpDesc> desc = ParseOpDesc(text);
    c->status = desc.ok() ? SetUp(*desc, *c) : desc.status();
    if (c->name.empty()) c->name = text;
    std::printf("%s: %s; %s\n", c->name.c_str(),
                c->status.ok() ? "ours and direct agree to the bit on every pass"
                               : c->status.ToString().c_str(),
                c->status.ok() ? c->ours.kernel->implementation().c_str() : "");
    Register(*c);
    cases.push_back(std::move(c));
  }
  std::fflush(stdout);

  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  // Two estimates of ours/direct: the ratio of the separate cases' median
  // FLOP/s, and the median over repetitions of the paired case's ratio
  // (alternating calls; the steadier one on a shared machine).
  std::printf(
      "\nours/direct (target >= 0.95): separate = ratio of the median FLOP/s of the"
      " ours and direct cases;\npaired = median over repetitions of the paired case,"
      " which alternates the two calls\n");
  std::printf("%-56s %-11s %10s %12s %9s %7s %s\n", "layer", "pass", "ours GF/s", "direct GF/s",
              "separate", "paired", "repetitions");
  bool separate_met = true, paired_met = true;
  for (const auto& c : cases) {
    for (Pass pass : kPasses) {
      const std::string prefix =
          absl::StrCat("onednn_overhead/", c->name, "/", PassName(pass), "/");
      const double ours = reporter.Median(prefix + "ours");
      const double direct = reporter.Median(prefix + "direct");
      const double paired = reporter.Median(prefix + "paired");
      if (ours == 0 || direct == 0 || paired == 0) {
        std::printf("%-56s %-11s %10s %12s %9s %7s\n", c->name.c_str(), PassName(pass), "-", "-",
                    "n/a", "n/a");
        separate_met = paired_met = false;
        continue;
      }
      separate_met = separate_met && ours / direct >= 0.95;
      paired_met = paired_met && paired >= 0.95;
      std::printf("%-56s %-11s %10.1f %12.1f %9.3f %7.3f %zu/%zu/%zu\n", c->name.c_str(),
                  PassName(pass), ours / 1e9, direct / 1e9, ours / direct, paired,
                  reporter.Count(prefix + "ours"), reporter.Count(prefix + "direct"),
                  reporter.Count(prefix + "paired"));
    }
  }
  std::printf("target %s on every pass by the paired ratio, %s by the separate ratio\n",
              paired_met ? "met" : "NOT met", separate_met ? "met" : "NOT met");
  benchmark::Shutdown();
  return 0;
}
