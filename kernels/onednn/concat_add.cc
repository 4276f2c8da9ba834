// Channel concatenation (oneDNN concat; backward reorders each channel slice
// of dy, a sub-memory view, into dx_i's layout, or, where the concat's
// output feeds several layers and each slice is one run per image in both
// layouts, sums the layers' gradients slice by slice itself) and the
// residual add (sum; binary add with the activation as a post-op when a
// ReLU or ReLU6 is fused after it).
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/onednn/masked_sum.h"
#include "kernels/onednn/ops.h"

namespace cnnbench {
namespace onednn {
namespace {

using dnnl::memory;

class ConcatKernel : public OneDnnKernel {
 public:
  ConcatKernel(std::shared_ptr<Context> context, const ConcatDesc& desc)
      : OneDnnKernel(std::move(context), desc.ToString()) {}

  absl::Status Init(const ConcatDesc& d, const KernelOptions& options, const Inputs& inputs) {
    const DType dtype = options.dtype;
    const size_t count = d.channels.size();
    RETURN_IF_ERROR(CheckInputCount(inputs, count, what_));
    ASSIGN_OR_RETURN(memory::data_type type, ToDnnlType(dtype));
    std::vector<memory::desc> srcs;
    for (size_t i = 0; i < count; ++i) {
      const Shape shape{d.n, d.channels[i], d.h, d.w};
      ASSIGN_OR_RETURN(const TensorSpec* given, GivenInput(inputs, i, dtype, shape, what_));
      signature_.inputs.push_back(given != nullptr ? *given : TensorSpec::Plain(dtype, shape));
      ASSIGN_OR_RETURN(memory::desc src, DescFromSpec(signature_.inputs.back(), ToDims(shape),
                                                      absl::StrCat("input ", i), what_));
      srcs.push_back(src);
    }
    const memory::dims dst_dims = ToDims(d.output().shape());
    // oneDNN's choice of output layout, unless a channel slice of it cannot
    // be addressed (a blocked layout with slices not on block boundaries, as
    // DenseNet's and NASNet's channel counts give): oneDNN then gives plain
    // NCHW (or fails), and the layers after it run oneDNN's slow ncsp batch
    // norm. Channels-last instead, where every channel slice is a strided
    // view and batch norm has a vectorized kernel, when the inputs are not
    // all plain themselves; plain if even that fails.
    const memory::desc nhwc(dst_dims, type, memory::format_tag::nhwc);
    const bool inputs_plain = std::all_of(signature_.inputs.begin(), signature_.inputs.end(),
                                          [](const TensorSpec& s) { return s.is_plain(); });
    try {
      Build(d, srcs, AnyDesc(dst_dims, type));
      if (!inputs_plain && forward_.desc(DNNL_ARG_DST) == PlainDesc(dst_dims, type))
        Build(d, srcs, nhwc);
    } catch (const dnnl::error&) {
      try {
        Build(d, srcs, nhwc);
      } catch (const dnnl::error&) {
        Build(d, srcs, PlainDesc(dst_dims, type));
      }
    }
    signature_.output = SpecFromDesc(forward_.desc(DNNL_ARG_DST), dtype, d.output().shape());
    dtype_ = dtype;
    PlanRuns(d, srcs, forward_.desc(DNNL_ARG_DST));
    signature_.sums_output_gradient = !runs_.empty();
    PlanViews(d);
    size_t scratch = forward_.scratchpad_bytes();
    for (const BoundPrimitive& slice : slices_)
      scratch = std::max(scratch, slice.scratchpad_bytes());
    signature_.scratch_bytes = scratch;
    signature_.backward_reads_inputs = false;
    signature_.backward_reads_output = false;
    implementation_ = forward_.implementation();
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    RETURN_IF_ERROR(Require(args.y, "y"));
    for (size_t i = 0; i < slices_.size(); ++i) RETURN_IF_ERROR(Input(args, i).status());
    // Inputs the plan made views of y are in place already; the others,
    // when any is, are one run each, copied in.
    const std::vector<size_t>& views = signature_.input_views;
    char* y = static_cast<char*>(args.y);
    size_t in_place = 0;
    for (size_t i = 0; i < views.size(); ++i) in_place += args.x[i] == y + views[i] ? 1 : 0;
    if (in_place > 0) {
      for (size_t i = 0; i < views.size(); ++i)
        if (args.x[i] != y + views[i])
          std::memcpy(y + views[i], args.x[i], signature_.inputs[i].bytes);
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(RequireScratch(args));
    return Guarded(what_, [&]() -> absl::Status {
      for (size_t i = 0; i < slices_.size(); ++i)
        forward_.Set(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), args.x[i]);
      forward_.Set(DNNL_ARG_DST, args.y);
      forward_.SetScratchpad(args.scratch);
      forward_.Execute(context_->stream);
      return absl::OkStatus();
    });
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (!args.dy_parts.empty()) return SumParts(args);
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(RequireScratch(args));
    return Guarded(what_, [&]() -> absl::Status {
      for (size_t i = 0; i < slices_.size() && i < args.dx.size(); ++i) {
        if (args.dx[i] == nullptr) continue;
        slices_[i].Set(DNNL_ARG_FROM, args.dy);  // the view's offset selects the slice
        slices_[i].Set(DNNL_ARG_TO, args.dx[i]);
        slices_[i].SetScratchpad(args.scratch);
        slices_[i].Execute(context_->stream);
      }
      return absl::OkStatus();
    });
  }

