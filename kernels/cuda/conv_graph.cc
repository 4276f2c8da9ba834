// ConvGraphs on cudnn-frontend: one graph per pass, plans from the
// heuristics filtered by the precision's numerics, timed when asked.
#include "kernels/cuda/conv_graph.h"

#include <cuda_runtime.h>
#include <cudnn.h>
#include <cudnn_frontend.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/compile_log.h"
#include "core/dtype.h"
#include "core/status.h"
#include "kernels/cuda/engine_pick.h"
#include "kernels/cuda/fe_status.h"
#include "kernels/cuda/plan_choices.h"

namespace cnnbench::cuda {
namespace {

namespace fe = cudnn_frontend;

// Tensor ids shared by the three graphs (see ConvBuffers).
constexpr int64_t kUidX = 1;
constexpr int64_t kUidW = 2;
constexpr int64_t kUidY = 3;

std::vector<int64_t> Vec(const std::array<int64_t, 4>& a) { return {a.begin(), a.end()}; }
std::vector<int64_t> Vec(const std::array<int64_t, 2>& a) { return {a.begin(), a.end()}; }

// Engines whose numerics break the precision's promise: reduced-precision
// reductions break "fp32 compute" for every precision; on fp32 data,
// tensor cores and down-converted inputs are tf32 math, which only tf32
// allows (there, engines that round the inputs to tf32 are the point); on
// fp16/bf16 data, inputs converted further down are barred too.
std::vector<fe::NumericalNote_t> BarredNotes(const ConvProblem& p) {
  std::vector<fe::NumericalNote_t> notes = {fe::NumericalNote_t::REDUCED_PRECISION_REDUCTION};
  const bool tf32 = p.io_type == DType::kF32 && p.allow_tf32;
  if (!tf32) notes.push_back(fe::NumericalNote_t::DOWN_CONVERT_INPUTS);
  if (p.io_type == DType::kF32 && !p.allow_tf32) notes.push_back(fe::NumericalNote_t::TENSOR_CORE);
  return notes;
}

// Fills `count` elements of `type` at `device` with values in [-1, 1): a
// 1 MiB host pattern, copied up once and then doubled on the device.
bool FillRandom(void* device, int64_t count, DType type, cudaStream_t stream) {
  const size_t element = SizeOf(type);
  const size_t total = static_cast<size_t>(count) * element;
  const size_t pattern_elements = std::min<size_t>(static_cast<size_t>(count), size_t{1} << 19);
  std::vector<uint16_t> half(type == DType::kF32 ? 0 : pattern_elements);
  std::vector<float> single(type == DType::kF32 ? pattern_elements : 0);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < pattern_elements; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const float v = static_cast<float>(static_cast<double>(state >> 11) * 0x1.0p-53 * 2.0 - 1.0);
    if (type == DType::kF32) {
      single[i] = v;
    } else {
      half[i] = type == DType::kF16 ? FloatToHalf(v).bits : FloatToBFloat16(v).bits;
    }
  }
  const void* host = type == DType::kF32 ? static_cast<const void*>(single.data()) : half.data();
  size_t filled = pattern_elements * element;
  if (cudaMemcpyAsync(device, host, filled, cudaMemcpyHostToDevice, stream) != cudaSuccess ||
      cudaStreamSynchronize(stream) != cudaSuccess)  // the host pattern goes out of scope
    return false;
  char* bytes = static_cast<char*>(device);
  while (filled < total) {
    const size_t chunk = std::min(filled, total - filled);
    if (cudaMemcpyAsync(bytes + filled, bytes, chunk, cudaMemcpyDeviceToDevice, stream) !=
        cudaSuccess)
      return false;
    filled += chunk;
  }
  return true;
}

// Frees what cudaMalloc gave, whatever happens to the timing.
struct DeviceScratch {
  std::vector<void*> pointers;
  ~DeviceScratch() {
    for (void* p : pointers) cudaFree(p);
  }
  void* Allocate(size_t bytes) {
    void* p = nullptr;
    if (cudaMalloc(&p, std::max<size_t>(bytes, 1)) != cudaSuccess) {
      cudaGetLastError();  // not sticky: clear it
      return nullptr;
    }
    pointers.push_back(p);
    return p;
  }
};

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  ~Events() {
    if (start != nullptr) cudaEventDestroy(start);
    if (stop != nullptr) cudaEventDestroy(stop);
  }
};

}  // namespace

