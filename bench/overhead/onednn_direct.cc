#include "bench/overhead/onednn_direct.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"

namespace cnnbench::bench {
namespace {

using dnnl::memory;

// Backward data with the weights as the forward stores them when oneDNN
// runs the same kernel that way, else in the layout it prefers: the choice
// kernels/onednn makes, restated here so the direct path does not go
// through the backend's code.
// Backward weights alike, for the layout of the weight gradient
// (`weights_of` is then diff_weights_desc).
template <typename PrimitiveDesc, typename Make>
PrimitiveDesc SameKernelOrPreferred(
    Make make, const memory::desc& stored, const memory::desc& any,
    memory::desc (PrimitiveDesc::*weights_of)() const = &PrimitiveDesc::weights_desc) {
  PrimitiveDesc preferred = make(any);
  if ((preferred.*weights_of)() == stored) return preferred;
  try {
    PrimitiveDesc as_stored = make(stored);
    if (std::string(as_stored.impl_info_str()) == preferred.impl_info_str()) return as_stored;
  } catch (const dnnl::error&) {
  }
  return preferred;
}

// The forward's and backward weights' arguments, the bias's among them
// where there is one.
std::pair<std::vector<int>, std::vector<int>> ArgIds(bool bias) {
  std::vector<int> forward = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
  std::vector<int> weights = {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS};
  if (bias) {
    forward.push_back(DNNL_ARG_BIAS);
    weights.push_back(DNNL_ARG_DIFF_BIAS);
  }
  return {forward, weights};
}

memory::desc F32Plain(const memory::dims& dims) {
  return memory::desc(dims, memory::data_type::f32, memory::format_tag::a);
}

}  // namespace

DirectLayer::DirectLayer(DType dtype)
    : dtype_(dtype), engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
  attr_.set_scratchpad_mode(dnnl::scratchpad_mode::user);
}

absl::StatusOr<std::unique_ptr<DirectLayer>> DirectLayer::Create(const OpDesc& desc,
                                                                 DType dtype) {
  if (dtype != DType::kF32 && dtype != DType::kBF16)
    return absl::InvalidArgumentError(
        absl::StrCat("oneDNN direct: fp32 or bf16, not ", DTypeName(dtype)));
  auto layer = std::unique_ptr<DirectLayer>(new DirectLayer(dtype));
  try {
    if (const auto* conv = std::get_if<ConvDesc>(&desc)) {
      if (conv->groups != 1 || conv->activation != ActivationKind::kNone)
        return absl::InvalidArgumentError(absl::StrCat(
            conv->ToString(), ": oneDNN direct: one group and no fused activation only"));
      layer->BuildConv(*conv);
    } else if (const auto* fc = std::get_if<FcDesc>(&desc)) {
      layer->BuildFc(*fc);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(OpDescToString(desc), ": oneDNN direct: conv and fc only"));
    }
  } catch (const dnnl::error& e) {
    const std::string what = absl::StrCat(OpDescToString(desc), " (", DTypeName(dtype),
                                          "): oneDNN: ", e.what());
    if (e.status == dnnl_unimplemented)
      return absl::UnimplementedError(absl::StrCat("unsupported: ", what));
    return absl::InternalError(what);
  }
  return layer;
}

memory::desc DirectLayer::Any(const memory::dims& dims) const {
  return memory::desc(dims, dtype_ == DType::kBF16 ? memory::data_type::bf16
                                                   : memory::data_type::f32,
                      memory::format_tag::any);
}

void DirectLayer::Run(OpPass pass) {
  Primitive& p = passes_[static_cast<int>(pass)];
  p.primitive.execute(stream_, p.args);
  if (p.reorder_after)
    p.after.execute(stream_, p.args.at(DNNL_ARG_DIFF_WEIGHTS), p.after_to);
  stream_.wait();
}

memory& DirectLayer::arg(OpPass pass, int id) {
  Primitive& p = passes_[static_cast<int>(pass)];
  if (p.reorder_after && id == DNNL_ARG_DIFF_WEIGHTS) return p.after_to;
  return p.args.at(id);
}

std::string DirectLayer::implementation(OpPass pass) const {
  return passes_[static_cast<int>(pass)].implementation;
}

void DirectLayer::PrepareBackwardWeights() {
  memory& from = arg(OpPass::kForward, DNNL_ARG_WEIGHTS);
  memory& to = arg(OpPass::kBackwardData, DNNL_ARG_WEIGHTS);
  dnnl::reorder(from, to).execute(stream_, from, to);
  stream_.wait();
}