 private:
  // Creates the concat with output `dst` and one reorder per input from its
  // slice of dy; throws dnnl::error when that is impossible.
  void Build(const ConcatDesc& d, const std::vector<memory::desc>& srcs, const memory::desc& dst) {
    const dnnl::engine& engine = context_->engine;
    dnnl::concat::primitive_desc pd(dst, 1, srcs, engine, UserScratchpadAttr());
    std::vector<int> args = {DNNL_ARG_DST};
    for (size_t i = 0; i < srcs.size(); ++i)
      args.push_back(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i));
    BoundPrimitive forward(pd, dnnl::concat(pd), args, engine);
    const memory::desc out = pd.dst_desc();
    std::vector<BoundPrimitive> slices;
    int64_t offset = 0;
    for (size_t i = 0; i < srcs.size(); ++i) {
      const memory::desc slice =
          out.submemory_desc({d.n, d.channels[i], d.h, d.w}, {0, offset, 0, 0});
      slices.push_back(MakeReorder(*context_, slice, srcs[i]));
      offset += d.channels[i];
    }
    forward_ = std::move(forward);
    slices_ = std::move(slices);
  }

  // One run of input i's slice: `count` elements at `dy_offset` in each
  // output gradient and at `dx_offset` in dx_i.
  struct Run {
    int input;
    int64_t dy_offset, dx_offset, count;
  };

