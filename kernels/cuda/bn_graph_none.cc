// BnGraphs in builds without the cudnn-frontend headers (or without CUDA):
// Validate is "unsupported: ...", so batch norm keeps cuDNN's legacy calls.
#include "absl/strings/str_cat.h"
#include "kernels/cuda/bn_graph.h"

namespace cnnbench::cuda {

struct BnGraphs::Impl {};

BnGraphs::BnGraphs(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BnGraphs::~BnGraphs() = default;

absl::StatusOr<std::unique_ptr<BnGraphs>> BnGraphs::Validate(const BnProblem& problem) {
  return absl::UnimplementedError(
      absl::StrCat("unsupported: ", problem.what,
                   " as a cuDNN graph (no cudnn-frontend headers in this build)"));
}

absl::Status BnGraphs::ChoosePlans(cudnnContext*) {
  return absl::UnimplementedError("unsupported: no cudnn-frontend headers in this build");
}

absl::Status BnGraphs::Forward(cudnnContext*, const BnForwardBuffers&, void*) const {
  return absl::UnimplementedError("unsupported: no cudnn-frontend headers in this build");
}

absl::Status BnGraphs::Backward(cudnnContext*, const BnBackwardBuffers&, void*) const {
  return absl::UnimplementedError("unsupported: no cudnn-frontend headers in this build");
}

int64_t BnGraphs::workspace_bytes() const { return 0; }

bool BnGraphs::forward_takes_running_stats() const { return false; }

std::string BnGraphs::implementation() const { return ""; }

BnReluForm BnGraphs::relu_form() const { return BnReluForm::kNone; }

int64_t BnGraphs::relu_mask_bytes() const { return 0; }

}  // namespace cnnbench::cuda
