// Convolution on cuDNN's graph API (cudnn-frontend): one graph per pass
// (conv_fprop, conv_dgrad, conv_wgrad), plans chosen once per (descriptor,
// precision, layout) and shared by the kernels of one backend; the bias and
// the activation epilogue (ConvDesc::activation, ReLU or ReLU6; forward-only
// kernels alone, see CheckSupported) as one small CUDA kernel
// after the forward graph, the bias gradient as another (conv_bias.cu). x, y and w are in the
// precision's activation layout: NCHW and (K,C/g,R,S) for fp32, NHWC and (K,R,S,C/g) for the
// tensor-core precisions; the bias is fp32.
#include <map>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/status.h"
#include "kernels/cuda/conv_bias.h"
#include "kernels/cuda/conv_graph.h"
#include "kernels/cuda/conv_problem.h"
#include "kernels/cuda/engine_pick.h"
#include "kernels/cuda/ops.h"

namespace cnnbench::cuda {
// Chosen plans of one backend, by ConvProblem::key: kernels of equal
// descriptors share the graphs (running them is read-only).
class ConvPlanCache {
 public:
  absl::StatusOr<std::shared_ptr<const ConvGraphs>> Get(const ConvProblem& problem,
                                                        cudnnHandle_t cudnn,
                                                        const ConvPlanChoice& choice) {
    std::lock_guard<std::mutex> lock(mutex_);
    // A forward-only entry must not serve a training kernel; a training
    // entry serves both.
    auto found = plans_.find(problem.key);
    if (found == plans_.end() && choice.forward_only) found = plans_.find(problem.key + "/fwd");
    if (found != plans_.end()) return found->second;
    ASSIGN_OR_RETURN(std::unique_ptr<ConvGraphs> graphs, ConvGraphs::Validate(problem));
    RETURN_IF_ERROR(graphs->ChoosePlans(cudnn, choice));
    std::shared_ptr<const ConvGraphs> shared(std::move(graphs));
    plans_.emplace(choice.forward_only ? problem.key + "/fwd" : problem.key, shared);
    return shared;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const ConvGraphs>> plans_;
};

namespace {

// The cache of `context`'s backend (released before its cuDNN handle).
std::shared_ptr<ConvPlanCache> CacheOf(const ContextPtr& context) {
  std::lock_guard<std::mutex> lock(context->shared_mutex);
  if (context->conv_plans == nullptr) context->conv_plans = std::make_shared<ConvPlanCache>();
  return context->conv_plans;
}

class ConvKernel : public CudaKernel {
 public:
  ConvKernel(ContextPtr context, const ConvDesc& desc)
      : CudaKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const KernelOptions& options, const Inputs& inputs) {
    if (inputs.size() > 1)
      return absl::InvalidArgumentError(
          absl::StrCat(what_, ": takes 1 input, got ", inputs.size()));
    const Layout layout = ActivationLayout(*context_, options);
    nhwc_ = layout == Layout::kNHWC;
    const TensorSpec input = DenseSpec(options.dtype, desc_.input().shape(), layout);
    // A producer in the other plain layout is reordered by the executor
    // (SameLayout is false on that edge); anything else does not fit.
    if (!inputs.empty()) {
      const TensorSpec& given = inputs[0];
      if (!given.is_plain() || given.dtype != options.dtype || !(given.shape == input.shape))
        return absl::InvalidArgumentError(
            absl::StrCat(what_, ": input spec ", given.DebugString(), " does not fit"));
    }
    ASSIGN_OR_RETURN(elem_, ToElem(options.dtype));
    if (!ConvGraphsAvailable())
      return absl::UnimplementedError(absl::StrCat("unsupported: convolution ", what_,
                                                   " on the cuda backend (",
                                                   ConvGraphsUnavailableReason(), ")"));
    ASSIGN_OR_RETURN(ConvProblem problem, MakeConvProblem(desc_, options.precision, layout));
    ConvPlanChoice choice;
    // Deterministic: also the same engine in every backend and process
    // (the heuristics' first), not the fastest of a timing that can differ.
    choice.deterministic = context_->options.deterministic;
    choice.timed = !choice.deterministic;
    choice.runtime_compiled_attempts = RuntimeCompiledAttemptsOf(*context_);
    choice.runtime_compiled_budget = RuntimeCompiledBudgetOf(*context_);
    choice.forward_only = forward_only_ = options.forward_only;
    choice.plan_choices = PlanChoicesOf(*context_);
    ASSIGN_OR_RETURN(graphs_, CacheOf(context_)->Get(problem, context_->cudnn, choice));

    signature_.inputs = {input};
    signature_.output = DenseSpec(options.dtype, desc_.output().shape(), layout);
    signature_.params = {DenseSpec(options.dtype, desc_.weights_shape(), layout)};
    if (desc_.bias) signature_.params.push_back(TensorSpec::Plain(DType::kF32, Shape{desc_.k}));
    signature_.scratch_bytes =
        ConvScratchBytes({graphs_->workspace_bytes(ConvPass::kForward),
                          graphs_->workspace_bytes(ConvPass::kBackwardData),
                          graphs_->workspace_bytes(ConvPass::kBackwardFilter)},
                         256);
    signature_.backward_reads_inputs = true;  // the weight gradient reads x
    signature_.backward_reads_output = false;
    implementation_ = graphs_->implementation();
    // "+cuda:epilogue(bias,relu6)": the activation named as its suffix, "_" dropped.
    absl::string_view activation = ActivationSuffix(desc_.activation);
    if (!activation.empty()) activation.remove_prefix(1);
    if (desc_.bias || fused_activation())
      implementation_ = absl::StrCat(implementation_, "+cuda:epilogue(", desc_.bias ? "bias" : "",
                                     desc_.bias && fused_activation() ? "," : "", activation, ")");
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    ASSIGN_OR_RETURN(void* w, Param(args.params, 0, "w"));
    RETURN_IF_ERROR(RequireScratch(args));
    RETURN_IF_ERROR(graphs_->Run(ConvPass::kForward, context_->cudnn,
                                 {const_cast<void*>(x), w, args.y}, args.scratch));
    if (!desc_.bias && !fused_activation()) return absl::OkStatus();
    const float* b = nullptr;
    if (desc_.bias) {
      ASSIGN_OR_RETURN(void* bias, Param(args.params, 1, "bias"));
      b = static_cast<const float*>(bias);
    }
    return Launched(LaunchConvEpilogue(args.y, elem_, nhwc_, b, desc_.activation, desc_.n,
                                       desc_.k, desc_.h.out * desc_.w.out, context_->raw_stream()),
                    "epilogue (bias, activation)");
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (fused_activation() || forward_only_) return ForwardOnlyError(what_);
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    ASSIGN_OR_RETURN(void* w, Param(args.params, 0, "w"));
    RETURN_IF_ERROR(RequireScratch(args));
    return graphs_->Run(ConvPass::kBackwardData, context_->cudnn,
                        {args.dx[0], w, const_cast<void*>(args.dy)}, args.scratch);
  }