  // runs_: every slice as runs, where both layouts keep each channel block
  // (a channel in nchw, 16 in nChw16c) of an image dense over (h, w), with
  // the same blocking, and every slice starts on a block boundary; else
  // empty. Blocks next to each other in both layouts join into one run.
  void PlanRuns(const ConcatDesc& d, const std::vector<memory::desc>& srcs,
                const memory::desc& out) {
    runs_.clear();
    const int64_t hw = d.h * d.w;
    // The channel block size of a dense (h, w) layout, or 0.
    auto block = [&](const dnnl_memory_desc_t& m, int64_t channels) -> int64_t {
      if (m.ndims != 4 || m.format_kind != dnnl_blocked || m.offset0 != 0 || m.extra.flags != 0)
        return 0;
      for (int i = 0; i < 4; ++i)
        if (m.padded_dims[i] != m.dims[i]) return 0;
      const dnnl_blocking_desc_t& b = m.format_desc.blocking;
      int64_t inner = 1;
      for (int i = 0; i < b.inner_nblks; ++i) {
        if (b.inner_idxs[i] != 1) return 0;  // channel blocks only
        inner *= b.inner_blks[i];
      }
      const bool dense = channels % inner == 0 && b.strides[3] == inner &&
                         b.strides[2] == d.w * inner && b.strides[0] >= inner * hw &&
                         b.strides[1] >= inner * hw;
      return dense ? inner : 0;
    };
    const dnnl_memory_desc_t& o = out.data;
    const int64_t inner = block(o, d.output().c);
    if (inner == 0) return;
    const dnnl_dims_t& dy_strides = o.format_desc.blocking.strides;
    std::vector<Run> runs;
    int64_t offset = 0;
    for (size_t i = 0; i < srcs.size(); ++i) {
      const dnnl_memory_desc_t& s = srcs[i].data;
      if (block(s, d.channels[i]) != inner || offset % inner != 0) return;
      const dnnl_dims_t& dx_strides = s.format_desc.blocking.strides;
      const int64_t blocks = d.channels[i] / inner;
      const int64_t run_blocks =
          dy_strides[1] == inner * hw && dx_strides[1] == inner * hw ? blocks : 1;
      for (int64_t n = 0; n < d.n; ++n)
        for (int64_t b = 0; b < blocks; b += run_blocks)
          runs.push_back({static_cast<int>(i),
                          n * dy_strides[0] + (offset / inner + b) * dy_strides[1],
                          n * dx_strides[0] + b * dx_strides[1], run_blocks * inner * hw});
      offset += d.channels[i];
    }
    runs_ = std::move(runs);
  }

  // input_views: at batch 1, where every input's slice is one run of y
  // that is the whole of the input's storage (PlanRuns), its byte offset.
  void PlanViews(const ConcatDesc& d) {
    if (d.n != 1 || runs_.size() != d.channels.size()) return;
    const size_t element = SizeOf(dtype_);
    std::vector<size_t> views;
    for (size_t i = 0; i < runs_.size(); ++i) {
      const Run& run = runs_[i];
      const size_t offset = static_cast<size_t>(run.dy_offset) * element;
      if (run.input != static_cast<int>(i) || run.dx_offset != 0 ||
          static_cast<size_t>(run.count) * element != signature_.inputs[i].bytes ||
          offset + signature_.inputs[i].bytes > signature_.output.bytes)
        return;
      views.push_back(offset);
    }
    signature_.input_views = std::move(views);
  }

  // dx_i = slice i of (dy_parts[0] + ... ), run by run, the runs spread
  // over the OpenMP team oneDNN uses.
  absl::Status SumParts(const KernelArgs& args) {
    if (runs_.empty())
      return absl::InternalError(absl::StrCat(
          what_, ": given dy_parts, though its signature does not sum output gradients"));
    for (const void* part : args.dy_parts) RETURN_IF_ERROR(Require(part, "dy_parts[]"));
    const int64_t tasks = static_cast<int64_t>(runs_.size());
    const size_t element = SizeOf(dtype_);
    const void* const* parts = args.dy_parts.data();
    const int num_parts = static_cast<int>(args.dy_parts.size());
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < tasks; ++t) {
      const Run& run = runs_[t];
      if (run.input >= static_cast<int>(args.dx.size()) || args.dx[run.input] == nullptr) continue;
      SumRun(dtype_, parts, num_parts, run.dy_offset,
             static_cast<char*>(args.dx[run.input]) + static_cast<size_t>(run.dx_offset) * element,
             run.count);
    }
    return absl::OkStatus();
  }

  BoundPrimitive forward_;
  std::vector<BoundPrimitive> slices_;  // dy's channel slice i -> dx_i
  std::vector<Run> runs_;
  DType dtype_ = DType::kF32;
};

class AddKernel : public OneDnnKernel {
 public:
  AddKernel(std::shared_ptr<Context> context, const AddDesc& desc)
      : OneDnnKernel(std::move(context), desc.ToString()),
        activation_(desc.activation),
        fused_(desc.activation != ActivationKind::kNone) {}

