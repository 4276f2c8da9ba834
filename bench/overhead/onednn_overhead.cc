// //bench:onednn_overhead: what our Kernel interface costs over oneDNN.
// Convolutions and fully connected layers, forward, backward data and
// backward weights, each run through the oneDNN backend's Kernel and as the
// same oneDNN primitives called directly (bench/overhead/onednn_direct.h).
// Both paths are checked to give the same result, bit for bit, before
// timing; at the end the ratio ours/direct of FLOP/s (median over
// repetitions) is printed per pass. Target: >= 0.95.
//   --model=NAME [--batch=32]: every distinct convolution of the zoo model
//     (default: a 3x3 convolution, 32x64x56x56 -> 64 SAME, and a 2048^3 fc);
//   --precision=fp32,bf16: the precisions (bf16 where oneDNN runs it: the
//     CPU has avx512_bf16 and ONEDNN_MAX_CPU_ISA does not cap it below).
//
// Each shape is timed as 3 passes x 3 cases (ours, direct, paired) x the
// repetitions x at least the minimum time: the two fixed shapes at 10 x 1 s
// (at least 3 minutes), a model's every distinct convolution at 3 x 0.2 s
// (at least 5.4 s a shape; resnet20's 6 took 2 minutes on 2 busy cores,
// where 10 x 1 s, at least 9 minutes, had not ended after 150 s), unless
// --benchmark_repetitions or --benchmark_min_time say otherwise. The plan
// and its least time are printed first.
//
// Exit status: 0 when every pass was measured (whether the target is met
// is a measurement, printed, not a verdict); 1 when some case could not
// run or our result differed from oneDNN's; 2 for bad flags or a precision
// this machine cannot run (said why; nothing is measured). Messages carry
// no source locations; CNNBENCH_VERBOSE=1 keeps them.
//
//   ./bazelw run -c opt //bench:onednn_overhead [-- --model=resnet50_v1.5 --precision=bf16
//       --benchmark_repetitions=3 --benchmark_min_time=0.2]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "bench/output/context.h"
#include "bench/overhead/onednn_direct.h"
#include "bench/cases/kernel/layer_cases.h"
#include "benchmark/benchmark.h"
#include "core/compile_log.h"
#include "core/device.h"
#include "core/onednn_isa.h"
#include "core/platform.h"
#include "core/status.h"
#include "dnnl.hpp"
#include "kernels/desc.h"
#include "kernels/kernel.h"
#include "kernels/onednn/onednn_backend.h"
#include "models/summary.h"
#include "models/zoo.h"

ABSL_FLAG(std::string, model, "",
          "every distinct convolution of this zoo model (default: a 3x3 conv and a 2048^3 fc)");
ABSL_FLAG(int, batch, 32, "--model: the batch size");
ABSL_FLAG(std::vector<std::string>, precision, std::vector<std::string>({"fp32"}),
          "element types, comma separated: fp32, bf16");

