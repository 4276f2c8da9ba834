// Max and average pooling (with or without padded elements counted) with
// oneDNN's dilated pooling (v2) primitives; the max workspace is `saved`.
// Training max pooling on the channel-blocked layouts convolutions hand on
// runs this backend's own loop instead (max_pool.h), its argmax in `saved`.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/onednn/max_pool.h"
#include "kernels/onednn/ops.h"
#include "kernels/onednn/window_kernel.h"

namespace cnnbench {
namespace onednn {
namespace {

using dnnl::memory;

dnnl::algorithm PoolAlgorithmOf(PoolAlgorithm algorithm) {
  switch (algorithm) {
    case PoolAlgorithm::kMax:
      return dnnl::algorithm::pooling_max;
    case PoolAlgorithm::kAvg:
      return dnnl::algorithm::pooling_avg_include_padding;
    case PoolAlgorithm::kAvgExcludePad:
      return dnnl::algorithm::pooling_avg_exclude_padding;
  }
  return dnnl::algorithm::pooling_max;
}

// The channel block (8 or 16) when `src` and `dst` are both nChw8c or both
// nChw16c fp32; 0 otherwise.
int ChannelBlock(const memory::desc& src, const memory::desc& dst, const memory::dims& src_dims,
                 const memory::dims& dst_dims) {
  for (auto [tag, block] :
       {std::pair{memory::format_tag::nChw8c, 8}, std::pair{memory::format_tag::nChw16c, 16}}) {
    if (src == memory::desc(src_dims, memory::data_type::f32, tag) &&
        dst == memory::desc(dst_dims, memory::data_type::f32, tag))
      return block;
  }
  return 0;
}

class PoolKernel : public WindowKernel {
 public:
  PoolKernel(std::shared_ptr<Context> context, const PoolDesc& desc)
      : WindowKernel(std::move(context), desc.ToString(), /*backward_reads_src=*/false) {}

  absl::Status Forward(const KernelArgs& args) override {
    if (!own_ || !args.training) return WindowKernel::Forward(args);
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    RETURN_IF_ERROR(RequireSaved(args));
    MaxPoolForward(pool_, static_cast<const float*>(x), static_cast<float*>(args.y),
                   static_cast<uint8_t*>(args.saved));
    return absl::OkStatus();
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (!own_) return WindowKernel::BackwardData(args);
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(RequireSaved(args));
    MaxPoolBackward(pool_, static_cast<const float*>(args.dy),
                    static_cast<const uint8_t*>(args.saved), static_cast<float*>(args.dx[0]));
    return absl::OkStatus();
  }

