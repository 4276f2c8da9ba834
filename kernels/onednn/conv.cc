// Convolution (stride, dilation, groups, asymmetric padding, bias) with
// oneDNN's convolution primitives; layouts chosen by oneDNN. The ReLU
// epilogue (ConvDesc::relu) is the forward primitive's eltwise post-op; its
// backward passes refuse (forward only).
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/onednn/ops.h"
#include "kernels/onednn/weighted_layer.h"

namespace cnnbench {
namespace onednn {
namespace {

using dnnl::memory;

class ConvKernel : public WeightedLayer {
 public:
  ConvKernel(std::shared_ptr<Context> context, const ConvDesc& desc)
      : WeightedLayer(std::move(context), desc.ToString(), desc.bias), relu_(desc.relu) {}

  absl::Status BackwardData(const KernelArgs& args) override {
    if (relu_) return ForwardOnlyError(what_);
    return WeightedLayer::BackwardData(args);
  }
  absl::Status BackwardWeights(const KernelArgs& args) override {
    if (relu_) return ForwardOnlyError(what_);
    return WeightedLayer::BackwardWeights(args);
  }

  absl::Status Init(const ConvDesc& d, const KernelOptions& options, const Inputs& inputs) {
    const DType dtype = options.dtype;
    RETURN_IF_ERROR(CheckInputCount(inputs, 1, what_));
    ASSIGN_OR_RETURN(const TensorSpec* given,
                     GivenInput(inputs, 0, dtype, d.input().shape(), what_));
    ASSIGN_OR_RETURN(memory::data_type type, ToDnnlType(dtype));
    const dnnl::engine& engine = context_->engine;
    const memory::dims src_dims = ToDims(d.input().shape());
    const memory::dims dst_dims = ToDims(d.output().shape());
    // oneDNN views grouped weights (K,C/g,R,S) as (g,K/g,C/g,R,S): the same bytes.
    const memory::dims weights_dims =
        d.groups == 1
            ? memory::dims{d.k, d.c, d.h.kernel, d.w.kernel}
            : memory::dims{d.groups, d.k / d.groups, d.c / d.groups, d.h.kernel, d.w.kernel};
    const memory::dims strides = {d.h.stride, d.w.stride};
    const memory::dims dilation = {d.h.dilation - 1, d.w.dilation - 1};  // oneDNN: 0 = dense
    const memory::dims pad_l = {d.h.pad_before, d.w.pad_before};
    const memory::dims pad_r = {d.h.pad_after, d.w.pad_after};
    const memory::desc bias_md = PlainDesc({d.k}, memory::data_type::f32);
    const dnnl::algorithm direct = dnnl::algorithm::convolution_direct;

    // A blocked producer is read as it is; otherwise oneDNN picks the layout
    // and the caller reorders at that graph edge if it differs from its own.
    memory::desc src_md = AnyDesc(src_dims, type);
    if (given != nullptr && !given->is_plain()) {
      ASSIGN_OR_RETURN(src_md, DescFromSpec(*given, src_dims, "input 0", what_));
    }
    const dnnl::primitive_attr attr = UserScratchpadAttr();
    const dnnl::primitive_attr forward_attr = relu_ ? UserScratchpadReluAttr() : attr;
    const memory::desc any_weights = AnyDesc(weights_dims, type);
    const memory::desc any_dst = AnyDesc(dst_dims, type);
    auto fwd_desc = bias_ ? dnnl::convolution_forward::desc(
                                dnnl::prop_kind::forward_training, direct, src_md, any_weights,
                                bias_md, any_dst, strides, dilation, pad_l, pad_r)
                          : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                                            direct, src_md, any_weights, any_dst,
                                                            strides, dilation, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc fwd_pd(fwd_desc, forward_attr, engine);
    const memory::desc src = fwd_pd.src_desc();
    const memory::desc weights = fwd_pd.weights_desc();
    const memory::desc dst = fwd_pd.dst_desc();

    using BackwardDataPd = dnnl::convolution_backward_data::primitive_desc;
    const BackwardDataPd bwd_data_pd = ChooseBackwardData<BackwardDataPd>(
        [&](const memory::desc& w) {
          return BackwardDataPd(dnnl::convolution_backward_data::desc(direct, src, w, dst, strides,
                                                                      dilation, pad_l, pad_r),
                                attr, engine, fwd_pd);
        },
        weights, any_weights);
    using BackwardWeightsPd = dnnl::convolution_backward_weights::primitive_desc;
    const BackwardWeightsPd bwd_weights_pd = ChooseBackwardWeights<BackwardWeightsPd>(
        [&](const memory::desc& w) {
          auto desc = bias_ ? dnnl::convolution_backward_weights::desc(
                                  direct, src, w, bias_md, dst, strides, dilation, pad_l, pad_r)
                            : dnnl::convolution_backward_weights::desc(direct, src, w, dst, strides,
                                                                       dilation, pad_l, pad_r);
          return BackwardWeightsPd(desc, attr, engine, fwd_pd);
        },
        weights, any_weights);
    Bind(fwd_pd, dnnl::convolution_forward(fwd_pd), bwd_data_pd,
         dnnl::convolution_backward_data(bwd_data_pd), bwd_weights_pd,
         dnnl::convolution_backward_weights(bwd_weights_pd));

    signature_.inputs = {given != nullptr && !given->is_plain()
                             ? *given
                             : SpecFromDesc(src, dtype, d.input().shape())};
    signature_.output = SpecFromDesc(dst, dtype, d.output().shape());
    signature_.params = {SpecFromDesc(weights, dtype, d.weights_shape())};
    if (bias_) signature_.params.push_back(TensorSpec::Plain(DType::kF32, Shape{d.k}));
    return absl::OkStatus();
  }

 private:
  const bool relu_;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const ConvDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<ConvKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