  absl::Status BackwardWeights(const KernelArgs& args) override {
    if (fused_activation() || forward_only_) return ForwardOnlyError(what_);
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    ASSIGN_OR_RETURN(void* dw, Param(args.dparams, 0, "dw"));
    RETURN_IF_ERROR(RequireScratch(args));
    RETURN_IF_ERROR(graphs_->Run(ConvPass::kBackwardFilter, context_->cudnn,
                                 {const_cast<void*>(x), dw, const_cast<void*>(args.dy)},
                                 args.scratch));
    if (!desc_.bias) return absl::OkStatus();
    ASSIGN_OR_RETURN(void* db, Param(args.dparams, 1, "dbias"));
    return Launched(LaunchConvBiasGrad(args.dy, elem_, nhwc_, static_cast<float*>(db), desc_.n,
                                       desc_.k, desc_.h.out * desc_.w.out, context_->raw_stream()),
                    "bias gradient");
  }

 private:
  absl::StatusOr<void*> Param(const std::vector<void*>& params, size_t i,
                              absl::string_view name) const {
    if (i >= params.size() || params[i] == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(what_, ": ", name, " is missing"));
    return params[i];
  }

  // A fused ReLU or ReLU6, forward only (CheckSupported refuses the rest).
  bool fused_activation() const { return desc_.activation != ActivationKind::kNone; }
  const ConvDesc desc_;
  Elem elem_ = Elem::kF32;
  bool nhwc_ = false;
  bool forward_only_ = false;  // KernelOptions::forward_only: no backward plan was built
  std::shared_ptr<const ConvGraphs> graphs_;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const ConvDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<ConvKernel>(std::move(context), desc, options, inputs);
}

}  // namespace cnnbench::cuda