struct ConvGraphs::Impl {
  struct Pass {
    std::shared_ptr<fe::graph::Graph> graph;
    std::shared_ptr<fe::graph::Tensor_attributes> output;
    std::vector<int64_t> candidates;  // built plans, in the heuristics' order
    EnginePick pick;                  // how they were found
    double build_seconds = 0;         // listing and building the candidates
    double timing_seconds = 0;        // timing them
    float best_ms = 0;                // the chosen plan's best timed run (0: not timed)
    std::string plan_cache;           // "hit", "miss", "stale: ..." ("" without a file)
    int64_t plan = -1;
    int64_t workspace = 0;
    std::string name;
    // Why plan < 0 after ChoosePlans: a backward pass with no engine is
    // reported when it is run, not when the kernel is created (the first
    // layer's dgrad, say, is never run).
    absl::Status unavailable;
  };
  ConvProblem problem;
  std::array<Pass, 3> passes;
  std::string what;  // the descriptor, for errors

  Pass& at(ConvPass pass) { return passes[static_cast<int>(pass)]; }
  const Pass& at(ConvPass pass) const { return passes[static_cast<int>(pass)]; }
  std::string What(ConvPass pass) const { return absl::StrCat(what, " ", ConvPassName(pass)); }

  absl::Status Build(ConvPass pass);
  absl::Status BuildCandidates(ConvPass pass, cudnnHandle_t cudnn, const ConvPlanChoice& choice);
  absl::StatusOr<float> Time(ConvPass pass, int64_t plan, cudnnHandle_t cudnn,
                             const ConvBuffers& buffers, void* workspace, int runs,
                             cudaStream_t stream, Events& events);
  absl::Status Select(ConvPass pass, int64_t plan);
  // Keeps the selected plan of `pass` in the plan-choice file, where it was
  // not read from there.
  void Record(ConvPass pass, const ConvPlanChoice& choice) const;
  void LogPass(ConvPass pass) const;
};

absl::Status ConvGraphs::Impl::Build(ConvPass pass) {
  const ConvProblem& p = problem;
  const fe::DataType_t io = FeType(p.io_type);
  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_name(absl::StrCat(p.key, "/", ConvPassName(pass)))
      .set_io_data_type(io)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  auto tensor = [&](const char* name, int64_t uid, const ConvTensor& t) {
    return graph->tensor(fe::graph::Tensor_attributes()
                             .set_name(name)
                             .set_uid(uid)
                             .set_dim(Vec(t.dims))
                             .set_stride(Vec(t.strides))
                             .set_data_type(io));
  };
  std::shared_ptr<fe::graph::Tensor_attributes> out;
  const ConvTensor* out_shape = nullptr;
  int64_t out_uid = 0;
  switch (pass) {
    case ConvPass::kForward: {
      auto x = tensor("x", kUidX, p.x);
      auto w = tensor("w", kUidW, p.w);
      out = graph->conv_fprop(x, w,
                              fe::graph::Conv_fprop_attributes()
                                  .set_name("fprop")
                                  .set_pre_padding(Vec(p.pre_padding))
                                  .set_post_padding(Vec(p.post_padding))
                                  .set_stride(Vec(p.stride))
                                  .set_dilation(Vec(p.dilation))
                                  .set_compute_data_type(fe::DataType_t::FLOAT));
      out_shape = &p.y;
      out_uid = kUidY;
      break;
    }
    case ConvPass::kBackwardData: {
      auto dy = tensor("dy", kUidY, p.y);
      auto w = tensor("w", kUidW, p.w);
      out = graph->conv_dgrad(dy, w,
                              fe::graph::Conv_dgrad_attributes()
                                  .set_name("dgrad")
                                  .set_pre_padding(Vec(p.pre_padding))
                                  .set_post_padding(Vec(p.post_padding))
                                  .set_stride(Vec(p.stride))
                                  .set_dilation(Vec(p.dilation))
                                  .set_compute_data_type(fe::DataType_t::FLOAT));
      out_shape = &p.x;
      out_uid = kUidX;
      break;
    }
    case ConvPass::kBackwardFilter: {
      auto x = tensor("x", kUidX, p.x);
      auto dy = tensor("dy", kUidY, p.y);
      out = graph->conv_wgrad(dy, x,
                              fe::graph::Conv_wgrad_attributes()
                                  .set_name("wgrad")
                                  .set_pre_padding(Vec(p.pre_padding))
                                  .set_post_padding(Vec(p.post_padding))
                                  .set_stride(Vec(p.stride))
                                  .set_dilation(Vec(p.dilation))
                                  .set_compute_data_type(fe::DataType_t::FLOAT));
      out_shape = &p.w;
      out_uid = kUidW;
      break;
    }
  }
  out->set_output(true)
      .set_uid(out_uid)
      .set_dim(Vec(out_shape->dims))
      .set_stride(Vec(out_shape->strides))
      .set_data_type(io);
  FE_RETURN_IF_ERROR(graph->validate(), What(pass));
  Pass& slot = at(pass);
  slot.graph = std::move(graph);
  slot.output = std::move(out);
  return absl::OkStatus();
}