  absl::Status Init(const PoolDesc& d, const KernelOptions& options, const Inputs& inputs) {
    const DType dtype = options.dtype;
    RETURN_IF_ERROR(CheckInputCount(inputs, 1, what_));
    ASSIGN_OR_RETURN(const TensorSpec* given,
                     GivenInput(inputs, 0, dtype, d.input().shape(), what_));
    ASSIGN_OR_RETURN(memory::data_type type, ToDnnlType(dtype));
    const dnnl::engine& engine = context_->engine;
    const memory::dims src_dims = ToDims(d.input().shape());
    const memory::dims dst_dims = ToDims(d.output().shape());
    const memory::dims strides = {d.h.stride, d.w.stride};
    const memory::dims kernel = {d.h.kernel, d.w.kernel};
    const memory::dims dilation = {d.h.dilation - 1, d.w.dilation - 1};
    const memory::dims pad_l = {d.h.pad_before, d.w.pad_before};
    const memory::dims pad_r = {d.h.pad_after, d.w.pad_after};
    const dnnl::algorithm algorithm = PoolAlgorithmOf(d.algorithm);

    memory::desc src_md = PlainDesc(src_dims, type);
    if (given != nullptr) {
      ASSIGN_OR_RETURN(src_md, DescFromSpec(*given, src_dims, "input 0", what_));
    }
    const dnnl::primitive_attr attr = UserScratchpadAttr();
    dnnl::pooling_v2_forward::desc fwd_desc(dnnl::prop_kind::forward_training, algorithm, src_md,
                                            AnyDesc(dst_dims, type), strides, kernel, dilation,
                                            pad_l, pad_r);
    dnnl::pooling_v2_forward::primitive_desc fwd_pd(fwd_desc, attr, engine);
    const memory::desc dst = fwd_pd.dst_desc();
    workspace_ = fwd_pd.workspace_desc().get_size() > 0;
    std::vector<int> fwd_args = {DNNL_ARG_SRC, DNNL_ARG_DST};
    if (workspace_) fwd_args.push_back(DNNL_ARG_WORKSPACE);
    forward_ = BoundPrimitive(fwd_pd, dnnl::pooling_v2_forward(fwd_pd), fwd_args, engine);

    // Inference keeps no workspace, so it needs no `saved`.
    dnnl::pooling_v2_forward::desc inf_desc(dnnl::prop_kind::forward_inference, algorithm, src_md,
                                            dst, strides, kernel, dilation, pad_l, pad_r);
    dnnl::pooling_v2_forward::primitive_desc inf_pd(inf_desc, attr, engine);
    inference_ = BoundPrimitive(inf_pd, dnnl::pooling_v2_forward(inf_pd),
                                {DNNL_ARG_SRC, DNNL_ARG_DST}, engine);

    dnnl::pooling_v2_backward::desc bwd_desc(algorithm, src_md, dst, strides, kernel, dilation,
                                             pad_l, pad_r);
    dnnl::pooling_v2_backward::primitive_desc bwd_pd(bwd_desc, attr, engine, fwd_pd);
    std::vector<int> bwd_args = {DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC};
    if (workspace_) bwd_args.push_back(DNNL_ARG_WORKSPACE);
    backward_ = BoundPrimitive(bwd_pd, dnnl::pooling_v2_backward(bwd_pd), bwd_args, engine);

    signature_.inputs = {given != nullptr ? *given : TensorSpec::Plain(dtype, d.input().shape())};
    signature_.output = SpecFromDesc(dst, dtype, d.output().shape());
    signature_.saved_bytes = workspace_ ? fwd_pd.workspace_desc().get_size() : 0;
    signature_.scratch_bytes = std::max(
        {forward_.scratchpad_bytes(), inference_.scratchpad_bytes(), backward_.scratchpad_bytes()});
    // The max workspace records the argmax: backward reads neither x nor y.
    signature_.backward_reads_inputs = false;
    signature_.backward_reads_output = false;
    implementation_ = forward_.implementation();
    backward_implementation_ = backward_.implementation();

    // Training max pooling on a channel-blocked layout: this backend's loop.
    const int block = ChannelBlock(src_md, dst, src_dims, dst_dims);
    if (d.algorithm == PoolAlgorithm::kMax && dtype == DType::kF32 && block > 0 &&
        d.h.dilation == 1 && d.w.dilation == 1) {
      BlockedMaxPool p;
      p.batch = src_dims[0];
      p.block = block;
      p.channel_blocks = (src_dims[1] + block - 1) / block;
      p.in_h = static_cast<int>(d.h.in);
      p.in_w = static_cast<int>(d.w.in);
      p.out_h = static_cast<int>(d.h.out);
      p.out_w = static_cast<int>(d.w.out);
      p.kernel_h = static_cast<int>(d.h.kernel);
      p.kernel_w = static_cast<int>(d.w.kernel);
      p.stride_h = static_cast<int>(d.h.stride);
      p.stride_w = static_cast<int>(d.w.stride);
      p.pad_top = static_cast<int>(d.h.pad_before);
      p.pad_left = static_cast<int>(d.w.pad_before);
      if (p.Valid()) {
        own_ = true;
        pool_ = p;
        signature_.saved_bytes = AlignUp(static_cast<size_t>(p.output_elements()));
        implementation_ = absl::StrCat("cnnbench:max_pool:nChw", block, "c");
      }
    }
    return absl::OkStatus();
  }

 private:
  bool own_ = false;  // training runs MaxPoolForward/Backward on pool_
  BlockedMaxPool pool_;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const PoolDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  if (IsGlobalAveragePool(desc))
    return CreateGlobalAveragePool(std::move(context), desc, options, inputs);
  return MakeKernel<PoolKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