  absl::Status Init(const AddDesc& d, const KernelOptions& options, const Inputs& inputs) {
    const DType dtype = options.dtype;
    RETURN_IF_ERROR(CheckInputCount(inputs, 2, what_));
    ASSIGN_OR_RETURN(memory::data_type type, ToDnnlType(dtype));
    (void)type;
    dtype_ = dtype;
    const dnnl::engine& engine = context_->engine;
    const Shape shape = d.dims.shape();
    std::vector<memory::desc> srcs;
    for (size_t i = 0; i < 2; ++i) {
      ASSIGN_OR_RETURN(const TensorSpec* given, GivenInput(inputs, i, dtype, shape, what_));
      signature_.inputs.push_back(given != nullptr ? *given : TensorSpec::Plain(dtype, shape));
      // With an activation, x1 is read in x0's layout (a reorder at the edge when
      // it comes otherwise), so every tensor of the backward loop has one layout.
      if (fused_ && i == 1) signature_.inputs[1] = signature_.inputs[0];
      ASSIGN_OR_RETURN(memory::desc src, DescFromSpec(signature_.inputs.back(), ToDims(shape),
                                                      absl::StrCat("input ", i), what_));
      srcs.push_back(src);
    }
    size_t scratch = 0;
    if (fused_) {
      // One pass: binary add with the activation as a post-op.
      const dnnl::primitive_attr attr = UserScratchpadActivationAttr(activation_);
      dnnl::binary::desc desc(dnnl::algorithm::binary_add, srcs[0], srcs[1], srcs[0]);
      dnnl::binary::primitive_desc pd(desc, attr, engine);
      forward_ = BoundPrimitive(pd, dnnl::binary(pd),
                                {DNNL_ARG_SRC_0, DNNL_ARG_SRC_1, DNNL_ARG_DST}, engine);
      scratch = forward_.scratchpad_bytes();
      // dx = dy (or the sum of dy_parts) where it passes at y (ReLU: y > 0;
      // ReLU6: 0 < y < 6): one buffer for both inputs.
      count_ = static_cast<int64_t>(srcs[0].get_size() / SizeOf(dtype));
      signature_.shared_input_gradient = true;
      signature_.sums_output_gradient = true;
    } else {
      // y takes x0's layout (residual: the main branch), x1 is read as it is.
      dnnl::sum::primitive_desc pd(srcs[0], {1.0f, 1.0f}, srcs, engine, UserScratchpadAttr());
      forward_ =
          BoundPrimitive(pd, dnnl::sum(pd),
                         {DNNL_ARG_MULTIPLE_SRC, DNNL_ARG_MULTIPLE_SRC + 1, DNNL_ARG_DST}, engine);
      scratch = forward_.scratchpad_bytes();
      for (size_t i = 0; i < 2; ++i) {
        copies_[i] = MakeReorder(*context_, srcs[0], srcs[i]);  // dy (y's layout) -> dx_i
        scratch = std::max(scratch, copies_[i].scratchpad_bytes());
      }
    }
    signature_.output = signature_.inputs[0];
    signature_.scratch_bytes = scratch;
    signature_.backward_reads_inputs = false;
    signature_.backward_reads_output = fused_;  // the mask is read from y
    implementation_ = forward_.implementation();
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x0, Input(args, 0));
    ASSIGN_OR_RETURN(const void* x1, Input(args, 1));
    RETURN_IF_ERROR(Require(args.y, "y"));
    RETURN_IF_ERROR(RequireScratch(args));
    return Guarded(what_, [&]() -> absl::Status {
      forward_.Set(fused_ ? DNNL_ARG_SRC_0 : DNNL_ARG_MULTIPLE_SRC, x0);
      forward_.Set(fused_ ? DNNL_ARG_SRC_1 : DNNL_ARG_MULTIPLE_SRC + 1, x1);
      forward_.Set(DNNL_ARG_DST, args.y);
      forward_.SetScratchpad(args.scratch);
      forward_.Execute(context_->stream);
      return absl::OkStatus();
    });
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (fused_) return MaskedBackward(args);
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(RequireScratch(args));
    return Guarded(what_, [&]() -> absl::Status {
      for (size_t i = 0; i < 2 && i < args.dx.size(); ++i) {
        // An executor may hand dy itself as dx0 (same layout): nothing to copy.
        if (args.dx[i] == nullptr || (args.dx[i] == args.dy && i == 0)) continue;
        copies_[i].Set(DNNL_ARG_FROM, args.dy);
        copies_[i].Set(DNNL_ARG_TO, args.dx[i]);
        copies_[i].SetScratchpad(args.scratch);
        copies_[i].Execute(context_->stream);
      }
      return absl::OkStatus();
    });
  }