absl::Status ConvGraphs::Impl::BuildCandidates(ConvPass pass, cudnnHandle_t cudnn,
                                               const ConvPlanChoice& choice) {
  Pass& slot = at(pass);
  fe::graph::Graph& graph = *slot.graph;
  const std::string where = What(pass);
  const absl::Time start = absl::Now();
  FE_RETURN_IF_ERROR(graph.build_operation_graph(cudnn), where);
  std::vector<fe::NumericalNote_t> strict = BarredNotes(problem);
  if (choice.deterministic) strict.push_back(fe::NumericalNote_t::NONDETERMINISTIC);
  std::vector<fe::NumericalNote_t> relaxed;
  for (fe::NumericalNote_t note : strict)
    if (note != fe::NumericalNote_t::REDUCED_PRECISION_REDUCTION) relaxed.push_back(note);
  FeEngineListing listing(graph, strict, relaxed, relaxed.size() != strict.size(), where);
  const std::string key =
      ConvChoiceKey(problem.key, ConvPassName(pass), choice.deterministic);
  std::optional<PlanChoice> recorded;
  if (choice.plan_choices != nullptr && choice.timed) {
    recorded = choice.plan_choices->Find(key);
    slot.plan_cache = recorded.has_value() ? "hit" : "miss";
    if (recorded.has_value() && recorded->engines.size() != 1) recorded.reset();
  }
  ASSIGN_OR_RETURN(slot.pick,
                   PickEngines(listing, std::max(choice.candidates, 1),
                               choice.runtime_compiled_attempts, choice.runtime_compiled_budget,
                               recorded.has_value() ? &recorded->engines.front() : nullptr));
  if (recorded.has_value() && !slot.pick.from_record) {
    slot.plan_cache = absl::StrCat("stale: ", slot.pick.record_error);
    choice.plan_choices->Forget(key);
  }
  slot.build_seconds = absl::ToDoubleSeconds(absl::Now() - start);
  slot.candidates = slot.pick.built;
  if (!slot.candidates.empty()) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      "unsupported: ", where, ": with ", PrecisionName(problem.precision), " numerics",
      choice.deterministic ? " and deterministic results" : "", ", ",
      NoEngineReason(slot.pick, choice.runtime_compiled_attempts)));
}

absl::StatusOr<float> ConvGraphs::Impl::Time(ConvPass pass, int64_t plan, cudnnHandle_t cudnn,
                                             const ConvBuffers& buffers, void* workspace, int runs,
                                             cudaStream_t stream, Events& events) {
  std::unordered_map<int64_t, void*> pack = {
      {kUidX, buffers.x}, {kUidW, buffers.w}, {kUidY, buffers.y}};
  const fe::graph::Graph& graph = *at(pass).graph;
  FE_RETURN_IF_ERROR(graph.execute_plan_at_index(cudnn, pack, workspace, plan), What(pass));
  float best = std::numeric_limits<float>::infinity();
  for (int run = 0; run < runs; ++run) {
    if (cudaEventRecord(events.start, stream) != cudaSuccess)
      return absl::InternalError("cudaEventRecord failed");
    FE_RETURN_IF_ERROR(graph.execute_plan_at_index(cudnn, pack, workspace, plan), What(pass));
    if (cudaEventRecord(events.stop, stream) != cudaSuccess ||
        cudaEventSynchronize(events.stop) != cudaSuccess)
      return absl::InternalError(absl::StrCat(
          What(pass), ": timing a plan failed: ", cudaGetErrorString(cudaGetLastError())));
    float ms = 0;
    if (cudaEventElapsedTime(&ms, events.start, events.stop) == cudaSuccess)
      best = std::min(best, ms);
  }
  return best;
}

