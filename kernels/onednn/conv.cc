// Convolution (stride, dilation, groups, asymmetric padding, bias) with
// oneDNN's convolution primitives; layouts chosen by oneDNN. The activation
// epilogue (ConvDesc::activation: ReLU or ReLU6) is the forward primitive's
// eltwise post-op; in training, dy is masked by y (ReLU: y > 0; ReLU6:
// 0 < y < 6) once for both backward passes
// (WeightedLayer::MaskOutputGradient). A kernel made forward only makes no
// backward primitives (and times no backward candidates). A residual input
// (ConvDesc::residual, forward only) is the sum post-op before the
// activation: y must hold x1 when the primitive starts, so x1 is read in
// y's layout and copied into y unless the plan gave y x1's buffer
// (KernelSignature::output_over_input).
//
// Each pass runs the algorithm the context's CpuConvAlgorithm says
// (conv_choices.h). The layouts are direct convolution's in every mode: the
// source and destination as direct's forward chooses them (so the layers
// around see what they saw before), the weights as the chosen forward
// stores them; a backward candidate that wants the weights in another
// layout has its reorder timed with it.
#include <omp.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/compile_log.h"
#include "core/status.h"
#include "kernels/onednn/ops.h"
#include "kernels/onednn/weighted_layer.h"

namespace cnnbench {
namespace onednn {
namespace {

using dnnl::memory;

struct Candidate {
  const char* name;  // as ConvChoice::algorithm: "direct", "winograd", "auto"
  dnnl::algorithm algorithm;
};
constexpr Candidate kDirect{"direct", dnnl::algorithm::convolution_direct};
constexpr Candidate kWinograd{"winograd", dnnl::algorithm::convolution_winograd};
constexpr Candidate kAuto{"auto", dnnl::algorithm::convolution_auto};

// A pass's primitive descriptor made with one candidate, and its time
// (with the reorder it needs) where timed.
template <typename Pd>
struct Made {
  Candidate candidate;
  Pd pd;
  double seconds = 0;
};

// Pass `pass` of the kernel `what`: makes the primitive with the
// candidates the context's mode allows (`make(algorithm)` throwing
// dnnl::error means the library has no such kernel here), and keeps
//   direct:   direct;
//   auto:     oneDNN's convolution_auto;
//   winograd: Winograd where it can be made, else direct;
//   timed:    the fastest by `time(pd)` of those that can be made, ties to
//             direct, the choice cached by descriptor and pass in the
//             context's ConvChoices (a cached choice is made again, not
//             timed again).
template <typename Pd, typename Make, typename Time>
Made<Pd> ChoosePass(Context& context, const std::string& what, DType dtype, const char* pass,
                    Make make, Time time) {
  auto try_make = [&](const Candidate& c) -> std::optional<Made<Pd>> {
    try {
      return Made<Pd>{c, make(c.algorithm)};
    } catch (const dnnl::error&) {
      return std::nullopt;
    }
  };
  switch (context.conv_algorithm) {
    case CpuConvAlgorithm::kDirect:
      return {kDirect, make(kDirect.algorithm)};
    case CpuConvAlgorithm::kAuto:
      return {kAuto, make(kAuto.algorithm)};
    case CpuConvAlgorithm::kWinograd:
      if (auto w = try_make(kWinograd)) return *std::move(w);
      return {kDirect, make(kDirect.algorithm)};
    case CpuConvAlgorithm::kTimed:
      break;
  }
  const std::string key = ConvChoices::Key(what, DTypeName(dtype), pass, omp_get_max_threads());
  ConvChoices& choices = *context.conv_choices;
  auto cached = [&]() -> std::optional<Made<Pd>> {
    std::optional<ConvChoice> choice = choices.Find(key);
    if (!choice) return std::nullopt;
    if (choice->algorithm == kWinograd.name)
      if (auto w = try_make(kWinograd)) return *std::move(w);
    return Made<Pd>{kDirect, make(kDirect.algorithm)};
  };
  if (auto m = cached()) return *std::move(m);
  Made<Pd> direct{kDirect, make(kDirect.algorithm)};
  std::optional<Made<Pd>> winograd = try_make(kWinograd);
  if (!winograd) {
    choices.Set(key, {kDirect.name, 0, 0});
    return direct;
  }
  // Two candidates: timed one kernel at a time in the process.
  std::lock_guard<std::mutex> lock(choices.timing_mutex());
  if (auto m = cached()) return *std::move(m);
  direct.seconds = time(direct.pd);
  winograd->seconds = time(winograd->pd);
  Made<Pd>& best = winograd->seconds < direct.seconds ? *winograd : direct;
  choices.Set(key, {best.candidate.name, best.seconds, direct.seconds});
  return std::move(best);
}

// The runs each candidate is timed with (the faster kept: the first pays
// for the caches and the pages the second finds warm).
constexpr int kTimingRuns = 2;

class ConvKernel : public WeightedLayer {
 public:
  ConvKernel(std::shared_ptr<Context> context, const ConvDesc& desc)
      : WeightedLayer(std::move(context), desc.ToString(), desc.bias),
        activation_(desc.activation),
        residual_(desc.residual) {}

