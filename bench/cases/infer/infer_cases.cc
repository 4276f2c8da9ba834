// infer/...: the inference cases (bench/cases/infer/infer_cases.h).
#include "bench/cases/infer/infer_cases.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/cases/input/input_cases.h"
#include "bench/cli/flag_read.h"
#include "bench/cli/flag_values.h"
#include "bench/harness/harness.h"
#include "bench/harness/iteration_stats.h"
#include "bench/suite/names.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/random.h"
#include "core/status.h"
#include "input/pipeline/dataset_maker.h"
#include "input/pipeline/pipeline.h"
#include "input/pipeline/sources.h"
#include "models/summary.h"
#include "models/zoo.h"
#include "train/inference.h"
#include "train/trace.h"

// Defined beside the only code that reads them (ApplyInferFlags).
ABSL_FLAG(std::string, infer_models, "",
          "models of the inference cases, e.g. resnet50_v1.5,mobilenet (default: --models when "
          "given, else the preset's)");
ABSL_FLAG(std::string, infer_batch_sizes, "",
          "batch sizes of the inference cases, e.g. 1,8,64 (default: --batch_sizes when given, "
          "else the preset's; without one, 1 and each model's training batch)");
ABSL_FLAG(int, infer_warmup, -1, "untimed batches before an inference case's timed ones");
ABSL_FLAG(int, infer_iterations, -1,
          "timed batches per repetition of an inference case, each timed on its own (the "
          "latency percentiles want at least 100)");
ABSL_FLAG(bool, infer_include_copy, cnnbench::bench::InferCaseOptions().include_copy,
          "time each batch's host-to-device copy (from pinned memory on a GPU) with its forward "
          "pass: end-to-end latency; off: the batch is resident on the device");

ABSL_FLAG(bool, fold_batch_norm, cnnbench::bench::InferCaseOptions().fold_batch_norm,
          "inference cases fold each batch norm after a convolution into its weights and bias "
          "(false: the unfolded plan, the baseline the fold is measured against)");
ABSL_FLAG(bool, conv_relu, cnnbench::bench::InferCaseOptions().conv_relu,
          "inference and training cases run a ReLU that only reads a convolution as that "
          "convolution's epilogue (oneDNN post-op, its backward masking dy once for both passes; "
          "the cuda backend's epilogue kernel, in inference only); false: a layer of its own, the "
          "baseline the fusion is measured against");
ABSL_FLAG(bool, conv_add, cnnbench::bench::InferCaseOptions().conv_add,
          "inference cases run a residual add whose later input is a convolution read by nothing "
          "else inside that convolution (oneDNN's sum post-op, before its ReLU; the output written "
          "over the shortcut's buffer); false: the add a layer of its own, the baseline the "
          "fusion is measured against");
ABSL_FLAG(bool, concat_in_place, cnnbench::bench::InferCaseOptions().concat_in_place,
          "inference cases have each layer read only by a channel concatenation write its output "
          "in place, at its channel offset in the concatenation's output, where the backend "
          "allows it (batch 1 on the CPU), so the concatenation copies nothing; false: every "
          "input copied in, the baseline this is measured against");

namespace cnnbench::bench {
namespace {

struct InferCase {
  std::string model;
  Precision precision = Precision::kFp32;
  std::string data;
  int64_t batch = 0;
  int gpus = 0;  // 0: the CPU; 1: one GPU
};

// data:real: the validation subset of --data_dir (its format detected), or
// of the data set the suite generates, with evaluation preprocessing.
absl::StatusOr<std::unique_ptr<input::InputPipeline>> MakeEvalPipeline(
    const Graph& graph, const SuiteOptions& options) {
  ASSIGN_OR_RETURN(input::PipelineOptions p, ModelPipelineOptions(graph, options, "validation"));
  p.decode_threads = std::max(1, options.train.input_cores);
  return input::InputPipeline::Create(p);
}

class InferWorkload : public Workload {
 public:
  static absl::StatusOr<std::unique_ptr<Workload>> Prepare(const InferCase& c,
                                                           const SuiteOptions& options);

  const Stream& stream() const override { return backend_->stream(); }
  // One batch: its copy first when timed end to end.
  absl::Status Run() override {
    if (options_.infer.include_copy)
      RETURN_IF_ERROR(inferencer_->SetBatch(static_cast<const float*>(host_images_.data())));
    return inferencer_->Run();
  }
  // Real data: the last batch's accuracy, then the next batch (and, with a
  // resident batch, its upload), none of it timed.
  absl::Status BetweenIterations() override;
  absl::Status Report(benchmark::State& state) override;
  double items_per_iteration() const override { return static_cast<double>(case_.batch); }