absl::Status ConvGraphs::Impl::Select(ConvPass pass, int64_t plan) {
  Pass& slot = at(pass);
  fe::graph::Graph& graph = *slot.graph;
  const std::string where = What(pass);
  slot.plan = plan;
  FE_RETURN_IF_ERROR(graph.get_workspace_size_plan_at_index(plan, slot.workspace), where);
  FE_RETURN_IF_ERROR(graph.get_plan_name_at_index(plan, slot.name), where);
  if (slot.pick.relaxed)
    absl::StrAppend(&slot.name, " (reduced-precision reduction: no engine without it builds)");
  // Done here so the first Run does no host-side set-up.
  FE_RETURN_IF_ERROR(graph.prepare_variant_pack_template(), where);
  return absl::OkStatus();
}

void ConvGraphs::Impl::Record(ConvPass pass, const ConvPlanChoice& choice) const {
  const Pass& slot = at(pass);
  if (choice.plan_choices == nullptr || !choice.timed || slot.plan < 0 || slot.pick.from_record)
    return;
  absl::StatusOr<RecordedEngine> engine =
      DescribePlan(*slot.graph, slot.plan, slot.pick.relaxed, What(pass));
  if (!engine.ok()) {  // the choice stands; only the file misses it
    ClearLastErrors();
    CompileLog({{"plan_cache", choice.plan_choices->path()},
                {"note", absl::StrCat("not recorded: ", engine.status().message())}});
    return;
  }
  PlanChoice recorded;
  recorded.engines.push_back(*std::move(engine));
  recorded.milliseconds = slot.best_ms;
  choice.plan_choices->Record(ConvChoiceKey(problem.key, ConvPassName(pass), choice.deterministic),
                              recorded)
      .IgnoreError();  // logged there; the choice stands for this process
}

void ConvGraphs::Impl::LogPass(ConvPass pass) const {
  const Pass& slot = at(pass);
  CompileLogFields fields = {{"kernel", "conv"},
                             {"op", what},
                             {"pass", std::string(ConvPassName(pass))},
                             {"engine", slot.plan >= 0 ? slot.name : "none"}};
  if (slot.plan >= 0) {
    fields.push_back({"rtc", RuntimeCompiledPlan(*slot.graph, slot.plan) ? "yes" : "no"});
    fields.push_back({"numerics", slot.pick.relaxed ? "relaxed" : "strict"});
    fields.push_back({"candidates", absl::StrCat(slot.candidates.size())});
  }
  fields.push_back({"tried", absl::StrCat(slot.pick.precompiled_tried, "+",
                                          slot.pick.runtime_compiled_tried, "rtc")});
  fields.push_back({"build", CompileLogSeconds(slot.build_seconds)});
  if (!slot.plan_cache.empty()) fields.push_back({"plan_cache", slot.plan_cache});
  if (slot.timing_seconds > 0) fields.push_back({"timing", CompileLogSeconds(slot.timing_seconds)});
  if (!slot.unavailable.ok()) fields.push_back({"why", std::string(slot.unavailable.message())});
  CompileLog(fields);
}

bool ConvGraphsAvailable() { return true; }

std::string PlanChoiceIdentity(int ordinal) {
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, ordinal) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  const size_t version = cudnnGetVersion();
  return absl::StrCat("cudnn ", version / 10000, ".", version / 100 % 100, ".", version % 100,
                      ", cudnn-frontend ", CUDNN_FRONTEND_MAJOR_VERSION, ".",
                      CUDNN_FRONTEND_MINOR_VERSION, ".", CUDNN_FRONTEND_PATCH_VERSION, ", ",
                      properties.name, " sm_", properties.major, properties.minor);
}

std::string ConvGraphsUnavailableReason() { return ""; }