  absl::Status Forward(const KernelArgs& args) override {
    if (residual_) {
      ASSIGN_OR_RETURN(const void* x1, Input(args, 1));
      RETURN_IF_ERROR(Require(args.y, "y"));
      if (x1 != args.y) std::memcpy(args.y, x1, signature_.output.bytes);
    }
    return WeightedLayer::Forward(args);
  }

  absl::Status Init(const ConvDesc& d, const KernelOptions& options, const Inputs& inputs) {
    const DType dtype = options.dtype;
    if (residual_ && !options.forward_only)
      return absl::UnimplementedError(
          absl::StrCat("unsupported: ", what_, ": a residual input runs forward only"));
    RETURN_IF_ERROR(CheckInputCount(inputs, residual_ ? 2 : 1, what_));
    if (residual_) {  // read in the destination's layout, reordered at the graph edge if need be
      RETURN_IF_ERROR(GivenInput(inputs, 1, dtype, d.output().shape(), what_).status());
    }
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
    const dnnl::primitive_attr forward_attr = UserScratchpadEpilogueAttr(residual_, activation_);
    const memory::desc any_weights = AnyDesc(weights_dims, type);
    const memory::desc any_dst = AnyDesc(dst_dims, type);
    using ForwardPd = dnnl::convolution_forward::primitive_desc;
    auto make_forward = [&](dnnl::algorithm algorithm, const memory::desc& src,
                            const memory::desc& dst) {
      auto desc = bias_ ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                                          algorithm, src, any_weights, bias_md, dst,
                                                          strides, dilation, pad_l, pad_r)
                        : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                                          algorithm, src, any_weights, dst, strides,
                                                          dilation, pad_l, pad_r);
      return ForwardPd(desc, forward_attr, engine);
    };
    // The layouts: direct convolution's. A blocked producer whose layout
    // only oneDNN's reference kernel reads (channels that do not fill the
    // last block, as DenseNet's concatenations give) is reordered at the
    // graph edge into the layout oneDNN picks instead, when a faster kernel
    // then runs.
    ForwardPd direct_pd = make_forward(direct, src_md, any_dst);
    bool read_as_given = given != nullptr && !given->is_plain();
    if (read_as_given && IsReferenceKernel(direct_pd)) {
      ForwardPd picked = make_forward(direct, AnyDesc(src_dims, type), any_dst);
      if (!IsReferenceKernel(picked)) {
        direct_pd = picked;
        read_as_given = false;
      }
    }
    const memory::desc src = direct_pd.src_desc();
    const memory::desc dst = direct_pd.dst_desc();
    Context& context = *context_;
    std::vector<int> forward_args = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
    if (bias_) forward_args.push_back(DNNL_ARG_BIAS);
    const Made<ForwardPd> forward = ChoosePass<ForwardPd>(
        context, what_, dtype, "fwd",
        [&](dnnl::algorithm a) { return a == direct ? direct_pd : make_forward(a, src, dst); },
        [&](const ForwardPd& pd) {
          BoundPrimitive p(pd, dnnl::convolution_forward(pd), forward_args, engine);
          return TimeExecution(context, p, forward_args, kTimingRuns);
        });
    const ForwardPd& fwd_pd = forward.pd;
    const memory::desc weights = fwd_pd.weights_desc();
    signature_.inputs = {read_as_given ? *given : SpecFromDesc(src, dtype, d.input().shape())};
    signature_.output = SpecFromDesc(dst, dtype, d.output().shape());
    if (residual_) {
      signature_.inputs.push_back(signature_.output);
      signature_.output_over_input = 1;
    }
    signature_.params = {SpecFromDesc(weights, dtype, d.weights_shape())};
    if (bias_) signature_.params.push_back(TensorSpec::Plain(DType::kF32, Shape{d.k}));
    if (options.forward_only) {
      BindForward(fwd_pd, dnnl::convolution_forward(fwd_pd));
      return absl::OkStatus();
    }
    // Each backward pass times its candidates: the compile deadline between them.
    RETURN_IF_ERROR(CheckCompileDeadline("bwd_data", "fwd"));
    // A candidate's reorder of the weights between `from` and `to`, timed
    // with it where they differ.
    auto reorder_seconds = [&](const memory::desc& from, const memory::desc& to) {
      if (from == to) return 0.0;
      BoundPrimitive r = MakeReorder(context, from, to);
      return TimeExecution(context, r, {DNNL_ARG_FROM, DNNL_ARG_TO}, kTimingRuns);
    };

