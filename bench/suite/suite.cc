#include "bench/suite/suite.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/cases/bandwidth/bandwidth_cases.h"
#include "bench/cli/flag_read.h"
#include "bench/cases/input/input_cases.h"
#include "bench/suite/names.h"
#include "bench/cases/peak/peak_cases.h"
#include "core/status.h"
#include "kernels/backends.h"
#include "kernels/collectives/local.h"
#include "kernels/collectives/mpi.h"
#include "kernels/collectives/nccl.h"
#include "kernels/cuda/cuda_backend.h"
#include "models/zoo.h"

namespace cnnbench::bench {
namespace {

std::vector<std::string> RegisteredFamilies() {
  std::vector<std::string> names;
  for (const CaseFamily& f : CaseFamilies())
    if (f.registered) names.push_back(f.name);
  return names;
}

// Each preset's settings over the defaults (PresetOptions), in kPresetNames'
// order: a preset named there without its entry here, or out of order,
// fails the static_assert below.
void SetQuick(SuiteOptions& o, int gpu_count) {
  // A newcomer's first run: at most about 3 minutes of cases on 2 cores
  // (kQuickCaseBound cases; docs/benchmarks.md says which and why). The
  // headline training steps, inference at batch 1 and 32, the machine's
  // ceilings, a few layer kernels of resnet50 and one all-reduce sweep on
  // the local transport. Every other collective, dtype and op, the input
  // and grads families and the slower models are in --preset=full.
  o.families = {FamilyName(Family::kTrain),     FamilyName(Family::kInfer),
                FamilyName(Family::kConv),      FamilyName(Family::kFc),
                FamilyName(Family::kPool),      FamilyName(Family::kBatchNorm),
                FamilyName(Family::kRelu),      FamilyName(Family::kGemm),
                FamilyName(Family::kPeak),      FamilyName(Family::kBandwidth),
                FamilyName(Family::kAllReduce)};
  // The published page's models that take seconds a step on 2 cores
  // (vgg16 and resnet152 take a minute each; they are in published/full).
  o.train.models = {"inception3", "resnet50", "alexnet", "googlenet"};
  o.train.batch_sizes = {16};
  o.kernel.models = {"resnet50"};
  o.kernel.max_shapes = 2;
  o.kernel.batch = 16;
  o.gpus = {0};
  o.train.warmup_steps = 1;
  o.train.steps = 5;
  o.repetitions = 1;
  o.kernel.min_time = 0.2;
  o.kernel.gemm_sizes = {256, 1024};
  // 1 KiB to 64 MiB by 16: five sizes, latency to bandwidth.
  o.collectives.min_bytes = 1024;
  o.collectives.max_bytes = int64_t{64} << 20;
  o.collectives.factor = 16;
  o.collectives.ranks = {2};
  o.infer.models = {"resnet50_v1.5", "mobilenet"};
  o.infer.batch_sizes = {1, 32};
  o.infer.warmup = 2;
  o.infer.iterations = 10;
}

void SetPublished(SuiteOptions& o, int gpu_count) {
  // The published page: five models at their batch sizes, 1..N GPUs,
  // synthetic data, 10 warm-up and 100 timed steps, 5 repetitions.
  // Beside it, each model's inference at batch 1 (latency) and its
  // training batch (throughput).
  o.families = {FamilyName(Family::kTrain), FamilyName(Family::kInfer)};
  for (const ModelDisplay& m : ModelDisplayNames())
    if (m.published) o.train.models.push_back(m.model);
  for (int g = 1; g <= gpu_count; g *= 2) o.gpus.push_back(g);
  if (o.gpus.empty()) o.gpus = {0};
  if (gpu_count > 0) o.precisions = {"fp32", "fp16"};
  if (gpu_count == 0) o.infer.iterations = 50;
}

void SetFull(SuiteOptions& o, int gpu_count) {
  o.families = RegisteredFamilies();
  // Every model of the zoo, trained and served, in the tables' order.
  for (const ModelDisplay& m : ModelDisplayNames()) o.train.models.push_back(m.model);
  o.kernel.models = {"alexnet", "googlenet", "inception3", "vgg16", "resnet50"};
  o.gpus = {0};
  for (int g = 1; g <= gpu_count; g *= 2) o.gpus.push_back(g);
  o.kernel.gemm_sizes = {512, 1024, 2048, 4096};
  if (gpu_count > 0) o.kernel.gemm_sizes.push_back(8192);  // fills a GPU's tensor cores
  o.infer.models = o.train.models;
  for (int64_t b = 1; b <= (gpu_count > 0 ? 256 : 64); b *= 2) o.infer.batch_sizes.push_back(b);
  if (gpu_count == 0) o.infer.iterations = 50;
}

void SetInference(SuiteOptions& o, int gpu_count) {
  // DeepLearningExamples' inference tables: throughput and latency
  // percentiles per model, precision and batch 1, 2, 4, ... 256 on a GPU;
  // on the CPU fewer models, batches to 64 and fewer iterations (minutes,
  // not hours), bf16 where the CPU runs it.
  o.families = {FamilyName(Family::kInfer)};
  const int64_t largest = gpu_count > 0 ? 256 : 64;
  for (int64_t b = 1; b <= largest; b *= 2) o.infer.batch_sizes.push_back(b);
  if (gpu_count > 0) {
    o.infer.models = {"resnet50_v1.5", "inception3", "vgg16",          "googlenet",
                      "mobilenet",     "alexnet",    "efficientnet_b0"};
    o.gpus = {1};
    o.precisions = {"fp32", "tf32", "fp16", "bf16"};
  } else {
    o.infer.models = {"resnet50_v1.5", "googlenet", "mobilenet", "alexnet", "efficientnet_b0"};
    o.gpus = {0};
    if (FindPeakPath("bf16").ok()) o.precisions.push_back("bf16");
    o.infer.warmup = 3;
    o.infer.iterations = 30;
    o.repetitions = 1;
  }
  o.train.models = o.infer.models;
}

void SetTiny(SuiteOptions& o, int gpu_count) {
  // For tests: one small model at a small image size, one kernel per family
  // (the input family makes a data set first: its own tests run it).
  o.families = RegisteredFamilies();
  o.families.erase(std::remove(o.families.begin(), o.families.end(), FamilyName(Family::kInput)),
                   o.families.end());
  o.train.models = {"trivial"};
  o.train.batch_sizes = {2};
  o.kernel.models = {"lenet"};
  o.kernel.max_shapes = 1;
  o.kernel.batch = 2;
  o.gpus = {0};
  o.train.warmup_steps = 1;
  o.train.steps = 2;
  o.repetitions = 2;
  o.kernel.min_time = 0.01;
  o.kernel.gemm_sizes = {64};
  o.collectives.max_bytes = 4096;
  o.collectives.min_bytes = 1024;
  o.collectives.ranks = {2};
  o.collectives.warmup = 1;
  o.collectives.iters = 2;
  o.bandwidth.bytes = {int64_t{1} << 20};
  o.infer.batch_sizes = {1, 2};
  o.infer.warmup = 1;
  o.infer.iterations = 5;
}

struct Preset {
  const char* name;
  void (*set)(SuiteOptions& o, int gpu_count);
};
constexpr Preset kPresets[] = {
    {"quick", SetQuick}, {"published", SetPublished}, {"full", SetFull},
    {"inference", SetInference}, {"tiny", SetTiny},
};

constexpr bool SameText(const char* a, const char* b) {
  for (; *a != '\0' && *a == *b; ++a, ++b) {
  }
  return *a == *b;
}
constexpr bool PresetsAreTheNamedOnes() {
  if (std::size(kPresets) != std::size(kPresetNames)) return false;
  for (size_t i = 0; i < std::size(kPresets); ++i)
    if (!SameText(kPresets[i].name, kPresetNames[i])) return false;
  return true;
}
static_assert(PresetsAreTheNamedOnes(), "kPresets must follow kPresetNames (bench/suite/suite.h)");

}  // namespace

absl::StatusOr<SuiteOptions> PresetOptions(const std::string& preset, int gpu_count) {
  SuiteOptions o;
  o.preset = preset;
  o.gpu_count = gpu_count;
  o.precisions = {"fp32"};
  o.train.data = {"synthetic"};
  o.collectives.ranks = {2, 4};
  for (const Preset& p : kPresets) {
    if (preset != p.name) continue;
    p.set(o, gpu_count);
    return o;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown preset '", preset, "' (known: ",
                                                 absl::StrJoin(kPresetNames, ", "), ")"));
}

absl::Status ApplyTimingFlags(const BenchmarkTimingFlags& user, int repetitions_flag,
                              SuiteOptions& options) {
  if (user.repetitions && repetitions_flag >= 0 && *user.repetitions != repetitions_flag)
    return absl::InvalidArgumentError(absl::StrCat("--benchmark_repetitions=", *user.repetitions,
                                                   " and --repetitions=", repetitions_flag,
                                                   " disagree; give one of them"));
  if (repetitions_flag >= 0) options.repetitions = repetitions_flag;
  if (user.repetitions) options.repetitions = *user.repetitions;
  if (options.repetitions < 1) return absl::InvalidArgumentError("--repetitions must be >= 1");
  if (user.min_time) {
    options.kernel.min_time = *user.min_time;
    options.kernel.min_time_from_user = true;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Backend>> CreateCaseBackend(const SuiteOptions& options,
                                                           const Device& device) {
  if (device.is_cuda()) {
    // A GPU this machine lacks is a case that cannot run here: skipped, not failed.
    const int visible = CudaDeviceCount();
    if (device.ordinal >= visible)
      return absl::UnimplementedError(absl::StrCat(
          "unsupported: ", device.ToString(), " is not present (", visible, " GPU(s) visible)"));
    CudaBackendOptions cuda;
    cuda.nhwc = options.cuda.nhwc;
    cuda.batch_norm_graphs = options.cuda.batch_norm_graphs;
    cuda.runtime_compiled_attempts = options.cuda.rtc_attempts;
    return CreateCudaBackend(device, cuda);
  }
  if (options.backend == "onednn" && device.is_cpu()) {
    OneDnnOptions onednn;
    onednn.conv_algorithm = options.cpu_conv_algorithm;
    return CreateOneDnnBackend(onednn);
  }
  return CreateBackend(options.backend, device);
}

absl::StatusOr<ReplicaPlacement> PlaceReplicas(const SuiteOptions& options, int gpus, int ranks) {
  CommunicatorOptions co;
  co.timeout = options.collective_timeout;
  ReplicaPlacement p;
  if (options.mpi != nullptr) {
    if (ranks != options.mpi->size)
      return absl::InvalidArgumentError(absl::StrCat(
          ranks, " replicas in a job of ", options.mpi->size, " processes (one per process)"));
    ASSIGN_OR_RETURN(std::unique_ptr<Communicator> mpi, CreateMpiCommunicator(co));
    if (gpus == 0) {
      p.group.push_back(std::move(mpi));
      p.devices.push_back(Device::Cpu());
      return p;
    }
    const Device device = Device::Cuda(options.mpi->local_rank);
    if (device.ordinal >= options.gpu_count)
      return absl::UnimplementedError(
          absl::StrCat("unsupported: rank ", options.mpi->rank, " would drive ", device.ToString(),
                       " but ", options.gpu_count, " GPU(s) are visible on its host"));
    ASSIGN_OR_RETURN(NcclUniqueId id, ShareNcclUniqueId(*mpi));
    ASSIGN_OR_RETURN(std::unique_ptr<Communicator> nccl,
                     CreateNcclCommunicator(id, options.mpi->rank, ranks, device, co));
    p.group.push_back(std::move(nccl));
    p.devices.push_back(device);
    return p;
  }
  if (gpus == 0) {
    ASSIGN_OR_RETURN(p.group, CreateLocalGroup(ranks, co));
    p.devices.assign(ranks, Device::Cpu());
    return p;
  }
  if (ranks > options.gpu_count)
    return absl::UnimplementedError(
        absl::StrCat("unsupported: gpus:", ranks, " but ", options.gpu_count, " GPU(s) visible"));
  for (int r = 0; r < ranks; ++r) p.devices.push_back(Device::Cuda(r));
  ASSIGN_OR_RETURN(p.group, CreateNcclGroup(p.devices, co));
  return p;
}

absl::Status EndJobOnTimeout(const SuiteOptions& options, absl::Status status) {
  if (options.mpi != nullptr && absl::IsDeadlineExceeded(status) && options.end_job)
    options.end_job(status);
  if (options.mpi != nullptr && absl::IsDeadlineExceeded(status))
    AbortMpiJob(1, absl::StrCat("cnnbench: rank ", options.mpi->rank, ": ", status.message(),
                                "; ending the job"));
  return status;
}

std::vector<std::string> KernelDevices(const SuiteOptions& options) {
  std::vector<std::string> devices = {"cpu"};
  if (options.gpu_count > 0) devices.push_back("cuda");
  return devices;
}

absl::StatusOr<Graph> KernelModelGraph(const SuiteOptions& options, const std::string& model) {
  ASSIGN_OR_RETURN(ModelInfo info, FindModel(model));
  ModelOptions mo;
  mo.batch = options.kernel.batch > 0 ? options.kernel.batch : info.default_batch;
  mo.image_size = options.image_size;
  return BuildModel(model, mo);
}

absl::Status ShareConvChoices(Communicator& comm, ConvChoices& choices) {
  const Stream stream = Stream::Cpu();
  std::string text = comm.rank() == 0 ? choices.Serialize() : "";
  int64_t bytes = static_cast<int64_t>(text.size());
  RETURN_IF_ERROR(comm.Broadcast(&bytes, &bytes, 1, DType::kI64, /*root=*/0, stream));
  text.resize(static_cast<size_t>(bytes));
  if (bytes > 0)
    RETURN_IF_ERROR(comm.Broadcast(text.data(), text.data(), text.size(), DType::kU8, 0, stream));
  if (comm.rank() == 0) return absl::OkStatus();
  absl::Status merged = choices.Merge(text);
  if (!merged.ok())
    return absl::InternalError(absl::StrCat("rank 0's convolution choices: ", merged.message()));
  return absl::OkStatus();
}

std::string ConvAlgorithmNote(const SuiteOptions& options, const Backend& backend,
                              const StepPlan& plan) {
  if (backend.name() != "onednn") return "";
  int passes = 0, winograd = 0;
  auto count = [&](const Kernel& kernel, OpPass pass) {
    ++passes;
    winograd += absl::StrContains(kernel.pass_implementation(pass), "wino");
  };
  for (const auto& layer : plan.layers) {
    if (layer->node < 0 || !std::holds_alternative<ConvDesc>(plan.graph.nodes[layer->node].op))
      continue;
    count(*layer->kernel, OpPass::kForward);
    if (!layer->needs_grad) continue;
    count(*layer->kernel, OpPass::kBackwardWeights);
    if (layer->any_dx) count(*layer->kernel, OpPass::kBackwardData);
  }
  if (passes == 0) return "";
  return absl::StrCat(", conv ", CpuConvAlgorithmName(options.cpu_conv_algorithm), ": Winograd in ",
                      winograd, " of ", passes, " passes");
}

namespace {
std::atomic<int> traced_case_count{-1};
}  // namespace

void SetTracedCaseCount(int count) { traced_case_count = count; }

std::string TraceFilePath(const std::string& path, const std::string& name) {
  if (traced_case_count.load() == 1) return path;
  std::string tag = name;
  for (char& c : tag) {
    if (c == '/') c = '_';
    if (c == ':') c = '-';
  }
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return absl::StrCat(path, ".", tag);
  return absl::StrCat(path.substr(0, dot), ".", tag, path.substr(dot));
}

TimingSettings TimingOf(const SuiteOptions& options) {
  TimingSettings t;
  t.repetitions = options.repetitions;
  t.min_time = options.kernel.min_time;
  t.min_time_from_user = options.kernel.min_time_from_user;
  t.keep_step_times = options.keep_step_times;
  t.display_every = options.display_every;
  return t;
}

namespace {

// Each family's registration. One function may serve several families (the
// layer kernels'): it is called once, at its first wanted family, and
// registers every wanted family of its own.
// No default, keyed by family: the table below cannot leave a family out
// or put one in another's place.
struct Registrar {
  using Fn = absl::Status (*)(const SuiteOptions&, Harness&);
  constexpr Registrar(Fn fn, bool as_is) : fn(fn), as_is(as_is) {}
  Fn fn;
  // Its errors go to the user as they are (they name the flag: no file:line).
  bool as_is;
};
constexpr FamilyTable<Registrar> kRegistrars = {{
    {Family::kTrain, {RegisterTrainCases, true}},
    {Family::kConv, {RegisterKernelCases, false}},
    {Family::kFc, {RegisterKernelCases, false}},
    {Family::kPool, {RegisterKernelCases, false}},
    {Family::kBatchNorm, {RegisterKernelCases, false}},
    {Family::kRelu, {RegisterKernelCases, false}},
    {Family::kGemm, {RegisterGemmCases, false}},
    {Family::kAllReduce, {RegisterCollectiveCases, false}},
    {Family::kAllGather, {RegisterCollectiveCases, false}},
    {Family::kReduceScatter, {RegisterCollectiveCases, false}},
    {Family::kBroadcast, {RegisterCollectiveCases, false}},
    {Family::kReduce, {RegisterCollectiveCases, false}},
    {Family::kAllToAll, {RegisterCollectiveCases, false}},
    {Family::kGather, {RegisterCollectiveCases, false}},
    {Family::kScatter, {RegisterCollectiveCases, false}},
    {Family::kGrads, {RegisterGradsCases, false}},
    {Family::kInput, {RegisterInputCases, true}},
    {Family::kPeak, {RegisterPeakCases, false}},
    {Family::kBandwidth, {RegisterBandwidthCases, false}},
    {Family::kInfer, {RegisterInferCases, true}},
}};
static_assert(InFamilyOrder(kRegistrars));

}  // namespace

absl::StatusOr<std::vector<std::string>> RegisterSuite(const SuiteOptions& options,
                                                       Harness& harness) {
  std::array<bool, kFamilyCount> wanted{};
  for (const auto& f : options.families) {
    const CaseFamily* family = FindCaseFamily(f);
    if (family == nullptr || !family->registered)
      return absl::InvalidArgumentError(
          absl::StrCat("unknown case family '", f, "' (known: ", RegisteredFamilyList(), ")"));
    wanted[static_cast<size_t>(family->id)] = true;
  }
  std::vector<Registrar::Fn> called;
  for (size_t i = 0; i < kFamilyCount; ++i) {
    const Registrar& r = kRegistrars[i].value;
    if (!wanted[i] || std::find(called.begin(), called.end(), r.fn) != called.end()) continue;
    called.push_back(r.fn);
    if (r.as_is) {
      RETURN_IF_ERROR_AS_IS(r.fn(options, harness));
    } else {
      RETURN_IF_ERROR(r.fn(options, harness));
    }
  }
  return harness.progress().names();
}

}  // namespace cnnbench::bench