ConvGraphs::ConvGraphs(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ConvGraphs::~ConvGraphs() = default;

absl::StatusOr<std::unique_ptr<ConvGraphs>> ConvGraphs::Validate(const ConvProblem& problem) {
  auto impl = std::make_unique<Impl>();
  impl->problem = problem;
  impl->what = problem.desc.ToString();
  for (ConvPass pass : kConvPasses) RETURN_IF_ERROR(impl->Build(pass));
  return std::unique_ptr<ConvGraphs>(new ConvGraphs(std::move(impl)));
}

absl::Status ConvGraphs::ChoosePlans(cudnnContext* cudnn, const ConvPlanChoice& choice) {
  Impl& impl = *impl_;
  // The forward pass is required; a backward pass without an engine is
  // reported by Run (IsUnimplemented: the kernel exists without it).
  std::string built_passes;  // for a deadline's error: what was built before it
  for (ConvPass pass : kConvPasses) {
    Impl::Pass& slot = impl.at(pass);
    if (choice.forward_only && pass != ConvPass::kForward) {
      slot.unavailable = absl::FailedPreconditionError(absl::StrCat(
          impl.What(pass), ": this kernel was made forward only (an inference plan): no "
                           "backward plan was built"));
      slot.name = "forward-only";
      continue;
    }
    RETURN_IF_ERROR(CheckCompileDeadline(
        ConvPassName(pass), built_passes.empty() ? "no pass of this layer yet" : built_passes));
    absl::Status built = impl.BuildCandidates(pass, cudnn, choice);
    if (IsCompileDeadline(built)) return built;
    absl::StrAppend(&built_passes, built_passes.empty() ? "" : ", ", ConvPassName(pass), " (",
                    slot.pick.Tried(), ")");
    if (built.ok()) continue;
    ClearLastErrors();
    // A backward pass cuDNN refuses in any way (no engine, a graph it cannot
    // lower or list) is reported when it is run; out of memory is an error.
    if (pass != ConvPass::kForward && !IsOutOfMemory(built) && !absl::IsUnimplemented(built))
      built = absl::UnimplementedError(absl::StrCat("unsupported: ", built.message()));
    slot.unavailable = built;
    slot.name = "none";
    impl.LogPass(pass);
    if (pass == ConvPass::kForward || !absl::IsUnimplemented(built)) return built;
  }

  bool timed = false;
  for (ConvPass pass : kConvPasses) timed = timed || impl.at(pass).candidates.size() > 1;
  timed = timed && choice.timed;
  if (!timed) {
    for (ConvPass pass : kConvPasses)
      if (!impl.at(pass).candidates.empty()) {
        RETURN_IF_ERROR(impl.Select(pass, impl.at(pass).candidates.front()));
        impl.Record(pass, choice);
        impl.LogPass(pass);
      }
    return absl::OkStatus();
  }

  // Scratch tensors and the largest candidate's workspace, freed on return.
  // Where they do not fit, the heuristics' first choice stands.
  const ConvProblem& p = impl.problem;
  const size_t element = SizeOf(p.io_type);
  int64_t workspace_bytes = 0;
  for (ConvPass pass : kConvPasses)
    for (int64_t plan : impl.at(pass).candidates) {
      int64_t bytes = 0;
      FE_RETURN_IF_ERROR(impl.at(pass).graph->get_workspace_size_plan_at_index(plan, bytes),
                         impl.What(pass));
      workspace_bytes = std::max(workspace_bytes, bytes);
    }
  DeviceScratch scratch;
  ConvBuffers buffers;
  buffers.x = scratch.Allocate(static_cast<size_t>(p.x.elements()) * element);
  buffers.w = scratch.Allocate(static_cast<size_t>(p.w.elements()) * element);
  buffers.y = scratch.Allocate(static_cast<size_t>(p.y.elements()) * element);
  void* workspace = scratch.Allocate(static_cast<size_t>(workspace_bytes));
  cudaStream_t stream = nullptr;
  Events events;
  bool ready = buffers.x != nullptr && buffers.w != nullptr && buffers.y != nullptr &&
               workspace != nullptr && cudnnGetStream(cudnn, &stream) == CUDNN_STATUS_SUCCESS &&
               cudaEventCreate(&events.start) == cudaSuccess &&
               cudaEventCreate(&events.stop) == cudaSuccess;
  // Small random values: garbage could meet denormals or NaNs, and zeros
  // can make an engine look faster than it is on data.
  for (const auto& [pointer, count] : {std::pair<void*, int64_t>{buffers.x, p.x.elements()},
                                       {buffers.w, p.w.elements()},
                                       {buffers.y, p.y.elements()}})
    ready = ready && FillRandom(pointer, count, p.io_type, stream);
  if (!ready) cudaGetLastError();

  for (ConvPass pass : kConvPasses) {
    const std::vector<int64_t>& candidates = impl.at(pass).candidates;
    if (candidates.empty()) continue;  // unavailable (above)
    RETURN_IF_ERROR(CheckCompileDeadline(absl::StrCat(ConvPassName(pass), " timing"),
                                         absl::StrCat(built_passes, "; timing ",
                                                      candidates.size(), " candidates")));
    int64_t best = candidates.front();
    const absl::Time timing_start = absl::Now();
    absl::Status timing_error;  // the first candidate's that failed to run
    if (ready && candidates.size() > 1) {
      float best_ms = std::numeric_limits<float>::infinity();
      for (int64_t plan : candidates) {
        absl::StatusOr<float> ms = impl.Time(pass, plan, cudnn, buffers, workspace,
                                             std::max(choice.timed_runs, 1), stream, events);
        if (!ms.ok()) {
          if (IsOutOfMemory(ms.status())) return ms.status();
          ClearLastErrors();
          if (timing_error.ok()) timing_error = ms.status();
          continue;  // a candidate that fails to run is not chosen
        }
        if (*ms < best_ms) {
          best_ms = *ms;
          best = plan;
          impl.at(pass).best_ms = *ms;
        }
      }
      if (!std::isfinite(best_ms) && !timing_error.ok()) {
        // Every candidate failed to run: the pass has no engine that runs.
        Impl::Pass& slot = impl.at(pass);
        slot.timing_seconds = absl::ToDoubleSeconds(absl::Now() - timing_start);
        const absl::Status failed = absl::Status(
            timing_error.code(),
            absl::StrCat(impl.What(pass), ": every built engine failed to run (first: ",
                         timing_error.message(), ")"));
        slot.candidates.clear();
        slot.unavailable = pass == ConvPass::kForward
                               ? failed
                               : absl::UnimplementedError(
                                     absl::StrCat("unsupported: ", failed.message()));
        slot.name = "none";
        impl.LogPass(pass);
        if (pass == ConvPass::kForward) return failed;
        continue;
      }
    }
    impl.at(pass).timing_seconds = absl::ToDoubleSeconds(absl::Now() - timing_start);
    RETURN_IF_ERROR(impl.Select(pass, best));
    impl.Record(pass, choice);
    impl.LogPass(pass);
  }
  if (ready && cudaStreamSynchronize(stream) != cudaSuccess)
    return absl::InternalError(absl::StrCat(
        impl.what, ": timing the plans failed: ", cudaGetErrorString(cudaGetLastError())));
  return absl::OkStatus();
}

absl::Status ConvGraphs::Run(ConvPass pass, cudnnContext* cudnn, const ConvBuffers& buffers,
                             void* workspace) const {
  const Impl::Pass& slot = impl_->at(pass);
  if (!slot.unavailable.ok()) return slot.unavailable;
  if (slot.plan < 0)
    return absl::FailedPreconditionError(
        absl::StrCat(impl_->What(pass), ": no plan chosen (ChoosePlans not called)"));
  std::unordered_map<int64_t, void*> pack = {
      {kUidX, buffers.x}, {kUidW, buffers.w}, {kUidY, buffers.y}};
  FE_RETURN_IF_ERROR(slot.graph->execute_plan_at_index(cudnn, pack, workspace, slot.plan),
                     impl_->What(pass));
  return absl::OkStatus();
}

const ConvProblem& ConvGraphs::problem() const { return impl_->problem; }

int64_t ConvGraphs::workspace_bytes(ConvPass pass) const { return impl_->at(pass).workspace; }

std::string ConvGraphs::plan_name(ConvPass pass) const { return impl_->at(pass).name; }

std::string ConvGraphs::implementation() const {
  return absl::StrCat("cudnn:fprop=", plan_name(ConvPass::kForward),
                      ",dgrad=", plan_name(ConvPass::kBackwardData),
                      ",wgrad=", plan_name(ConvPass::kBackwardFilter));
}

ConvTensor ConvGraphs::output(ConvPass pass) const {
  ConvTensor t;
  const auto& out = impl_->at(pass).output;
  const std::vector<int64_t> dims = out->get_dim();
  const std::vector<int64_t> strides = out->get_stride();
  for (size_t i = 0; i < 4 && i < dims.size(); ++i) t.dims[i] = dims[i];
  for (size_t i = 0; i < 4 && i < strides.size(); ++i) t.strides[i] = strides[i];
  return t;
}

}  // namespace cnnbench::cuda
