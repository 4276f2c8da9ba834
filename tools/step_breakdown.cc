// step_breakdown: where a training step's time goes, reported (never
// asserted: timings belong to measurements, not tests).
//   ./bazelw run //tools:step_breakdown -- --json=run.json --model=resnet50 --batch=32
//     the training case's mean step time against the sum of its layers'
//     kernel cases measured in the same run (framework overhead);
//   ./bazelw run //tools:step_breakdown -- --profile --model=resnet50 --batch=32 [--json=run.json]
//     runs the step here with per-layer profiling: how much of the step the
//     profile covers, and each layer's time in the step (against its kernel
//     cases in --json when given); --backend=cuda profiles it on GPU 0
//     (device events around each layer, no CUDA graph); --trace_file=PATH
//     writes one more step as a Chrome trace (train/trace.h). On the CPU it
//     ends on the step's arithmetic rate against the suite's own peak loop
//     in the same precision, measured after the step (bench/cases/peak);
//   --profile --direct (onednn): beside it, each convolution's passes
//     as oneDNN runs them called directly on the same shape and precision
//     (bench/overhead/onednn_direct.h), and the step's layers against them;
//   --profile --infer --batch=1: the inference plan the suite's infer case
//     runs (folded batch norms, conv epilogues, adds in convs: the suite's
//     defaults), --steps batches unprofiled, then each layer timed batch by
//     batch, the profile's sum against the unprofiled batch, layers summed
//     by kind (tools/infer_profile.h); --per_batch_file=PATH writes every
//     profiled batch's layer times.
// Every conv/fc/pool/batchnorm/relu layer has kernel cases (bench/cases/kernel/layer_cases.h:
// the passes the step runs); other nodes (add, concat, dropout, loss) and the
// update have none and are listed as uncovered.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/cases/kernel/layer_cases.h"
#include "bench/cases/peak/peak_cases.h"
#include "bench/overhead/onednn_direct.h"
#include "bench/suite/names.h"
#include "core/compile_log.h"
#include "core/crash_handler.h"
#include "core/device.h"
#include "core/invocation.h"
#include "core/random.h"
#include "core/status.h"
#include "kernels/backends.h"
#include "kernels/kernel.h"
#include "models/summary.h"
#include "models/zoo.h"
#include "tools/infer_profile.h"
#include "tools/report/run_file.h"
#include "train/fusion.h"
#include "train/trace.h"
#include "train/trainer.h"

ABSL_FLAG(std::string, json, "", "Google Benchmark JSON of one run");
ABSL_FLAG(std::string, model, "resnet50", "zoo model of the training case");
ABSL_FLAG(int, batch, 32, "batch size of the training case");
ABSL_FLAG(std::string, precision, "fp32", "precision of the cases");
ABSL_FLAG(int, image_size, 0, "image size override the run used (0: the model's)");
ABSL_FLAG(bool, profile, false, "run the step here with per-layer profiling");
ABSL_FLAG(int, steps, 10, "--profile: profiled steps");
ABSL_FLAG(std::string, trace_file, "",
          "--profile: after the profiled steps, one more step written to this file as a Chrome "
          "trace (Perfetto, chrome://tracing): a slice per layer and pass, the update");
ABSL_FLAG(int, warmup_steps, 2, "--profile: steps before them");
ABSL_FLAG(std::string, backend, "onednn",
          "--profile: backend (onednn or reference on the CPU, cuda on GPU 0)");
ABSL_FLAG(std::string, cpu_conv_algorithm, "timed",
          "--profile on onednn: the convolutions' algorithm (timed, direct, winograd, auto; "
          "as //bench:all's flag)");
ABSL_FLAG(bool, direct, false,
          "--profile on onednn: each convolution against oneDNN called directly on the "
          "same shape and precision (its passes' median of 5 runs)");
ABSL_FLAG(bool, peak, true,
          "--profile on the CPU: the step's arithmetic rate against the peak loop of its "
          "precision (fp32, bf16), measured after the step");
ABSL_FLAG(bool, verbose, false,
          "the compile log on stderr: one line per layer and pass while plans are built "
          "(also CNNBENCH_VERBOSE=1)");
ABSL_FLAG(bool, fuse_relu, true,
          "--profile: fold each ReLU into the batch norm, add or convolution before it, and "
          "each other activation where the backend fuses it (a batch norm's SiLU in training) "
          "(false: the graph's layers as they are)");