 private:
  InferWorkload(const InferCase& c, const SuiteOptions& options) : case_(c), options_(options) {}
  // Real data: the pipeline's next batch into the host buffer (and the
  // device, unless the copy is timed).
  absl::Status NextBatch();

  InferCase case_;
  const SuiteOptions& options_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Inferencer> inferencer_;  // after backend_: destroyed first
  std::unique_ptr<input::InputPipeline> pipeline_;
  Buffer host_images_;           // the batch on the host: pinned on a GPU
  std::vector<int32_t> labels_;  // real data: the labels of the batch set last
  int64_t labelled_ = 0;         // of its rows, those the pipeline filled
  int64_t evaluated_ = 0, top1_ = 0, top5_ = 0;
  double flops_per_image_ = 0;
  bool traced_ = false;  // --trace_file: written once, after the first repetition
};

absl::Status InferWorkload::NextBatch() {
  ASSIGN_OR_RETURN(const input::Batch* batch, pipeline_->Next());
  std::memcpy(host_images_.data(), batch->images, host_images_.size());
  labels_.assign(batch->labels, batch->labels + batch->capacity);
  labelled_ = batch->size;
  if (!options_.infer.include_copy)
    RETURN_IF_ERROR(inferencer_->SetBatch(static_cast<const float*>(host_images_.data())));
  return absl::OkStatus();
}

absl::Status InferWorkload::BetweenIterations() {
  if (pipeline_ == nullptr) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<float> logits, inferencer_->Logits());
  const int64_t classes = inferencer_->classes();
  logits.resize(labelled_ * classes);
  const std::vector<int32_t> labels(labels_.begin(), labels_.begin() + labelled_);
  ASSIGN_OR_RETURN(const int64_t top1, CountInTopK(logits, labels, classes, 1));
  ASSIGN_OR_RETURN(
      const int64_t top5,
      CountInTopK(logits, labels, classes, static_cast<int>(std::min<int64_t>(5, classes))));
  evaluated_ += labelled_;
  top1_ += top1;
  top5_ += top5;
  return NextBatch();
}

absl::StatusOr<std::unique_ptr<Workload>> InferWorkload::Prepare(const InferCase& c,
                                                                 const SuiteOptions& options) {
  std::unique_ptr<InferWorkload> w(new InferWorkload(c, options));
  ModelOptions mo;
  mo.batch = c.batch;
  mo.image_size = options.image_size;
  ASSIGN_OR_RETURN(Graph graph, BuildModel(c.model, mo));
  w->flops_per_image_ = Summarize(graph).forward_flops;
  const Device device = c.gpus > 0 ? Device::Cuda(0) : Device::Cpu();
  ASSIGN_OR_RETURN(w->backend_, CreateCaseBackend(options, device));
  InferOptions io;
  io.precision = c.precision;
  io.fuse_relu = options.train.fuse_relu;
  io.cuda_graph = options.cuda.graph;
  io.fold_batch_norm = options.infer.fold_batch_norm;
  io.conv_relu = options.infer.conv_relu;
  io.conv_add = options.infer.conv_add;
  io.concat_in_place = options.infer.concat_in_place;
  ASSIGN_OR_RETURN(w->inferencer_, Inferencer::Compile(graph, w->backend_.get(), io));
  const size_t image_bytes = graph.nodes[graph.images].output.num_elements() * sizeof(float);
  if (device.is_cpu()) {
    ASSIGN_OR_RETURN(w->host_images_, Buffer::Allocate(Device::Cpu(), image_bytes));
  } else {
    ASSIGN_OR_RETURN(w->host_images_, Buffer::AllocatePinnedHost(image_bytes));
  }
  if (c.data == "real") {
    ASSIGN_OR_RETURN(w->pipeline_, MakeEvalPipeline(graph, options));
    RETURN_IF_ERROR(w->NextBatch());
  } else {
    // One batch of noise, as tf_cnn_benchmarks' synthetic images.
    Rng rng(1234);
    float* pixels = static_cast<float*>(w->host_images_.data());
    for (size_t i = 0; i < image_bytes / sizeof(float); ++i)
      pixels[i] = static_cast<float>(rng.Normal());
    RETURN_IF_ERROR(w->inferencer_->SetBatch(pixels));
  }
  // A replayed graph is captured on each input slot's second run: the warm-up
  // covers both slots' captures when batches alternate between them.
  int warmup = options.infer.warmup;
  if (!device.is_cpu() && options.cuda.graph)
    warmup = std::max(warmup, options.infer.include_copy || w->pipeline_ != nullptr ? 4 : 2);
  for (int i = 0; i < warmup; ++i) {
    RETURN_IF_ERROR(w->Run());
    RETURN_IF_ERROR(w->BetweenIterations());
  }
  RETURN_IF_ERROR(w->inferencer_->Synchronize());
  w->evaluated_ = w->top1_ = w->top5_ = 0;  // the timed batches' accuracy only
  return std::unique_ptr<Workload>(std::move(w));
}

// What the inference plan changed from the graph, for the label: folded
// batch norms, fused activations, adds in convolutions, concatenations in
// place, dropouts left out.
std::string PlanNote(const Inferencer& inferencer) {
  std::string note;
  if (inferencer.folded_batch_norms() > 0)
    absl::StrAppend(&note, ", ", inferencer.folded_batch_norms(), " batch norms folded");
  if (inferencer.fused_relus() > 0) {
    absl::StrAppend(&note, ", ", inferencer.fused_relus(), " ReLUs fused");
    if (inferencer.conv_relu_epilogues() > 0)
      absl::StrAppend(&note, " (", inferencer.conv_relu_epilogues(), " as conv epilogues)");
  }
  if (inferencer.conv_residual_adds() > 0)
    absl::StrAppend(&note, ", ", inferencer.conv_residual_adds(), " adds in the conv before them");
  if (inferencer.concats_in_place() > 0)
    absl::StrAppend(&note, ", ", inferencer.concats_in_place(), " concats in place");
  if (inferencer.identities_skipped() > 0)
    absl::StrAppend(&note, ", ", inferencer.identities_skipped(), " dropouts skipped");
  return note;
}

absl::Status InferWorkload::Report(benchmark::State& state) {
  RETURN_IF_ERROR(inferencer_->Synchronize());
  // One more forward pass, traced (after the timed ones: never in the figures).
  if (!options_.trace_file.empty() && !traced_) {
    traced_ = true;
    const std::string name = CaseName::Infer(case_.model, PrecisionName(case_.precision),
                                             case_.data, case_.batch, case_.gpus)
                                 .ToString();
    const std::string path = TraceFilePath(options_.trace_file, name);
    ASSIGN_OR_RETURN(const std::vector<TraceSlice> slices, inferencer_->TraceRun());
    // Written or not, the figures measured before it stand.
    if (absl::Status written = WriteChromeTrace(path, slices, name); written.ok()) {
      std::fprintf(stderr, "cnnbench: trace of one more batch of %s: %s\n", name.c_str(),
                   path.c_str());
    } else {
      NoteUnwrittenOutput(name, written);
    }
  }
  const double batch = static_cast<double>(case_.batch);
  ASSIGN_OR_RETURN(const StepSummary steps, SummarizeSteps(StepSeconds(), batch));
  const TimeStats& stats = steps.time;
  state.counters["images_per_second"] =
      benchmark::Counter(batch, benchmark::Counter::kIsIterationInvariantRate);
  if (flops_per_image_ > 0)
    state.counters["flops"] =
        benchmark::Counter(flops_per_image_ * batch, benchmark::Counter::kIsIterationInvariantRate);
  AddStepCounters(state, "latency_ms", "images_per_second", steps, options_.drift_threshold);
  state.counters["peak_memory_bytes"] =
      benchmark::Counter(static_cast<double>(inferencer_->peak_memory_bytes()));
  if (pipeline_ != nullptr && evaluated_ > 0) {
    state.counters["top1_accuracy"] = benchmark::Counter(static_cast<double>(top1_) / evaluated_);
    state.counters["top5_accuracy"] = benchmark::Counter(static_cast<double>(top5_) / evaluated_);
    state.counters["images_evaluated"] = benchmark::Counter(static_cast<double>(evaluated_));
  }
  // Records --on_bad_record=skip passed over are counted, never dropped
  // without a word (the train and input cases' counter).
  const int64_t skipped = pipeline_ != nullptr ? pipeline_->stats().skipped_total() : 0;
  if (skipped > 0) state.counters["skipped_records"] = static_cast<double>(skipped);
  evaluated_ = top1_ = top5_ = 0;
  const std::string graph =
      backend_->device().is_cpu()        ? ""
      : inferencer_->cuda_graph_active() ? ", CUDA graph"
      : !inferencer_->cuda_graph_failure().empty()
          ? absl::StrCat(", no CUDA graph (capture failed: ",
                         inferencer_->cuda_graph_failure().substr(0, 200), ")")
          : ", no CUDA graph";
  state.SetLabel(absl::StrCat(
      backend_->name(), " batch ", case_.batch, graph,
      options_.infer.include_copy ? ", each batch copied in (timed)" : ", resident batch",
      PlanNote(*inferencer_),
      ConvAlgorithmNote(options_, *backend_, inferencer_->step_plan()),
      pipeline_ != nullptr
          ? absl::StrCat(", ", input::DataFormatName(pipeline_->options().format),
                         " validation data (accuracy of untrained weights: about chance)")
          : "",
      skipped > 0 ? absl::StrCat(", ", SkippedNote(pipeline_->stats())) : "",
      stats.count < kMeaningfulIterations
          ? absl::StrCat(", only ", stats.count,
                         " timed iterations (p99 of fewer than 100 is about the max)")
          : "",
      DriftNote(steps, options_.drift_threshold), ThrottleNote(power())));
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyInferFlags(SuiteOptions& o) {
  RETURN_IF_ERROR_AS_IS(ReadList(FLAGS_infer_models, &o.infer.models));
  if (FlagGiven(FLAGS_infer_models))
    RETURN_IF_ERROR_AS_IS(CanonicalizeModelNames("--infer_models", &o.infer.models));
  RETURN_IF_ERROR_AS_IS(ReadList(FLAGS_infer_batch_sizes, &o.infer.batch_sizes, int64_t{1}));
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_infer_warmup, 0, &o.infer.warmup));
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_infer_iterations, 1, &o.infer.iterations));
  RETURN_IF_ERROR_AS_IS(ReadValue(FLAGS_infer_include_copy, &o.infer.include_copy));
  RETURN_IF_ERROR_AS_IS(ReadValue(FLAGS_fold_batch_norm, &o.infer.fold_batch_norm));
  RETURN_IF_ERROR_AS_IS(ReadValue(FLAGS_conv_relu, &o.infer.conv_relu));
  if (FlagGiven(FLAGS_conv_relu)) o.train.conv_relu = o.infer.conv_relu;  // one flag, both uses
  RETURN_IF_ERROR_AS_IS(ReadValue(FLAGS_conv_add, &o.infer.conv_add));
  RETURN_IF_ERROR_AS_IS(ReadValue(FLAGS_concat_in_place, &o.infer.concat_in_place));
  return absl::OkStatus();
}