 private:
  // dx = (dy, or the sum of dy_parts) where it passes at y, written once into the
  // first dx and copied to a second, distinct one (all share y's layout).
  absl::Status MaskedBackward(const KernelArgs& args) {
    RETURN_IF_ERROR(Require(args.y, "y"));
    const void* single[1] = {args.dy};
    const void* const* parts = single;
    int num_parts = 1;
    if (!args.dy_parts.empty()) {
      parts = args.dy_parts.data();
      num_parts = static_cast<int>(args.dy_parts.size());
    } else {
      RETURN_IF_ERROR(Require(args.dy, "dy"));
    }
    void* first = nullptr;
    for (void* dx : args.dx) {
      if (dx == nullptr || dx == first) continue;
      if (first == nullptr) {
        first = dx;
        MaskedSum(dtype_, activation_, args.y, parts, num_parts, dx, count_);
      } else {
        std::memcpy(dx, first, static_cast<size_t>(count_) * SizeOf(dtype_));
      }
    }
    return absl::OkStatus();
  }

  const ActivationKind activation_;
  const bool fused_;  // an activation is fused (ReLU or ReLU6)
  DType dtype_ = DType::kF32;
  int64_t count_ = 0;  // elements of y's storage (padding included)
  BoundPrimitive forward_;
  BoundPrimitive copies_[2];
};

// The channel pad on plain NCHW memory: per example one copy of x's C x H x
// W run into the middle of y's, zeros around it; the backward copies the
// run back. Byte copies, so any element type.
class ChannelPadKernel : public OneDnnKernel {
 public:
  ChannelPadKernel(std::shared_ptr<Context> context, const ChannelPadDesc& desc)
      : OneDnnKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const ChannelPadDesc& d, const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(inputs, 1, what_));
    signature_.inputs = {TensorSpec::Plain(options.dtype, d.dims.shape())};
    signature_.output = TensorSpec::Plain(options.dtype, d.output().shape());
    signature_.backward_reads_inputs = false;
    signature_.backward_reads_output = false;
    const size_t es = SizeOf(options.dtype), hw = static_cast<size_t>(d.dims.h * d.dims.w);
    run_ = static_cast<size_t>(d.dims.c) * hw * es;
    before_ = static_cast<size_t>(d.before) * hw * es;
    after_ = static_cast<size_t>(d.after) * hw * es;
    implementation_ = "cnnbench:chpad";
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    RETURN_IF_ERROR(Require(args.y, "y"));
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    const char* from = static_cast<const char*>(x);
    char* to = static_cast<char*>(args.y);
    for (int64_t n = 0; n < desc_.dims.n; ++n) {
      std::memset(to, 0, before_);
      std::memcpy(to + before_, from + n * run_, run_);
      std::memset(to + before_ + run_, 0, after_);
      to += before_ + run_ + after_;
    }
    return absl::OkStatus();
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    const char* from = static_cast<const char*>(args.dy);
    char* to = static_cast<char*>(args.dx[0]);
    for (int64_t n = 0; n < desc_.dims.n; ++n)
      std::memcpy(to + n * run_, from + n * (before_ + run_ + after_) + before_, run_);
    return absl::OkStatus();
  }

 private:
  const ChannelPadDesc desc_;
  size_t run_ = 0, before_ = 0, after_ = 0;  // bytes per example
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const ChannelPadDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<ChannelPadKernel>(std::move(context), desc, options, inputs);
}

KernelOr CreateOp(ContextPtr context, const ConcatDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<ConcatKernel>(std::move(context), desc, options, inputs);
}

KernelOr CreateOp(ContextPtr context, const AddDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<AddKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
