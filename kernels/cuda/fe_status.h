// cudnn-frontend errors as Status values, the project's types as its
// types, and the engine listing (engine_pick.h's EngineListing) the cuda
// backend's graphs (convolution, batch norm) share. Builds with the cudnn-frontend headers only.
#ifndef CNNBENCH_KERNELS_CUDA_FE_STATUS_H_
#define CNNBENCH_KERNELS_CUDA_FE_STATUS_H_

#include <cuda_runtime.h>
#include <cudnn_frontend.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/dtype.h"
#include "core/cuda_status.h"
#include "core/status.h"
#include "kernels/cuda/engine_pick.h"

namespace cnnbench::cuda {

// cudnn-frontend's type of an activation type (fp32 for the rest).
inline cudnn_frontend::DataType_t FeType(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return cudnn_frontend::DataType_t::HALF;
    case DType::kBF16:
      return cudnn_frontend::DataType_t::BFLOAT16;
    default:
      return cudnn_frontend::DataType_t::FLOAT;
  }
}

// A cudnn-frontend error as a Status naming `what` (the descriptor and the
// pass) and the call, with cuDNN's own last error on this thread (which
// says, for example, which sub-library failed to load) when it has one;
// allocation failures are OOM, missing engines "unsupported", bad
// attributes InvalidArgument.
inline absl::Status FeStatus(cudnn_frontend::error_t error, absl::string_view what,
                             absl::string_view call) {
  namespace fe = cudnn_frontend;
  std::string message = error.get_message();
  if (const std::string last = CudnnLastError(); !last.empty() && !absl::StrContains(message, last))
    absl::StrAppend(&message, " [cuDNN: ", last, "]");
  const std::string text = absl::StrCat(what, ": ", call, " failed: ", message);
  if (absl::StrContains(message, "ALLOC_FAILED") || absl::StrContains(message, "out of memory"))
    return OutOfMemoryError(text);
  switch (error.get_code()) {
    case fe::error_code_t::GRAPH_NOT_SUPPORTED:
    case fe::error_code_t::GRAPH_EXECUTION_PLAN_CREATION_FAILED:
    case fe::error_code_t::HEURISTIC_QUERY_FAILED:
      return absl::UnimplementedError(absl::StrCat("unsupported: ", text));
    case fe::error_code_t::ATTRIBUTE_NOT_SET:
    case fe::error_code_t::SHAPE_DEDUCTION_FAILED:
    case fe::error_code_t::INVALID_VALUE:
      return absl::InvalidArgumentError(text);
    default:
      return absl::InternalError(text);
  }
}

}  // namespace cnnbench::cuda

