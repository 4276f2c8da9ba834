// The activation op with oneDNN's eltwise primitives (OneDnnActivation),
// in the producer's layout.
#include <algorithm>

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
    const EltwiseActivation eltwise = OneDnnActivation(d.kind, /*use_dst=*/false);
    dnnl::eltwise_forward::desc fwd_desc(dnnl::prop_kind::forward_training, eltwise.algorithm,
                                         data_md, eltwise.alpha, eltwise.beta);
    dnnl::eltwise_forward::primitive_desc fwd_pd(fwd_desc, attr, engine);
    forward_ =
        BoundPrimitive(fwd_pd, dnnl::eltwise_forward(fwd_pd), {DNNL_ARG_SRC, DNNL_ARG_DST}, engine);
    // dx = dy * f'(x): the backward of the same algorithm reads x.
    dnnl::eltwise_backward::desc bwd_desc(eltwise.algorithm, data_md, data_md, eltwise.alpha,
                                          eltwise.beta);
    dnnl::eltwise_backward::primitive_desc bwd_pd(bwd_desc, attr, engine, fwd_pd);
    backward_ = BoundPrimitive(bwd_pd, dnnl::eltwise_backward(bwd_pd),
                               {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC}, engine);

    const TensorSpec input = given != nullptr ? *given : TensorSpec::Plain(dtype, d.dims.shape());
    signature_.inputs = {input};
    signature_.output = input;
    signature_.scratch_bytes = std::max(forward_.scratchpad_bytes(), backward_.scratchpad_bytes());
    signature_.backward_reads_inputs = true;
    signature_.backward_reads_output = false;
    implementation_ = forward_.implementation();
    backward_implementation_ = backward_.implementation();
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    RETURN_IF_ERROR(RequireScratch(args));
    return Guarded(what_, [&]() -> absl::Status {
      forward_.Set(DNNL_ARG_SRC, x);
      forward_.Set(DNNL_ARG_DST, args.y);
      forward_.SetScratchpad(args.scratch);
      forward_.Execute(context_->stream);
      return absl::OkStatus();
    });
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(RequireScratch(args));
    return Guarded(what_, [&]() -> absl::Status {
      backward_.Set(DNNL_ARG_SRC, x);
      backward_.Set(DNNL_ARG_DIFF_DST, args.dy);
      backward_.Set(DNNL_ARG_DIFF_SRC, args.dx[0]);
      backward_.SetScratchpad(args.scratch);
      backward_.Execute(context_->stream);
      return absl::OkStatus();
    });
  }

 private:
  BoundPrimitive forward_;
  BoundPrimitive backward_;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const ReluDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<ReluKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