namespace cnnbench::bench {
namespace {

using dnnl::memory;

constexpr Pass kPasses[] = {Pass::kForward, Pass::kBackwardData, Pass::kBackwardWeights};

// What a user reads of an error: its message without the status code or
// the source locations it gathered on the way up (CNNBENCH_VERBOSE=1, the
// programs' verbose switch, keeps the whole status).
std::string Plain(const absl::Status& status) {
  return CompileLogEnabled() ? status.ToString() : WithoutSourceLocations(status.message());
}

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

// Our path: the backend's kernel over buffers sized by its signature.
struct OurLayer {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Kernel> kernel;
  Buffer x, y, dx, dy, w, dw, bias, dbias, scratch;
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

// Small integers in [-2, 2], exact in fp32 and bf16, in the element type
// `dtype` (fp32 or bf16 bits): every product and sum is exact in fp32, so
// the two paths must agree to the bit whatever order their kernels add in
// (bf16 outputs: the same fp32 sum rounded the same way).
void FillIntegers(void* data, size_t bytes, int seed, DType dtype) {
  auto value = [seed](size_t i) { return static_cast<int>((i * 7 + seed * 13) % 5) - 2; };
  if (dtype == DType::kBF16) {
    static constexpr uint16_t kBf16[] = {0xc000, 0xbf80, 0x0000, 0x3f80, 0x4000};  // -2..2
    uint16_t* h = static_cast<uint16_t*>(data);
    for (size_t i = 0; i < bytes / sizeof(uint16_t); ++i) h[i] = kBf16[value(i) + 2];
    return;
  }
  float* f = static_cast<float*>(data);
  for (size_t i = 0; i < bytes / sizeof(float); ++i) f[i] = static_cast<float>(value(i));
}

// A layer set up both ways, with identical inputs, and checked to agree.
struct Case {
  std::string name;       // "<precision>/<descriptor>"
  double flops = 0;       // per pass (the three passes cost the same)
  int layers = 1;         // layers of the model with this descriptor
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
  const size_t rank = md.dims().size();
  memory::format_tag tag = rank == 4   ? memory::format_tag::abcd
                           : rank == 2 ? memory::format_tag::ab
                                       : memory::format_tag::a;
  return md == memory::desc(md.dims(), md.data_type(), tag);
}

absl::Status CheckSame(const char* what, const Buffer& ours, memory& direct) {
  if (ours.size() < direct.get_desc().get_size() ||
      std::memcmp(ours.data(), direct.get_data_handle(), direct.get_desc().get_size()) != 0)
    return absl::InternalError(absl::StrCat(what, ": our result differs from oneDNN's"));
  return absl::OkStatus();
}

absl::Status SetUp(const OpDesc& desc, DType dtype, Case& c) {
  c.name = absl::StrCat(DTypeName(dtype), "/", OpDescToString(desc));
  c.flops = DirectFlops(desc);
  OurLayer& o = c.ours;
  ASSIGN_OR_RETURN(o.backend, CreateOneDnnBackend());  // direct convolution, as the baseline
  ASSIGN_OR_RETURN(o.kernel, o.backend->Create(desc, dtype, {}));
  const KernelSignature& sig = o.kernel->signature();
  const bool bias = sig.params.size() > 1;
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
  if (bias) {
    ASSIGN_OR_RETURN(o.bias, Buffer::Allocate(cpu, sig.params[1].bytes));
    ASSIGN_OR_RETURN(o.dbias, Buffer::Allocate(cpu, sig.params[1].bytes));
    o.args.params.push_back(o.bias.data());
    o.args.dparams.push_back(o.dbias.data());
    FillIntegers(o.bias.data(), o.bias.size(), 4, sig.params[1].dtype);
  }
  FillIntegers(o.x.data(), o.x.size(), 1, dtype);
  FillIntegers(o.w.data(), o.w.size(), 2, dtype);
  FillIntegers(o.dy.data(), o.dy.size(), 3, dtype);

  ASSIGN_OR_RETURN(c.direct, DirectLayer::Create(desc, dtype));
  DirectLayer& d = *c.direct;
  struct Pair {
    const TensorSpec& spec;
    const Buffer& buffer;
    memory& direct;
  };
  std::vector<Pair> inputs = {{sig.inputs[0], o.x, d.arg(Pass::kForward, DNNL_ARG_SRC)},
                              {sig.params[0], o.w, d.arg(Pass::kForward, DNNL_ARG_WEIGHTS)},
                              {sig.output, o.dy, d.arg(Pass::kBackwardData, DNNL_ARG_DIFF_DST)}};
  if (bias) inputs.push_back({sig.params[1], o.bias, d.arg(Pass::kForward, DNNL_ARG_BIAS)});
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
  if (bias)
    RETURN_IF_ERROR(
        CheckSame("backward weights dbias", o.dbias, d.arg(Pass::kBackwardWeights, DNNL_ARG_DIFF_BIAS)));
  return absl::OkStatus();
}

// How long each case runs: repetitions of at least min_time seconds each,
// the defaults unless the command line gives --benchmark_repetitions or
// --benchmark_min_time (`given` says which it gave).
struct Timing {
  int repetitions = 10;
  double min_time = 1;
  bool repetitions_given = false, min_time_given = false;
};

// The value of `--name=value` (or `--name value`) on the command line, its
// last one; none when absent. Read before Google Benchmark and Abseil parse
// it: the defaults go in front of what the user gave.
std::optional<std::string> CommandLineValue(int argc, char** argv, absl::string_view name) {
  std::optional<std::string> value;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (!absl::ConsumePrefix(&arg, "--") && !absl::ConsumePrefix(&arg, "-")) continue;
    if (!absl::ConsumePrefix(&arg, name)) continue;
    if (absl::ConsumePrefix(&arg, "=")) {
      value = std::string(arg);
    } else if (arg.empty()) {
      value = i + 1 < argc ? std::string(argv[i + 1]) : std::string();
    }
  }
  return value;
}

// The defaults, sized to what is timed: 3 passes x 3 cases (ours, direct,
// paired) per shape. The two fixed shapes, large layers, get 10
// repetitions of 1 s (docs/results' setting); a model's every distinct
// convolution, from 6 (resnet20) to dozens, gets 3 of 0.2 s, or a model
// would take 90 s a shape.
Timing ChooseTiming(int argc, char** argv) {
  Timing t;
  if (!CommandLineValue(argc, argv, "model").value_or("").empty()) {
    t.repetitions = 3;
    t.min_time = 0.2;
  }
  if (std::optional<std::string> given = CommandLineValue(argc, argv, "benchmark_repetitions")) {
    t.repetitions_given = true;
    if (!absl::SimpleAtoi(*given, &t.repetitions)) t.repetitions = 0;  // unknown here
  }
  if (std::optional<std::string> given = CommandLineValue(argc, argv, "benchmark_min_time")) {
    t.min_time_given = true;
    if (!absl::SimpleAtod(absl::StripSuffix(*given, "s"), &t.min_time)) t.min_time = 0;
  }
  return t;
}

void Register(Case& c) {
  for (Pass pass : kPasses) {
    for (bool ours : {true, false}) {
      const std::string name = absl::StrCat("onednn_overhead/", c.name, "/", PassName(pass), "/",
                                            ours ? "ours" : "direct");
      benchmark::RegisterBenchmark(name.c_str(),
                                   [&c, pass, ours](benchmark::State& state) {
                                     if (!c.status.ok()) {
                                       state.SkipWithError(Plain(c.status).c_str());
                                       return;
                                     }
                                     for (auto _ : state) {
                                       if (ours) {
                                         absl::Status status = c.ours.Run(pass);
                                         if (!status.ok()) {
                                           state.SkipWithError(Plain(status).c_str());
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
            state.SkipWithError(Plain(c.status).c_str());
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
                  state.SkipWithError(Plain(status).c_str());
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

// One descriptor in one element type, and how many layers of the model have it.
struct CaseShape {
  std::string desc;
  DType dtype = DType::kF32;
  int layers = 1;
};

// The descriptors the flags ask for: --model's distinct convolutions
// at --batch (or the two fixed ones), in each of --precision's types; a
// precision this machine cannot run is refused here, before any is timed.
absl::StatusOr<std::vector<CaseShape>> CaseShapes(const PlatformInfo& info) {
  std::vector<std::pair<std::string, int>> descs;
  const std::string model = absl::GetFlag(FLAGS_model);
  if (model.empty()) {
    descs = {{"conv:mb32_ic64oc64_ih56oh56kh3sh1ph1_iw56ow56kw3sw1pw1", 1},  // 3x3, SAME
             {"fc:mb2048ic2048oc2048_nobias", 1}};                         // the 2048^3 GEMM
  } else {
    if (absl::GetFlag(FLAGS_batch) < 1)
      return absl::InvalidArgumentError(
          absl::StrCat("--batch=", absl::GetFlag(FLAGS_batch), ": at least 1"));
    ModelOptions options;
    options.batch = absl::GetFlag(FLAGS_batch);
    ASSIGN_OR_RETURN_AS_IS(const Graph graph, BuildModel(model, options));
    for (const KernelShape& k : DistinctKernelShapes(graph))
      if (absl::StartsWith(k.desc, "conv:")) descs.emplace_back(k.desc, k.count);
  }
  std::vector<CaseShape> shapes;
  for (const std::string& name : absl::GetFlag(FLAGS_precision)) {
    if (name != "fp32" && name != "bf16")
      return absl::InvalidArgumentError(
          absl::StrCat("--precision=", name, ": fp32 or bf16 (oneDNN's CPU precisions)"));
    if (name == "bf16") {
      // The CPU lacks avx512_bf16, or ONEDNN_MAX_CPU_ISA caps oneDNN below
      // it: the two call for different remedies, and the message says which.
      if (const std::string why = OnednnBf16Unavailable(); !why.empty())
        return absl::UnimplementedError(absl::StrCat(
            "--precision=bf16: bf16 is unsupported here: ", why,
            OnednnIsaCap().empty() ? "" : "; run without the cap to measure bf16"));
    }
    for (const auto& [desc, layers] : descs)
      shapes.push_back({desc, name == "bf16" ? DType::kBF16 : DType::kF32, layers});
  }
  return shapes;
}

// The table at the end: ours/direct per case and pass, and whether the
// target is met; judged only when every pass was measured. Returns how
// many passes were not.
int PrintRatioTable(const RatioReporter& reporter,
                    const std::vector<std::pair<std::string, int>>& ran) {
  // Two estimates of ours/direct: the ratio of the separate cases' median
  // FLOP/s, and the median over repetitions of the paired case's ratio
  // (alternating calls; the steadier one on a shared machine).
  std::printf(
      "\nours/direct (target >= 0.95): separate = ratio of the median FLOP/s of the"
      " ours and direct cases;\npaired = median over repetitions of the paired case,"
      " which alternates the two calls; layers = the model's layers of that shape\n");
  std::printf("%-64s %-11s %6s %10s %12s %9s %7s %s\n", "layer", "pass", "layers", "ours GF/s",
              "direct GF/s", "separate", "paired", "repetitions");
  bool separate_met = true, paired_met = true;
  int unmeasured = 0;
  for (const auto& [name, layers] : ran) {
    for (Pass pass : kPasses) {
      const std::string prefix = absl::StrCat("onednn_overhead/", name, "/", PassName(pass), "/");
      const double ours = reporter.Median(prefix + "ours");
      const double direct = reporter.Median(prefix + "direct");
      const double paired = reporter.Median(prefix + "paired");
      if (ours == 0 || direct == 0 || paired == 0) {
        std::printf("%-64s %-11s %6d %10s %12s %9s %7s\n", name.c_str(), PassName(pass), layers,
                    "-", "-", "n/a", "n/a");
        ++unmeasured;
        continue;
      }
      separate_met = separate_met && ours / direct >= 0.95;
      paired_met = paired_met && paired >= 0.95;
      std::printf("%-64s %-11s %6d %10.1f %12.1f %9.3f %7.3f %zu/%zu/%zu\n", name.c_str(),
                  PassName(pass), layers, ours / 1e9, direct / 1e9, ours / direct, paired,
                  reporter.Count(prefix + "ours"), reporter.Count(prefix + "direct"),
                  reporter.Count(prefix + "paired"));
    }
  }
  if (unmeasured > 0) {
    std::printf("target not judged: %d of %zu passes were not measured (why: above)\n", unmeasured,
                ran.size() * std::size(kPasses));
    return unmeasured;
  }
  std::printf("target %s on every pass by the paired ratio, %s by the separate ratio\n",
              paired_met ? "met" : "NOT met", separate_met ? "met" : "NOT met");
  return 0;
}

// The plan, before anything is timed: how many cases, and the least time
// they take at the repetitions and minimum time they run.
void PrintPlan(size_t shapes, const Timing& t) {
  const size_t cases = shapes * std::size(kPasses) * 3;  // ours, direct, paired
  std::printf("timing %zu shapes x %zu passes x 3 cases (ours, direct, paired) = %zu cases, ", shapes,
              std::size(kPasses), cases);
  std::printf("%d repetitions%s of at least %g s%s each", t.repetitions,
              t.repetitions_given ? " (--benchmark_repetitions)" : "", t.min_time,
              t.min_time_given ? " (--benchmark_min_time)" : "");
  if (t.repetitions > 0 && t.min_time > 0)
    std::printf(": at least %.1f s", static_cast<double>(cases) * t.repetitions * t.min_time);
  std::printf("\n");
}

}  // namespace
}  // namespace cnnbench::bench

int main(int argc, char** argv) {
  using namespace cnnbench;
  using namespace cnnbench::bench;
  absl::SetProgramUsageMessage(
      "onednn_overhead [--model=NAME [--batch=32]] [--precision=fp32,bf16] [--benchmark_*]: "
      "the oneDNN backend's kernels against oneDNN's primitives called directly, bit for bit, "
      "then timed (default: 10 repetitions of 1 s for the two fixed shapes, 3 of 0.2 s for a "
      "model's; --benchmark_repetitions and --benchmark_min_time override). Exit status 0 when "
      "every pass was measured, 1 when one was not, 2 for bad flags or a precision this machine "
      "cannot run");
  // --help lists this program's flags (Abseil's usage of this file): Google
  // Benchmark's Initialize would take it first and print only its own.
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "bench/overhead/onednn_overhead");
  };
  absl::SetFlagsUsageConfig(usage);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-help") == 0) {
      char* help[] = {argv[0], argv[i]};
      absl::ParseCommandLine(2, help);  // prints the usage and exits
    }
  }
  // The --benchmark_* flags are taken first, then ours (absl reports any
  // other). The defaults go first, so that the command line's flags win:
  // the timing sized to what is timed, repetitions in random order (drift
  // on a shared machine then hits both paths alike).
  const Timing timing = ChooseTiming(argc, argv);
  std::vector<char*> args = {argv[0]};
  std::string repetitions = absl::StrCat("--benchmark_repetitions=", timing.repetitions);
  std::string min_time = absl::StrCat("--benchmark_min_time=", timing.min_time);
  std::string interleave = "--benchmark_enable_random_interleaving=true";
  for (std::string* flag : {&repetitions, &min_time, &interleave}) args.push_back(flag->data());
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  absl::ParseCommandLine(count, args.data());
  const PlatformInfo info = AddPlatformContext("");
  absl::StatusOr<std::vector<CaseShape>> shapes = CaseShapes(info);
  if (!shapes.ok()) {
    std::fprintf(stderr, "onednn_overhead: %s\n", Plain(shapes.status()).c_str());
    return 2;
  }
  std::printf("onednn_overhead on %s (%s, %d CPUs), oneDNN %s\n", info.host_name.c_str(),
              info.cpu_model.c_str(), info.cpu_cores, info.onednn_version.c_str());
  PrintPlan(shapes->size(), timing);
  // One descriptor at a time: set up (both paths' buffers), registered, run,
  // then freed, so a model's largest layers are never held together.
  RatioReporter reporter;
  std::vector<std::pair<std::string, int>> ran;  // case name, layers
  bool failed = false;
  for (const CaseShape& shape : *shapes) {
    Case c;
    c.layers = shape.layers;
    absl::StatusOr<OpDesc> desc = ParseOpDesc(shape.desc);
    c.status = desc.ok() ? SetUp(*desc, shape.dtype, c) : desc.status();
    if (c.name.empty()) c.name = absl::StrCat(DTypeName(shape.dtype), "/", shape.desc);
    failed = failed || !c.status.ok();
    std::printf("%s: %s; %s\n", c.name.c_str(),
                c.status.ok() ? "ours and direct agree to the bit on every pass"
                              : Plain(c.status).c_str(),
                c.status.ok() ? c.ours.kernel->implementation().c_str() : "");
    std::fflush(stdout);
    Register(c);
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::ClearRegisteredBenchmarks();
    ran.emplace_back(c.name, c.layers);
  }
  const int unmeasured = PrintRatioTable(reporter, ran);
  benchmark::Shutdown();
  return failed || unmeasured > 0 ? 1 : 0;
}