ABSL_FLAG(bool, conv_relu, true,
          "--profile, with --fuse_relu: the convolutions take their ReLU too (false: those ReLUs "
          "stay layers)");
ABSL_FLAG(bool, infer, false,
          "--profile: the inference plan's forward pass (as the suite's infer cases), not the "
          "training step");
ABSL_FLAG(bool, fold_batch_norm, true,
          "--profile --infer: fold each batch norm into the convolution before it (as "
          "//bench:all's flag)");
ABSL_FLAG(bool, conv_add, true,
          "--profile --infer: run each residual add in the convolution before it (as "
          "//bench:all's flag)");
ABSL_FLAG(bool, concat_in_place, true,
          "--profile --infer: write a concatenation's inputs in place where the backend allows "
          "it (as //bench:all's flag)");
ABSL_FLAG(std::string, per_batch_file, "",
          "--profile --infer: write each profiled batch's layer times here (tab-separated, one "
          "column per batch)");

namespace cnnbench {
namespace {

// Mean seconds per iteration of every successful case of a run, reduced
// over its repetitions as the report does (tools/report/run_file.h).
absl::StatusOr<std::map<std::string, double>> ReadMeans(const std::string& path) {
  std::vector<std::string> warnings;
  ASSIGN_OR_RETURN_AS_IS(report::RunFile run, report::LoadRunFile(path, &warnings));
  for (const std::string& warning : warnings)
    std::fprintf(stderr, "step_breakdown: %s\n", warning.c_str());
  std::map<std::string, double> means;
  for (const report::FileCase& c : run.cases)
    if (std::optional<double> seconds = report::CaseMean(c, "seconds"))
      means[c.name.ToString()] = *seconds;
  return means;
}

// A layer's kernel-case seconds: forward, and its backward passes summed.
struct CaseSeconds {
  double forward = 0, backward = 0;
  int missing = 0;
};

std::map<int, CaseSeconds> LayerCaseSeconds(const Graph& graph, const std::string& precision,
                                            const std::map<std::string, double>& means) {
  std::map<int, CaseSeconds> out;
  for (const bench::LayerCases& layer : bench::GraphLayerCases(graph)) {
    CaseSeconds& s = out[layer.node];
    for (const bench::LayerPass& pass : layer.passes) {
      const std::string name =
          bench::KernelCaseName(*layer.family, pass.name, precision, "cpu", layer.shape);
      auto it = means.find(name);
      if (it == means.end()) {
        std::fprintf(stderr, "missing kernel case: %s\n", name.c_str());
        ++s.missing;
      } else {
        (pass.pass == bench::Pass::kForward ? s.forward : s.backward) += it->second;
      }
    }
  }
  return out;
}

std::string Uncovered(const Graph& graph) {
  std::map<std::string, int> kinds;
  std::map<int, bool> covered;
  for (const bench::LayerCases& layer : bench::GraphLayerCases(graph)) covered[layer.node] = true;
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (graph.nodes[i].kind == Node::Kind::kOp && !covered.count(static_cast<int>(i)))
      kinds[std::string(OpKind(graph.nodes[i].op))]++;
  std::string text;
  for (const auto& [kind, count] : kinds) absl::StrAppend(&text, " ", kind, " x", count);
  return text;
}

// The training case against the sum of its layers' kernel cases. Returns 1
// when kernel cases are missing from the run.
int CompareWithKernelCases(const Graph& graph, const std::string& precision,
                           const std::map<std::string, double>& means) {
  const std::string train =
      bench::TrainCaseName(absl::GetFlag(FLAGS_model), precision, "synthetic", graph.batch, 0);
  auto step = means.find(train);
  if (step == means.end()) {
    std::fprintf(stderr, "step_breakdown: the run has no successful case %s\n", train.c_str());
    return 2;
  }
  double covered = 0;
  int missing = 0;
  for (const auto& [node, s] : LayerCaseSeconds(graph, precision, means)) {
    covered += s.forward + s.backward;
    missing += s.missing;
  }
  std::printf("training step (mean):            %10.3f ms\n", step->second * 1e3);
  std::printf("sum of its layers' kernel cases: %10.3f ms\n", covered * 1e3);
  std::printf("step / sum of kernels:           %10.4f\n", step->second / covered);
  std::printf("nodes without kernel cases (in the step, not the sum):%s, sgd update\n",
              Uncovered(graph).c_str());
  // The kernel cases are the model's layers as written; on the CPU the
  // training step folds each ReLU after a batch norm or residual add into
  // that layer (train/fusion.h), so those ReLU cases are passes the step
  // does not make (both CPU backends run every fused op).
  const int fusable = FuseRelu(
                          graph, [](const OpDesc&) { return true; }, PlanUse::kTraining)
                          .fused;
  if (fusable > 0)
    std::printf(
        "ReLUs a CPU step fuses into the layer before them (their cases are in the sum, "
        "not in the step): %d\n",
        fusable);
  if (missing > 0) {
    std::printf("%d kernel case(s) missing from the run: the sum is incomplete\n", missing);
    return 1;
  }
  return 0;
}

// Each conv layer of the profile against oneDNN called directly on its
// shape in `dtype` (the layer's descriptor without a fused ReLU; the
// passes the step runs: no backward data where the input needs no
// gradient), one table; directly timed shapes are reused for repeats.
absl::Status CompareWithDirect(const Graph& graph, const std::vector<LayerTime>& profile,
                               int steps, DType dtype) {
  std::map<std::string, int> node_of;
  for (size_t i = 0; i < graph.nodes.size(); ++i) node_of[graph.nodes[i].name] = i;
  std::map<int, bool> runs_backward_data;
  for (const bench::LayerCases& layer : bench::GraphLayerCases(graph))
    for (const bench::LayerPass& pass : layer.passes)
      if (pass.pass == bench::Pass::kBackwardData) runs_backward_data[layer.node] = true;
  // Backward data is timed only for layers that run it (oneDNN 2.6's bf16
  // backward data of a 3-channel first layer is its reference kernel:
  // minutes per call at batch 32).
  struct Direct {
    double fwd = 0, data = -1, weights = 0;  // data < 0: not timed
    std::string fwd_impl, data_impl, weights_impl;
    // Kept until backward data is timed (then freed: a model's largest
    // layers are not held together).
    std::unique_ptr<bench::DirectLayer> layer;
  };
  std::map<std::string, Direct> timed;
  double step_total = 0, direct_total = 0, flops_total = 0;
  std::printf("\nconvolutions against oneDNN called directly (%s; median of 5 runs):\n",
              std::string(DTypeName(dtype)).c_str());
  std::printf("%-28s %10s %10s %10s %10s %9s %9s  %s\n", "layer", "fwd ms", "bwd ms",
              "direct fwd", "direct bwd", "step/dir", "dir GF/s", "direct (fwd / data / weights)");
  for (const LayerTime& t : profile) {
    const std::string node_name = t.name.substr(0, t.name.find('+'));
    auto node = node_of.find(node_name);
    if (node == node_of.end() || graph.nodes[node->second].kind != Node::Kind::kOp) continue;
    OpDesc desc = graph.nodes[node->second].op;
    // Convolutions only: the backend's fc is a GEMM, not oneDNN's inner
    // product (whose 2.6.3 backward data crashed on a 1-input layer).
    auto* conv = std::get_if<ConvDesc>(&desc);
    if (conv == nullptr) continue;
    conv->activation = ActivationKind::kNone;
    const std::string key = OpDescToString(desc);
    auto it = timed.find(key);
    if (it == timed.end()) {
      Direct d;
      ASSIGN_OR_RETURN(d.layer, bench::DirectLayer::Create(desc, dtype));
      d.layer->FillSmallIntegers();
      d.layer->PrepareBackwardWeights();
      d.fwd = d.layer->MedianSeconds(OpPass::kForward, 5);
      d.weights = d.layer->MedianSeconds(OpPass::kBackwardWeights, 5);
      d.fwd_impl = d.layer->implementation(OpPass::kForward);
      d.weights_impl = d.layer->implementation(OpPass::kBackwardWeights);
      it = timed.emplace(key, std::move(d)).first;
    }
    Direct& d = it->second;
    const bool data = runs_backward_data.count(node->second) > 0;
    if (data && d.data < 0) {
      d.data = d.layer->MedianSeconds(OpPass::kBackwardData, 5);
      d.data_impl = d.layer->implementation(OpPass::kBackwardData);
      d.layer.reset();
    }
    const std::string implementation =
        absl::StrCat(d.fwd_impl, " / ", data ? d.data_impl : "-", " / ", d.weights_impl);
    const double fwd = t.forward_seconds / steps, bwd = t.backward_seconds / steps;
    const double direct_bwd = d.weights + (data ? d.data : 0);
    const double flops = bench::DirectFlops(desc) * (data ? 3 : 2);
    step_total += fwd + bwd;
    direct_total += d.fwd + direct_bwd;
    flops_total += flops;
    std::printf("%-28s %10.3f %10.3f %10.3f %10.3f %9.2f %9.1f  %s\n", t.name.c_str(), fwd * 1e3,
                bwd * 1e3, d.fwd * 1e3, direct_bwd * 1e3, (fwd + bwd) / (d.fwd + direct_bwd),
                flops / (d.fwd + direct_bwd) / 1e9, implementation.c_str());
  }
  if (direct_total > 0)
    std::printf(
        "convolutions: step %.1f ms, oneDNN direct %.1f ms (step/direct %.3f; %.1f and "
        "%.1f GFLOP/s)\n",
        step_total * 1e3, direct_total * 1e3, step_total / direct_total,
        flops_total / step_total / 1e9, flops_total / direct_total / 1e9);
  return absl::OkStatus();
}

// The step's arithmetic (3x the model's conv and fc forward FLOPs) per
// second against the peak loop of `precision` measured now.
void PrintAgainstPeak(const Graph& graph, const std::string& precision, double step_seconds) {
  const double flops = 3 * Summarize(graph).forward_flops * static_cast<double>(graph.batch);
  absl::StatusOr<double> peak = bench::MeasurePeakFlops(precision, bench::DefaultPeakThreads());
  if (!peak.ok()) {
    std::printf("peak: %s\n", std::string(peak.status().message()).c_str());
    return;
  }
  const absl::StatusOr<bench::PeakPath> path = bench::FindPeakPath(precision);
  std::printf(
      "step arithmetic: %.1f GFLOP (3 x forward conv+fc) at %.1f GFLOP/s = %.1f%% of the %s "
      "peak measured now (%.1f GFLOP/s, %s, %d threads)\n",
      flops / 1e9, flops / step_seconds / 1e9, 100 * flops / step_seconds / *peak,
      precision.c_str(), *peak / 1e9, path.ok() ? path->Label().c_str() : "?",
      bench::DefaultPeakThreads());
}

// Runs the step here with per-layer profiling and reports how much of it
// the profile covers and each layer's time (against its kernel cases when
// `means` has them).
// The backend --backend and --cpu_conv_algorithm name.
absl::StatusOr<std::unique_ptr<Backend>> ProfileBackend() {
  const std::string backend_name = absl::GetFlag(FLAGS_backend);
  ASSIGN_OR_RETURN(const CpuConvAlgorithm conv_algorithm,
                   ParseCpuConvAlgorithm(absl::GetFlag(FLAGS_cpu_conv_algorithm)));
  OneDnnOptions onednn;
  onednn.conv_algorithm = conv_algorithm;
  return backend_name == "onednn"
             ? CreateOneDnnBackend(onednn)
             : CreateBackend(backend_name,
                             backend_name == "cuda" ? Device::Cuda(0) : Device::Cpu());
}

// --profile --infer: the inference plan, profiled (tools/infer_profile.h).
absl::Status ProfileInferencePlan(const Graph& graph, const std::string& precision_name) {
  InferProfileOptions options;
  ASSIGN_OR_RETURN(options.infer.precision, ParsePrecision(precision_name));
  options.infer.fuse_relu = absl::GetFlag(FLAGS_fuse_relu);
  options.infer.conv_relu = absl::GetFlag(FLAGS_conv_relu);
  options.infer.fold_batch_norm = absl::GetFlag(FLAGS_fold_batch_norm);
  options.infer.conv_add = absl::GetFlag(FLAGS_conv_add);
  options.infer.concat_in_place = absl::GetFlag(FLAGS_concat_in_place);
  options.batches = absl::GetFlag(FLAGS_steps);
  options.warmup = absl::GetFlag(FLAGS_warmup_steps);
  options.per_batch_file = absl::GetFlag(FLAGS_per_batch_file);
  ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, ProfileBackend());
  return ProfileInference(graph, backend.get(), options);
}

absl::Status ProfileStep(const Graph& graph, const std::string& precision_name,
                         const std::map<std::string, double>* means) {
  ASSIGN_OR_RETURN(Precision precision, ParsePrecision(precision_name));
  ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, ProfileBackend());
  TrainOptions options;
  options.precision = precision;
  options.profile = true;
  options.fuse_relu = absl::GetFlag(FLAGS_fuse_relu);
  options.conv_relu = absl::GetFlag(FLAGS_conv_relu);
  options.learning_rate = 0.1 * static_cast<double>(graph.batch) / 256.0;
  ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer,
                   Trainer::Compile(graph, backend.get(), options));
  const Shape& image_shape = graph.nodes[graph.images].output;
  std::vector<float> images(image_shape.num_elements());
  std::vector<int32_t> labels(graph.batch);
  Rng rng(1234);
  for (float& x : images) x = static_cast<float>(rng.Normal());
  for (int32_t& y : labels) y = static_cast<int32_t>(rng.Next() % graph.classes);
  RETURN_IF_ERROR(trainer->SetBatch(images.data(), labels.data()));
  for (int i = 0; i < absl::GetFlag(FLAGS_warmup_steps); ++i) RETURN_IF_ERROR(trainer->Step());
  RETURN_IF_ERROR(trainer->Synchronize());
  trainer->ResetProfile();
  const int steps = absl::GetFlag(FLAGS_steps);  // >= 1: checked in Main
  ASSIGN_OR_RETURN(Timer timer, Timer::Create(backend->stream()));
  RETURN_IF_ERROR(timer.Start());
  for (int i = 0; i < steps; ++i) RETURN_IF_ERROR(trainer->Step());
  RETURN_IF_ERROR(timer.Stop());
  ASSIGN_OR_RETURN(const double total, timer.ElapsedSeconds());
  // A trace that cannot be written (the disk filled since the start) is
  // said after the profile, which is printed either way.
  absl::Status traced;
  if (const std::string trace = absl::GetFlag(FLAGS_trace_file); !trace.empty()) {
    ASSIGN_OR_RETURN(const std::vector<TraceSlice> slices, trainer->TraceStep());
    traced = WriteChromeTrace(trace, slices,
                              absl::StrCat(absl::GetFlag(FLAGS_model), " ", precision_name,
                                           " batch ", graph.batch, " on ", backend->name()));
    if (traced.ok())
      std::printf("trace of one more step (%zu slices): %s\n", slices.size(), trace.c_str());
  }

  const std::map<int, CaseSeconds> cases = means != nullptr
                                               ? LayerCaseSeconds(graph, precision_name, *means)
                                               : std::map<int, CaseSeconds>{};
  std::map<std::string, int> node_of;
  for (size_t i = 0; i < graph.nodes.size(); ++i) node_of[graph.nodes[i].name] = i;
  double profiled = 0;
  std::printf("%-28s %-22s %10s %10s", "layer", "implementation", "fwd ms", "bwd ms");
  if (means != nullptr) std::printf(" %10s %10s %8s", "case fwd", "case bwd", "case/step");
  std::printf("\n");
  for (const LayerTime& t : trainer->profile()) {
    const double fwd = t.forward_seconds / steps, bwd = t.backward_seconds / steps;
    profiled += fwd + bwd;
    std::printf("%-28s %-22s %10.3f %10.3f", t.name.c_str(), t.implementation.c_str(), fwd * 1e3,
                bwd * 1e3);
    auto node = node_of.find(t.name);
    auto c = node == node_of.end() ? cases.end() : cases.find(node->second);
    if (c != cases.end() && c->second.missing == 0 && fwd + bwd > 0)
      std::printf(" %10.3f %10.3f %8.2f", c->second.forward * 1e3, c->second.backward * 1e3,
                  (c->second.forward + c->second.backward) / (fwd + bwd));
    if (!t.backward_implementation.empty())
      std::printf("  (backward: %s)", t.backward_implementation.c_str());
    std::printf("\n");
  }
  const double step = total / steps;
  std::printf("activations fused into the layer before them: %d\n", trainer->fused_relus());
  const std::vector<std::string> reordered = trainer->ReorderedEdges();
  std::printf("reordered edges (layout changes a step makes): %zu%s%s\n", reordered.size(),
              reordered.empty() ? "" : ": ", absl::StrJoin(reordered, ", ").c_str());
  std::printf("profiled step (mean of %d):  %10.3f ms\n", steps, step * 1e3);
  std::printf("sum of the profile:          %10.3f ms (%.1f%% of the step)\n", profiled * 1e3,
              100 * profiled / step);
  if (absl::GetFlag(FLAGS_direct)) {
    RETURN_IF_ERROR(
        CompareWithDirect(graph, trainer->profile(), steps, ActivationType(precision)));
  }
  if (absl::GetFlag(FLAGS_peak) && backend->device().is_cpu() &&
      (precision_name == "fp32" || precision_name == "bf16"))
    PrintAgainstPeak(graph, precision_name, step);
  return traced;
}