    using BackwardDataPd = dnnl::convolution_backward_data::primitive_desc;
    const std::vector<int> data_args = {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC};
    const Made<BackwardDataPd> bwd_data = ChoosePass<BackwardDataPd>(
        context, what_, dtype, "bwd_data",
        [&](dnnl::algorithm a) {
          return ChooseBackwardData<BackwardDataPd>(
              [&](const memory::desc& w) {
                return BackwardDataPd(dnnl::convolution_backward_data::desc(a, src, w, dst, strides,
                                                                            dilation, pad_l, pad_r),
                                      attr, engine, fwd_pd);
              },
              weights, any_weights);
        },
        [&](const BackwardDataPd& pd) {
          BoundPrimitive p(pd, dnnl::convolution_backward_data(pd), data_args, engine);
          return TimeExecution(context, p, data_args, kTimingRuns) +
                 reorder_seconds(weights, pd.weights_desc());
        });
    RETURN_IF_ERROR(CheckCompileDeadline("bwd_weights", "fwd, bwd_data"));
    using BackwardWeightsPd = dnnl::convolution_backward_weights::primitive_desc;
    std::vector<int> weights_args = {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS};
    if (bias_) weights_args.push_back(DNNL_ARG_DIFF_BIAS);
    auto time_weights = [&](const BackwardWeightsPd& pd) {
      BoundPrimitive p(pd, dnnl::convolution_backward_weights(pd), weights_args, engine);
      return TimeExecution(context, p, weights_args, kTimingRuns) +
             reorder_seconds(pd.diff_weights_desc(), weights) +
             reorder_seconds(src, pd.src_desc()) + reorder_seconds(dst, pd.diff_dst_desc());
    };
    const Made<BackwardWeightsPd> bwd_weights = ChoosePass<BackwardWeightsPd>(
        context, what_, dtype, "bwd_weights",
        [&](dnnl::algorithm a) {
          // `hint`: the forward oneDNN matches its backward kernel to (a
          // kernel of another data type than the hint's is not offered).
          auto make_typed = [&](const memory::desc& x, const memory::desc& dy,
                                const memory::desc& w_stored, const memory::desc& w_any,
                                const ForwardPd& hint) {
            return ChooseBackwardWeights<BackwardWeightsPd>(
                [&](const memory::desc& w) {
                  auto desc = bias_ ? dnnl::convolution_backward_weights::desc(
                                          a, x, w, bias_md, dy, strides, dilation, pad_l, pad_r)
                                    : dnnl::convolution_backward_weights::desc(
                                          a, x, w, dy, strides, dilation, pad_l, pad_r);
                  return BackwardWeightsPd(desc, attr, engine, hint);
                },
                w_stored, w_any);
          };
          auto make = [&](const memory::desc& x, const memory::desc& dy) {
            return make_typed(x, dy, weights, any_weights, fwd_pd);
          };
          BackwardWeightsPd pd = make(src, dst);
          // oneDNN 2.6 has some weight gradients only as its reference
          // kernel on the forward's blocked layout (depthwise 5x5 and 7x7,
          // NASNet's: 100-1000x slower than its channels-last jit kernel):
          // then x and dy are copied channels-last (WeightedLayer) and that
          // kernel runs, its copies timed with it.
          if (IsReferenceKernel(pd)) {
            const memory::desc x_nhwc(src_dims, type, memory::format_tag::nhwc);
            const memory::desc dy_nhwc(dst_dims, type, memory::format_tag::nhwc);
            if (src != x_nhwc || dst != dy_nhwc) {
              try {
                BackwardWeightsPd channels_last = make(x_nhwc, dy_nhwc);
                if (!IsReferenceKernel(channels_last)) pd = channels_last;
              } catch (const dnnl::error&) {
                // None: the reference kernel on the forward's layout.
              }
            }
          }
          // bf16 grouped convolutions: oneDNN 2.6 runs the weight gradient
          // of the depthwise 5x5 and 7x7 (EfficientNet's, ConvNeXt's) on
          // its generic jit_bf16 kernel, about 3x slower than the fp32
          // kernel on the same shape. The fp32 kernel on fp32 copies of x
          // and dy (WeightedLayer's reorders widen them; its gradient is
          // rounded back into the parameters' type; a bias's gradient is
          // fp32 either way) is a candidate, taken when it is faster with
          // its copies timed.
          if (type == memory::data_type::bf16 && d.groups > 1) {
            const memory::data_type f32 = memory::data_type::f32;
            double best = time_weights(pd);
            // fp32 channels-last (where oneDNN 2.6 has its fp32 jit
            // kernel for the depthwise 5x5 and 7x7; on the blocked layout it
            // has only the reference), and the layout oneDNN picks.
            for (const bool nhwc : {true, false}) {
              try {
                const auto tag = memory::format_tag::nhwc;
                const memory::desc x32 =
                    nhwc ? memory::desc(src_dims, f32, tag) : AnyDesc(src_dims, f32);
                const memory::desc dy32 =
                    nhwc ? memory::desc(dst_dims, f32, tag) : AnyDesc(dst_dims, f32);
                const memory::desc w32 = AnyDesc(weights_dims, f32);
                const auto training = dnnl::prop_kind::forward_training;
                const ForwardPd hint(
                    bias_ ? dnnl::convolution_forward::desc(training, a, x32, w32, bias_md, dy32,
                                                            strides, dilation, pad_l, pad_r)
                          : dnnl::convolution_forward::desc(training, a, x32, w32, dy32, strides,
                                                            dilation, pad_l, pad_r),
                    attr, engine);
                BackwardWeightsPd wide = make_typed(hint.src_desc(), hint.dst_desc(), w32, w32,
                                                    hint);
                if (IsReferenceKernel(wide)) continue;
                const double seconds = time_weights(wide);
                if (seconds < best) {
                  best = seconds;
                  pd = wide;
                }
              } catch (const dnnl::error&) {
                // No fp32 kernel for this layout: the next, or the bf16 one.
              }
            }
          }
          return pd;
        },
        time_weights);
    Bind(fwd_pd, dnnl::convolution_forward(fwd_pd), bwd_data.pd,
         dnnl::convolution_backward_data(bwd_data.pd), bwd_weights.pd,
         dnnl::convolution_backward_weights(bwd_weights.pd));
    // Training fuses ReLU and ReLU6 here (CheckSupported refuses the others).
    if (activation_ != ActivationKind::kNone) MaskOutputGradient(activation_);
    return absl::OkStatus();
  }

 private:
  const ActivationKind activation_;
  const bool residual_;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const ConvDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<ConvKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