#define FE_RETURN_IF_ERROR(expr, what)                                                         \
  do {                                                                                         \
    ::cudnn_frontend::error_t cnnbench_fe_ = (expr);                                           \
    if (cnnbench_fe_.is_bad()) return ::cnnbench::cuda::FeStatus(cnnbench_fe_, (what), #expr); \
  } while (0)

namespace cnnbench::cuda {

// Reads and so clears cuDNN's last error message on this thread and CUDA's
// last (non-sticky) error; returns cuDNN's message ("" if none). For paths
// that swallow a failure and go on.
inline std::string ClearLastErrors() {
  cudaGetLastError();
  return CudnnLastError();
}

// EngineListing over a cudnn-frontend graph (built with
// build_operation_graph): each List appends the heuristics' mode A listing
// (or the fallback list where mode A refuses the graph) and bars, across
// every configuration listed so far, those with a `strict` (or `relaxed`)
// numerical note, and those compiled at run time or those not, as the stage
// asks. Earlier listings were already tried, so barring them again changes
// nothing the picker sees.
class FeEngineListing : public EngineListing {
 public:
  FeEngineListing(cudnn_frontend::graph::Graph& graph,
                  std::vector<cudnn_frontend::NumericalNote_t> strict,
                  std::vector<cudnn_frontend::NumericalNote_t> relaxed, bool has_relaxed,
                  std::string what)
      : graph_(graph),
        strict_(std::move(strict)),
        relaxed_(std::move(relaxed)),
        has_relaxed_(has_relaxed),
        what_(std::move(what)) {}

  absl::StatusOr<int64_t> List(const EngineStage& stage) override {
    namespace fe = cudnn_frontend;
    // Mode A and the fallback list, as cudnn-frontend's samples ask; the
    // fallback list alone where mode A refuses the graph.
    if (graph_.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}).is_bad()) {
      ClearLastErrors();  // the refusal's, which a later error would carry
      FE_RETURN_IF_ERROR(graph_.create_execution_plans({fe::HeurMode_t::FALLBACK}), what_);
    }
    const auto& barred = stage.relaxed ? relaxed_ : strict_;
    if (!barred.empty()) graph_.deselect_numeric_notes(barred);
    if (stage.relaxed) {
      // Only what the strict filter barred: the rest was tried already.
      std::vector<cudnn_frontend::NumericalNote_t> only;
      for (auto note : strict_)
        if (std::find(relaxed_.begin(), relaxed_.end(), note) == relaxed_.end())
          only.push_back(note);
      if (!only.empty()) graph_.select_numeric_notes(only);
    }
    if (stage.runtime_compiled) {
      graph_.select_behavior_notes({fe::BehaviorNote_t::RUNTIME_COMPILATION});
    } else {
      graph_.deselect_behavior_notes({fe::BehaviorNote_t::RUNTIME_COMPILATION});
    }
    return graph_.get_execution_plan_count();
  }

  EngineBuild Build(int64_t index) override {
    // The same engine and knobs listed again (mode A and the fallback list
    // overlap; a later stage lists the graph again): built once.
    std::string name;
    if (graph_.get_plan_name_at_index(index, name).is_good() && !name.empty() &&
        !tried_.insert(name).second)
      return {EngineBuildResult::kBarred, ""};
    cudnn_frontend::error_t built = graph_.build_plan_at_index(index);
    if (built.is_good()) return {EngineBuildResult::kBuilt, ""};
    std::string message = built.get_message();
    // cudnn-frontend's answer for a configuration a filter barred: no build.
    if (absl::StrContains(message, "Deselecting execution plan")) {
      if (!name.empty()) tried_.erase(name);  // barred here, perhaps not in a later stage
      return {EngineBuildResult::kBarred, ""};
    }
    // Read (and so clear) cuDNN's own reason and CUDA's last error, which a
    // later error would otherwise carry.
    const std::string last = ClearLastErrors();
    if (!last.empty() && !absl::StrContains(message, last))
      absl::StrAppend(&message, " [cuDNN: ", last, "]");
    return {EngineBuildResult::kFailed, std::move(message)};
  }

  bool has_relaxed() const override { return has_relaxed_; }

  absl::StatusOr<int64_t> ListRecorded(const RecordedEngine& engine) override {
    if (absl::Status replayable = engine.CheckReplayable(); !replayable.ok())
      return absl::FailedPreconditionError(
          absl::StrCat(what_, ": the recorded engine ", engine.ToText(), ": ",
                       replayable.message()));
    std::unordered_map<cudnn_frontend::KnobType_t, int64_t> knobs;
    for (const auto& [type, value] : engine.knobs)
      knobs[static_cast<cudnn_frontend::KnobType_t>(type)] = value;
    FE_RETURN_IF_ERROR(graph_.create_execution_plan(engine.engine_id, knobs),
                       absl::StrCat(what_, ": the recorded engine ", engine.ToText()));
    return graph_.get_execution_plan_count();
  }

 private:
  cudnn_frontend::graph::Graph& graph_;
  std::vector<cudnn_frontend::NumericalNote_t> strict_, relaxed_;
  bool has_relaxed_;
  std::string what_;
  std::set<std::string> tried_;  // engine names built or failed
};

// Whether configuration `index` of `graph` is compiled at run time.
inline bool RuntimeCompiledPlan(const cudnn_frontend::graph::Graph& graph, int64_t index) {
  std::vector<cudnn_frontend::BehaviorNote_t> notes;
  if (graph.get_behavior_notes_for_plan_at_index(index, notes).is_bad()) return false;
  for (auto note : notes)
    if (note == cudnn_frontend::BehaviorNote_t::RUNTIME_COMPILATION) return true;
  return false;
}

// Configuration `index` of `graph` as the plan-choice file keeps it
// (plan_choices.h); `relaxed` is the filter it was found under.
inline absl::StatusOr<RecordedEngine> DescribePlan(const cudnn_frontend::graph::Graph& graph,
                                                   int64_t index, bool relaxed,
                                                   absl::string_view what) {
  RecordedEngine engine;
  std::unordered_map<cudnn_frontend::KnobType_t, int64_t> knobs;
  FE_RETURN_IF_ERROR(graph.get_engine_and_knobs_at_index(index, engine.engine_id, knobs), what);
  for (const auto& [type, value] : knobs) engine.knobs.emplace_back(static_cast<int>(type), value);
  std::sort(engine.knobs.begin(), engine.knobs.end());
  // Two knobs cudnn-frontend cannot name share type 0 in its map: one is lost.
  if (absl::Status replayable = engine.CheckReplayable(); !replayable.ok())
    return absl::FailedPreconditionError(absl::StrCat(what, ": ", replayable.message()));
  engine.runtime_compiled = RuntimeCompiledPlan(graph, index);
  engine.relaxed = relaxed;
  return engine;
}

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_FE_STATUS_H_