void DirectLayer::FillSmallIntegers() {
  int seed = 0;
  for (Primitive& p : passes_) {
    for (auto& [id, m] : p.args) {
      if (id == DNNL_ARG_SCRATCHPAD) continue;
      const memory::desc md = m.get_desc();
      const memory::dim elements =
          md.get_size() / memory::data_type_size(md.data_type());  // padding included
      memory plain(F32Plain({elements}), engine_);
      float* f = static_cast<float*>(plain.get_data_handle());
      for (memory::dim i = 0; i < elements; ++i)
        f[i] = static_cast<float>(static_cast<int>((i * 7 + seed * 13) % 5) - 2);
      ++seed;
      // The same bytes viewed as a flat vector of the argument's type.
      memory flat(memory::desc({elements}, md.data_type(), memory::format_tag::a), engine_,
                  m.get_data_handle());
      dnnl::reorder(plain, flat).execute(stream_, plain, flat);
    }
  }
  stream_.wait();
}

double DirectLayer::MedianSeconds(OpPass pass, int runs) {
  using Clock = std::chrono::steady_clock;
  Run(pass);
  std::vector<double> seconds;
  for (int i = 0; i < std::max(1, runs); ++i) {
    const Clock::time_point start = Clock::now();
    Run(pass);
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  const size_t n = seconds.size();
  return n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
}

// Memories for `ids`; an argument id met again in another pass (x, dy) is
// the same tensor and shares the memory.
DirectLayer::Primitive DirectLayer::Bind(const dnnl::primitive_desc_base& pd,
                                         dnnl::primitive primitive, const std::vector<int>& ids) {
  Primitive p{std::move(primitive), {}, pd.impl_info_str()};
  for (int id : ids) {
    memory::desc md = pd.query_md(dnnl::query::exec_arg_md, id);
    auto shared = tensors_.find(id);
    if (shared != tensors_.end() && shared->second.get_desc() == md) {
      p.args.emplace(id, shared->second);
    } else {
      memory m(md, engine_);
      tensors_.emplace(id, m);
      p.args.emplace(id, m);
    }
  }
  memory::desc scratchpad = pd.scratchpad_desc();
  if (scratchpad.get_size() > 0) p.args.emplace(DNNL_ARG_SCRATCHPAD, memory(scratchpad, engine_));
  return p;
}

void DirectLayer::BuildConv(const ConvDesc& d) {
  const memory::dims src = {d.n, d.c, d.h.in, d.w.in};
  const memory::dims weights = {d.k, d.c, d.h.kernel, d.w.kernel};
  const memory::dims dst = {d.n, d.k, d.h.out, d.w.out};
  const memory::dims strides = {d.h.stride, d.w.stride};
  const memory::dims dilation = {d.h.dilation - 1, d.w.dilation - 1};
  const memory::dims pad_l = {d.h.pad_before, d.w.pad_before};
  const memory::dims pad_r = {d.h.pad_after, d.w.pad_after};
  const memory::desc bias = memory::desc({d.k}, memory::data_type::f32, memory::format_tag::a);
  const auto direct = dnnl::algorithm::convolution_direct;
  using ForwardPd = dnnl::convolution_forward::primitive_desc;
  const ForwardPd fwd(
      d.bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, direct,
                                               Any(src), Any(weights), bias, Any(dst), strides,
                                               dilation, pad_l, pad_r)
             : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, direct,
                                               Any(src), Any(weights), Any(dst), strides,
                                               dilation, pad_l, pad_r),
      attr_, engine_);
  using BackwardDataPd = dnnl::convolution_backward_data::primitive_desc;
  const BackwardDataPd bwd_data = SameKernelOrPreferred<BackwardDataPd>(
      [&](const memory::desc& w) {
        return BackwardDataPd(dnnl::convolution_backward_data::desc(
                                  direct, fwd.src_desc(), w, fwd.dst_desc(), strides, dilation,
                                  pad_l, pad_r),
                              attr_, engine_, fwd);
      },
      fwd.weights_desc(), Any(weights));
  using BackwardWeightsPd = dnnl::convolution_backward_weights::primitive_desc;
  const BackwardWeightsPd bwd_weights = SameKernelOrPreferred<BackwardWeightsPd>(
      [&](const memory::desc& w) {
        return BackwardWeightsPd(
            d.bias ? dnnl::convolution_backward_weights::desc(direct, fwd.src_desc(), w, bias,
                                                              fwd.dst_desc(), strides, dilation,
                                                              pad_l, pad_r)
                   : dnnl::convolution_backward_weights::desc(direct, fwd.src_desc(), w,
                                                              fwd.dst_desc(), strides, dilation,
                                                              pad_l, pad_r),
            attr_, engine_, fwd);
      },
      fwd.weights_desc(), Any(weights), &BackwardWeightsPd::diff_weights_desc);
  const auto [forward_args, weights_args] = ArgIds(d.bias);
  passes_.push_back(Bind(fwd, dnnl::convolution_forward(fwd), forward_args));
  // Backward data's weights are its own copy (another layout, maybe).
  Primitive data = Bind(bwd_data, dnnl::convolution_backward_data(bwd_data),
                        {DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC});
  data.args.emplace(DNNL_ARG_WEIGHTS, memory(bwd_data.weights_desc(), engine_));
  passes_.push_back(std::move(data));
  passes_.push_back(
      Bind(bwd_weights, dnnl::convolution_backward_weights(bwd_weights), weights_args));
  ReorderWeightGradient(fwd.weights_desc());
}