void AddInferContext(const SuiteOptions& o) {
  benchmark::AddCustomContext("infer_warmup", absl::StrCat(o.infer.warmup));
  benchmark::AddCustomContext("infer_iterations", absl::StrCat(o.infer.iterations));
  benchmark::AddCustomContext("infer_include_copy", o.infer.include_copy ? "true" : "false");
  benchmark::AddCustomContext("fold_batch_norm", o.infer.fold_batch_norm ? "true" : "false");
  benchmark::AddCustomContext("conv_relu", o.infer.conv_relu ? "true" : "false");
  benchmark::AddCustomContext("conv_add", o.infer.conv_add ? "true" : "false");
  benchmark::AddCustomContext("concat_in_place", o.infer.concat_in_place ? "true" : "false");
}

std::vector<int64_t> InferBatchSizes(const SuiteOptions& options, const std::string& model) {
  if (!options.infer.batch_sizes.empty()) return options.infer.batch_sizes;
  absl::StatusOr<ModelInfo> info = FindModel(model);
  std::vector<int64_t> batches = {1};
  if (info.ok() && info->default_batch > 1) batches.push_back(info->default_batch);
  return batches;
}

absl::Status RegisterInferCases(const SuiteOptions& options, Harness& harness) {
  const bool real = std::find(options.train.data.begin(), options.train.data.end(), "real") !=
                    options.train.data.end();
  if (real) {
    if (!options.data_dir.empty())
      RETURN_IF_ERROR_AS_IS(input::DetectDataFormats(options.data_dir, "validation").status());
  }
  const std::vector<std::string>& models =
      options.infer.models.empty() ? options.train.models : options.infer.models;
  // One GPU at most: inference on several is as many independent copies.
  std::vector<int> gpu_counts;
  for (int g : options.gpus) {
    const int count = std::min(g, 1);
    if (std::find(gpu_counts.begin(), gpu_counts.end(), count) == gpu_counts.end())
      gpu_counts.push_back(count);
  }
  for (const std::string& model : models) {
    RETURN_IF_ERROR_AS_IS(FindModel(model).status());
    for (const std::string& precision_name : options.precisions) {
      ASSIGN_OR_RETURN(Precision precision, ParsePrecision(precision_name));
      for (const std::string& data : options.train.data)
        for (int64_t batch : InferBatchSizes(options, model))
          for (int gpus : gpu_counts) {
            const InferCase c{model, precision, data, batch, gpus};
            TimedCase timed;
            timed.name = CaseName::Infer(model, precision_name, data, batch, gpus).ToString();
            timed.family = FamilyName(Family::kInfer);
            timed.iterations = options.infer.iterations;
            timed.iterations_flag = "--infer_iterations";
            timed.unit = benchmark::kMillisecond;
            timed.keeps_step_times = true;
            timed.prepare = [c, &options] { return InferWorkload::Prepare(c, options); };
            harness.Register(std::move(timed));
          }
    }
  }
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
