// Across-channel LRN with oneDNN's primitives, in the producer's layout.
// TensorFlow's y = x / (bias + alpha * sum_{|j-c|<=r} x_j^2)^beta becomes
// oneDNN's local_size = 2r+1, k = bias and alpha * local_size (oneDNN
// divides alpha by local_size).
#include <algorithm>

#include "core/status.h"
#include "kernels/onednn/ops.h"
#include "kernels/onednn/window_kernel.h"

namespace cnnbench {
namespace onednn {
namespace {

using dnnl::memory;

class LrnKernel : public WindowKernel {
 public:
  LrnKernel(std::shared_ptr<Context> context, const LrnDesc& desc)
      : WindowKernel(std::move(context), desc.ToString(), /*backward_reads_src=*/true) {}

  absl::Status Init(const LrnDesc& d, const KernelOptions& options, const Inputs& inputs) {
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
    const memory::dim local_size = 2 * d.depth_radius + 1;
    const float alpha = static_cast<float>(d.alpha * static_cast<double>(local_size));
    const float beta = static_cast<float>(d.beta);
    const float k = static_cast<float>(d.bias);
    const dnnl::algorithm algorithm = dnnl::algorithm::lrn_across_channels;
    const dnnl::primitive_attr attr = UserScratchpadAttr();

    dnnl::lrn_forward::desc fwd_desc(dnnl::prop_kind::forward_training, algorithm, data_md,
                                     local_size, alpha, beta, k);
    dnnl::lrn_forward::primitive_desc fwd_pd(fwd_desc, attr, engine);
    workspace_ = fwd_pd.workspace_desc().get_size() > 0;
    std::vector<int> fwd_args = {DNNL_ARG_SRC, DNNL_ARG_DST};
    if (workspace_) fwd_args.push_back(DNNL_ARG_WORKSPACE);
    forward_ = BoundPrimitive(fwd_pd, dnnl::lrn_forward(fwd_pd), fwd_args, engine);

    dnnl::lrn_forward::desc inf_desc(dnnl::prop_kind::forward_inference, algorithm, data_md,
                                     local_size, alpha, beta, k);
    dnnl::lrn_forward::primitive_desc inf_pd(inf_desc, attr, engine);
    inference_ =
        BoundPrimitive(inf_pd, dnnl::lrn_forward(inf_pd), {DNNL_ARG_SRC, DNNL_ARG_DST}, engine);

    dnnl::lrn_backward::desc bwd_desc(algorithm, data_md, data_md, local_size, alpha, beta, k);
    dnnl::lrn_backward::primitive_desc bwd_pd(bwd_desc, attr, engine, fwd_pd);
    std::vector<int> bwd_args = {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC};
    if (workspace_) bwd_args.push_back(DNNL_ARG_WORKSPACE);
    backward_ = BoundPrimitive(bwd_pd, dnnl::lrn_backward(bwd_pd), bwd_args, engine);

    const TensorSpec input = given != nullptr ? *given : TensorSpec::Plain(dtype, d.dims.shape());
    signature_.inputs = {input};
    signature_.output = input;
    signature_.saved_bytes = workspace_ ? fwd_pd.workspace_desc().get_size() : 0;
    signature_.scratch_bytes = std::max(
        {forward_.scratchpad_bytes(), inference_.scratchpad_bytes(), backward_.scratchpad_bytes()});
    signature_.backward_reads_inputs = true;
    signature_.backward_reads_output = false;
    implementation_ = forward_.implementation();
    backward_implementation_ = backward_.implementation();
    return absl::OkStatus();
  }
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const LrnDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<LrnKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
