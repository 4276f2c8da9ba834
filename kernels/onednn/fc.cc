// Fully connected layers with oneDNN's inner product. A 4-D input is read
// as the (N, C*H*W) matrix its plain NCHW storage is, so the weights are
// (OC,IC) (row-major, the same bytes as (OC,C,H,W)); a blocked producer's
// output is reordered on the edge. oneDNN 2.6.3 runs a 4-D inner product
// on its gemm kernel, with the weights in another layout in each pass
// (alexnet's fc0, fp32, batch 32: 92 ms a step, against 48 ms for the 2-D
// brgemm kernels with their 1.2 MB reorder of the input;
// docs/results/2026-12-04-update-fc-cpu.md).
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/onednn/ops.h"
#include "kernels/onednn/weighted_layer.h"

namespace cnnbench {
namespace onednn {
namespace {

using dnnl::memory;

// Inputs at most this wide get plain weights (see Init).
constexpr int64_t kNarrowFcInput = 32;

class FcKernel : public WeightedLayer {
 public:
  FcKernel(std::shared_ptr<Context> context, const FcDesc& desc)
      : WeightedLayer(std::move(context), desc.ToString(), desc.bias) {}

  absl::Status Init(const FcDesc& d, const KernelOptions& options, const Inputs& inputs) {
    const DType dtype = options.dtype;
    RETURN_IF_ERROR(CheckInputCount(inputs, 1, what_));
    ASSIGN_OR_RETURN(memory::data_type type, ToDnnlType(dtype));
    const dnnl::engine& engine = context_->engine;
    // (N,IC), unless the producer's spec is (N,C,H,W) with C*H*W == IC.
    const TensorSpec* given = inputs.empty() ? nullptr : &inputs[0];
    Shape input_shape{d.n, d.ic};
    if (given != nullptr) {
      const Shape& s = given->shape;
      const bool matches =
          s.rank() == 4 ? s[0] == d.n && s[1] * s[2] * s[3] == d.ic : s == input_shape;
      if (given->dtype != dtype || !matches)
        return absl::InvalidArgumentError(absl::StrCat(
            what_, ": input 0 spec ", given->DebugString(), " should be ", DTypeName(dtype), "[",
            d.n, ",", d.ic, "] or [", d.n, ",C,H,W] with C*H*W = ", d.ic));
      input_shape = s;
    }
    const bool flattened = input_shape.rank() == 4;
    const memory::dims src_dims = {d.n, d.ic};
    const memory::dims weights_dims = {d.oc, d.ic};
    const memory::desc bias_md = PlainDesc({d.oc}, memory::data_type::f32);

    memory::desc src_md = flattened ? PlainDesc(src_dims, type) : AnyDesc(src_dims, type);
    if (!flattened && given != nullptr && !given->is_plain()) {
      ASSIGN_OR_RETURN(src_md, DescFromSpec(*given, src_dims, "input 0", what_));
    }
    const dnnl::primitive_attr attr = UserScratchpadAttr();
    // oneDNN 2.6's brgemm backward-data inner product (avx512_core) reads
    // through a null accumulator for narrow inputs with wide outputs (seen:
    // ic <= 32 with oc >= 2048: a segfault inside the JIT code). Plain
    // weights steer every pass to the gemm-based kernels, which handle
    // these small layers correctly; real models' fc layers are far wider.
    const bool narrow_input = d.ic <= kNarrowFcInput;
    const memory::desc any_weights =
        narrow_input ? PlainDesc(weights_dims, type) : AnyDesc(weights_dims, type);
    const memory::desc any_dst = AnyDesc({d.n, d.oc}, type);
    auto fwd_desc = bias_ ? dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training,
                                                              src_md, any_weights, bias_md, any_dst)
                          : dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training,
                                                              src_md, any_weights, any_dst);
    dnnl::inner_product_forward::primitive_desc fwd_pd(fwd_desc, attr, engine);
    const memory::desc src = fwd_pd.src_desc();
    const memory::desc weights = fwd_pd.weights_desc();
    const memory::desc dst = fwd_pd.dst_desc();

    using BackwardDataPd = dnnl::inner_product_backward_data::primitive_desc;
    const BackwardDataPd bwd_data_pd = ChooseBackwardData<BackwardDataPd>(
        [&](const memory::desc& w) {
          return BackwardDataPd(dnnl::inner_product_backward_data::desc(src, w, dst), attr, engine,
                                fwd_pd);
        },
        weights, any_weights);
    auto bwd_weights_desc =
        bias_ ? dnnl::inner_product_backward_weights::desc(src, weights, bias_md, dst)
              : dnnl::inner_product_backward_weights::desc(src, weights, dst);
    dnnl::inner_product_backward_weights::primitive_desc bwd_weights_pd(bwd_weights_desc, attr,
                                                                        engine, fwd_pd);
    Bind(fwd_pd, dnnl::inner_product_forward(fwd_pd), bwd_data_pd,
         dnnl::inner_product_backward_data(bwd_data_pd), bwd_weights_pd,
         dnnl::inner_product_backward_weights(bwd_weights_pd));

    signature_.inputs = {flattened ? TensorSpec::Plain(dtype, input_shape)
                         : given != nullptr && !given->is_plain()
                             ? *given
                             : SpecFromDesc(src, dtype, input_shape)};
    signature_.output = SpecFromDesc(dst, dtype, Shape{d.n, d.oc});
    signature_.params = {SpecFromDesc(weights, dtype, Shape{d.oc, d.ic})};
    if (bias_) signature_.params.push_back(TensorSpec::Plain(DType::kF32, Shape{d.oc}));
    return absl::OkStatus();
  }
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const FcDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<FcKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