void DirectLayer::BuildFc(const FcDesc& d) {
  const memory::dims src = {d.n, d.ic}, weights = {d.oc, d.ic}, dst = {d.n, d.oc};
  const memory::desc bias = memory::desc({d.oc}, memory::data_type::f32, memory::format_tag::a);
  using ForwardPd = dnnl::inner_product_forward::primitive_desc;
  const ForwardPd fwd(
      d.bias ? dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training, Any(src),
                                                 Any(weights), bias, Any(dst))
             : dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training, Any(src),
                                                 Any(weights), Any(dst)),
      attr_, engine_);
  using BackwardDataPd = dnnl::inner_product_backward_data::primitive_desc;
  const BackwardDataPd bwd_data = SameKernelOrPreferred<BackwardDataPd>(
      [&](const memory::desc& w) {
        return BackwardDataPd(
            dnnl::inner_product_backward_data::desc(fwd.src_desc(), w, fwd.dst_desc()), attr_,
            engine_, fwd);
      },
      fwd.weights_desc(), Any(weights));
  using BackwardWeightsPd = dnnl::inner_product_backward_weights::primitive_desc;
  const BackwardWeightsPd bwd_weights = SameKernelOrPreferred<BackwardWeightsPd>(
      [&](const memory::desc& w) {
        return BackwardWeightsPd(
            d.bias ? dnnl::inner_product_backward_weights::desc(fwd.src_desc(), w, bias,
                                                                fwd.dst_desc())
                   : dnnl::inner_product_backward_weights::desc(fwd.src_desc(), w,
                                                                fwd.dst_desc()),
            attr_, engine_, fwd);
      },
      fwd.weights_desc(), Any(weights), &BackwardWeightsPd::diff_weights_desc);
  const auto [forward_args, weights_args] = ArgIds(d.bias);
  passes_.push_back(Bind(fwd, dnnl::inner_product_forward(fwd), forward_args));
  Primitive data = Bind(bwd_data, dnnl::inner_product_backward_data(bwd_data),
                        {DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC});
  data.args.emplace(DNNL_ARG_WEIGHTS, memory(bwd_data.weights_desc(), engine_));
  passes_.push_back(std::move(data));
  passes_.push_back(
      Bind(bwd_weights, dnnl::inner_product_backward_weights(bwd_weights), weights_args));
  ReorderWeightGradient(fwd.weights_desc());
}

void DirectLayer::ReorderWeightGradient(const memory::desc& weights) {
  Primitive& p = passes_.back();
  const memory& written = p.args.at(DNNL_ARG_DIFF_WEIGHTS);
  if (written.get_desc() == weights) return;
  p.after_to = memory(weights, engine_);
  p.after = dnnl::reorder(written, p.after_to);
  p.reorder_after = true;
}

double DirectFlops(const OpDesc& desc) {
  if (const auto* conv = std::get_if<ConvDesc>(&desc)) return conv->ForwardFlops();
  if (const auto* fc = std::get_if<FcDesc>(&desc)) return fc->ForwardFlops();
  return 0;
}

}  // namespace cnnbench::bench
