// The activation op with oneDNN's eltwise primitives (OneDnnActivationSteps:
// one per kind, two for hard-sigmoid, the second in place on y), in the
// producer's layout.
#include <algorithm>
#include <vector>

#include "core/status.h"
#include "kernels/onednn/ops.h"

namespace cnnbench {
namespace onednn {
namespace {

using dnnl::memory;

class ReluKernel : public OneDnnKernel {
 public:
  ReluKernel(std::shared_ptr<Context> context, const ReluDesc& desc)
      : OneDnnKernel(std::move(context), desc.ToString()) {}

  absl::Status Init(const ReluDesc& d, const KernelOptions& options, const Inputs& inputs) {
    const DType dtype = options.dtype;
    RETURN_IF_ERROR(CheckInputCount(inputs, 1, what_));
    ASSIGN_OR_RETURN(const TensorSpec* given, GivenInput(inputs, 0, dtype, d.dims.shape(), what_));
    ASSIGN_OR_RETURN(memory::data_type type, ToDnnlType(dtype));
    const dnnl::engine& engine = context_->engine;
    const memory::dims dims = ToDims(d.dims.shape());
    memory::desc data_md = PlainDesc(dims, type);
    if (given != nullptr) {
      ASSIGN_OR_RETURN(data_md, DescFromSpec(*given, dims, "input 0", what_));
    }
    const dnnl::primitive_attr attr = UserScratchpadAttr();
    size_t scratch = 0;
    for (const EltwiseActivation& step : OneDnnActivationSteps(d.kind, /*use_dst=*/false)) {
      dnnl::eltwise_forward::desc fwd_desc(dnnl::prop_kind::forward_training, step.algorithm,
                                           data_md, step.alpha, step.beta);
      dnnl::eltwise_forward::primitive_desc fwd_pd(fwd_desc, attr, engine);
      forward_.push_back(BoundPrimitive(fwd_pd, dnnl::eltwise_forward(fwd_pd),
                                        {DNNL_ARG_SRC, DNNL_ARG_DST}, engine));
      // dx = dy * f'(x): the backward of the same algorithm reads x (every
      // step's derivative is a function of x: OneDnnActivationSteps).
      dnnl::eltwise_backward::desc bwd_desc(step.algorithm, data_md, data_md, step.alpha,
                                            step.beta);
      dnnl::eltwise_backward::primitive_desc bwd_pd(bwd_desc, attr, engine, fwd_pd);
      backward_.push_back(BoundPrimitive(bwd_pd, dnnl::eltwise_backward(bwd_pd),
                                         {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC},
                                         engine));
      scratch = std::max(
          {scratch, forward_.back().scratchpad_bytes(), backward_.back().scratchpad_bytes()});
    }

    const TensorSpec input = given != nullptr ? *given : TensorSpec::Plain(dtype, d.dims.shape());
    signature_.inputs = {input};
    signature_.output = input;
    signature_.scratch_bytes = scratch;
    signature_.backward_reads_inputs = true;
    signature_.backward_reads_output = false;
    implementation_ = forward_.front().implementation();
    backward_implementation_ = backward_.front().implementation();
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    RETURN_IF_ERROR(RequireScratch(args));
    return Guarded(what_, [&]() -> absl::Status {
      const void* from = x;
      for (BoundPrimitive& step : forward_) {  // the later steps in place on y
        step.Set(DNNL_ARG_SRC, from);
        step.Set(DNNL_ARG_DST, args.y);
        step.SetScratchpad(args.scratch);
        step.Execute(context_->stream);
        from = args.y;
      }
      return absl::OkStatus();
    });
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(RequireScratch(args));
    return Guarded(what_, [&]() -> absl::Status {
      // Last step first: each multiplies by its own f'(x), the earlier ones
      // in place on dx.
      const void* from = args.dy;
      for (auto step = backward_.rbegin(); step != backward_.rend(); ++step) {
        step->Set(DNNL_ARG_SRC, x);
        step->Set(DNNL_ARG_DIFF_DST, from);
        step->Set(DNNL_ARG_DIFF_SRC, args.dx[0]);
        step->SetScratchpad(args.scratch);
        step->Execute(context_->stream);
        from = args.dx[0];
      }
      return absl::OkStatus();
    });
  }

 private:
  std::vector<BoundPrimitive> forward_;
  std::vector<BoundPrimitive> backward_;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const ReluDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<ReluKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
