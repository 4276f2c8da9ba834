// cudnn-frontend errors as Status values, the project's types as its
// types, and the engine listing the cuda backend's graphs (convolution,
// batch norm) share. Builds with the cudnn-frontend headers only.
#ifndef CNNBENCH_KERNELS_CUDA_FE_STATUS_H_
#define CNNBENCH_KERNELS_CUDA_FE_STATUS_H_

#include <cudnn_frontend.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/dtype.h"
#include "core/status.h"

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
// pass) and the call; allocation failures are OOM, missing engines
// "unsupported", bad attributes InvalidArgument.
inline absl::Status FeStatus(cudnn_frontend::error_t error, absl::string_view what,
                             absl::string_view call) {
  namespace fe = cudnn_frontend;
  const std::string message = error.get_message();
  const std::string text = absl::StrCat(what, ": ", call, " failed: ", message);
  if (absl::StrContains(message, "ALLOC_FAILED") || absl::StrContains(message, "out of memory"))
    return OutOfMemoryError(text);
  switch (error.get_code()) {
    case fe::error_code_t::GRAPH_NOT_SUPPORTED:
    case fe::error_code_t::GRAPH_EXECUTION_PLAN_CREATION_FAILED:
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

// Lists engine configurations for `graph` (built with
// build_operation_graph): heuristics mode A then the fallback list (mode A
// can refuse a graph the fallback list still covers), engines with a
// `barred` numerical note excluded, and, unless `runtime_compiled`, those
// cuDNN compiles at run time (NVRTC, seconds each). A second call with
// `runtime_compiled` appends a second listing after the first, whose
// barred entries stay barred: build from the first call's count on.
// Returns the number of configurations listed so far.
inline absl::StatusOr<int64_t> ListEngineConfigs(
    cudnn_frontend::graph::Graph& graph, const std::vector<cudnn_frontend::NumericalNote_t>& barred,
    bool runtime_compiled, absl::string_view what) {
  namespace fe = cudnn_frontend;
  if (graph.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}).is_bad())
    FE_RETURN_IF_ERROR(graph.create_execution_plans({fe::HeurMode_t::FALLBACK}), what);
  if (!barred.empty()) graph.deselect_numeric_notes(barred);
  if (!runtime_compiled) graph.deselect_behavior_notes({fe::BehaviorNote_t::RUNTIME_COMPILATION});
  return graph.get_execution_plan_count();
}

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_FE_STATUS_H_