int Main(int argc, char** argv) {
  InstallCrashHandler(argv[0]);
  ChangeToInvocationDirectory();  // --json is relative to the user's folder
  absl::SetProgramUsageMessage(
      "step_breakdown --profile [--model=resnet50 --batch=32 --precision=fp32] "
      "[--json=run.json] [--trace_file=step.json]: where a training step's time goes, per layer");
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_verbose)) SetCompileLog(true);
  // Counts below their least value are refused, never replaced by a default
  // the header would then misstate.
  for (const auto& [flag, value, least] :
       {std::tuple<const char*, int, int>{"--batch", absl::GetFlag(FLAGS_batch), 1},
        {"--steps", absl::GetFlag(FLAGS_steps), 1},
        {"--warmup_steps", absl::GetFlag(FLAGS_warmup_steps), 0},
        {"--image_size", absl::GetFlag(FLAGS_image_size), 0}}) {
    if (value < least) {
      std::fprintf(stderr, "step_breakdown: %s=%d: at least %d\n", flag, value, least);
      return 2;
    }
  }
  const std::string path = absl::GetFlag(FLAGS_json);
  const bool profile = absl::GetFlag(FLAGS_profile);
  if (absl::GetFlag(FLAGS_direct) && (!profile || absl::GetFlag(FLAGS_backend) != "onednn")) {
    std::fprintf(stderr,
                 "step_breakdown: --direct compares a profiled oneDNN step: add --profile "
                 "(with --backend=onednn)\n");
    return 2;
  }
  if (absl::GetFlag(FLAGS_infer) &&
      (!profile || absl::GetFlag(FLAGS_direct) || !absl::GetFlag(FLAGS_trace_file).empty() ||
       !path.empty())) {
    std::fprintf(stderr,
                 "step_breakdown: --infer profiles the inference plan: add --profile (without "
                 "--direct, --trace_file or --json; the suite's --trace_file traces an infer "
                 "case)\n");
    return 2;
  }
  if (!absl::GetFlag(FLAGS_per_batch_file).empty() && !absl::GetFlag(FLAGS_infer)) {
    std::fprintf(stderr, "step_breakdown: --per_batch_file is for --profile --infer\n");
    return 2;
  }
  if (!absl::GetFlag(FLAGS_trace_file).empty() && !profile) {
    std::fprintf(stderr, "step_breakdown: --trace_file traces a profiled step: add --profile\n");
    return 2;
  }
  // The trace's path checked before anything is measured.
  if (const std::string trace = absl::GetFlag(FLAGS_trace_file); !trace.empty()) {
    if (absl::Status usable = CheckTraceFilePath(trace, "--trace_file"); !usable.ok()) {
      std::fprintf(stderr, "step_breakdown: %s\n", std::string(usable.message()).c_str());
      return 2;
    }
  }
  if (path.empty() && !profile) {
    std::fprintf(stderr, "step_breakdown: give --json=run.json, --profile, or both\n");
    return 2;
  }
  const std::string precision = absl::GetFlag(FLAGS_precision);
  ModelOptions mo;
  mo.batch = absl::GetFlag(FLAGS_batch);
  mo.image_size = absl::GetFlag(FLAGS_image_size);
  auto graph = BuildModel(absl::GetFlag(FLAGS_model), mo);
  if (!graph.ok()) {
    std::fprintf(stderr, "step_breakdown: %s\n", std::string(graph.status().message()).c_str());
    return 2;
  }
  std::printf("model %s batch %lld (%s)%s%s\n", absl::GetFlag(FLAGS_model).c_str(),
              static_cast<long long>(mo.batch), precision.c_str(), path.empty() ? "" : ": ",
              path.c_str());
  std::map<std::string, double> means;
  int status = 0;
  if (!path.empty()) {
    auto read = ReadMeans(path);
    if (!read.ok()) {
      std::fprintf(stderr, "step_breakdown: %s\n", std::string(read.status().message()).c_str());
      return 2;
    }
    means = *std::move(read);
    status = CompareWithKernelCases(*graph, precision, means);
    if (status == 2) return status;
  }
  if (profile) {
    absl::Status s = absl::GetFlag(FLAGS_infer)
                         ? ProfileInferencePlan(*graph, precision)
                         : ProfileStep(*graph, precision, path.empty() ? nullptr : &means);
    if (!s.ok()) {
      std::fprintf(stderr, "step_breakdown: %s\n", std::string(s.message()).c_str());
      return 2;
    }
  }
  return status;
}

}  // namespace
}  // namespace cnnbench

int main(int argc, char** argv) { return cnnbench::Main(argc, argv); }
