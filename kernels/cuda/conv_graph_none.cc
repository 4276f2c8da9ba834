// ConvGraphs in builds without the cudnn-frontend headers (or without
// CUDA): every call is "unsupported: ..." with the reason.
#include "absl/strings/str_cat.h"
#include "kernels/cuda/conv_graph.h"

namespace cnnbench::cuda {
namespace {

absl::Status Unavailable(const ConvProblem& problem) {
  return absl::UnimplementedError(absl::StrCat("unsupported: convolution ",
                                               problem.desc.ToString(), " on the cuda backend (",
                                               ConvGraphsUnavailableReason(), ")"));
}

}  // namespace

struct ConvGraphs::Impl {
  ConvProblem problem;
};

bool ConvGraphsAvailable() { return false; }

std::string PlanChoiceIdentity(int) { return ""; }

std::string ConvGraphsUnavailableReason() {
  return "cudnn-frontend headers not found: ./bazelw fetches them into "
         "~/.cache/cnnbench/ (PyPI wheel nvidia-cudnn-frontend)";
}

ConvGraphs::ConvGraphs(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ConvGraphs::~ConvGraphs() = default;

absl::StatusOr<std::unique_ptr<ConvGraphs>> ConvGraphs::Validate(const ConvProblem& problem) {
  return Unavailable(problem);
}

absl::Status ConvGraphs::ChoosePlans(cudnnContext*, const ConvPlanChoice&) {
  return Unavailable(impl_->problem);
}

absl::Status ConvGraphs::Run(ConvPass, cudnnContext*, const ConvBuffers&, void*) const {
  return Unavailable(impl_->problem);
}

const ConvProblem& ConvGraphs::problem() const { return impl_->problem; }
int64_t ConvGraphs::workspace_bytes(ConvPass) const { return 0; }
std::string ConvGraphs::plan_name(ConvPass) const { return ""; }
std::string ConvGraphs::implementation() const { return ""; }
ConvTensor ConvGraphs::output(ConvPass) const { return {}; }

}  // namespace cnnbench::cuda
