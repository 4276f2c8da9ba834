// Inverted dropout (oneDNN has no primitive): plain loops with the shared
// counter-based mask (core/random.h), so every backend drops the same
// elements: the mask is drawn per global logical (N,C,H,W) element index and
// keyed by (seed, node, training step).
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/random.h"
#include "core/status.h"
#include "kernels/onednn/ops.h"

namespace cnnbench {
namespace onednn {
namespace {

using dnnl::memory;

// Storage <-> double for fp32 and bf16 elements.
double Load(const float* p) { return *p; }
double Load(const uint16_t* p) { return BFloat16ToFloat(BFloat16{*p}); }
void Store(float* p, double v) { *p = static_cast<float>(v); }
void Store(uint16_t* p, double v) { *p = FloatToBFloat16(static_cast<float>(v)).bits; }

// out[i] = mask[i] ? in[i] * scale : 0 over `count` stored elements.
template <typename T>
void ApplyMask(const void* in, const uint8_t* mask, double scale, int64_t count, void* out) {
  const T* src = static_cast<const T*>(in);
  T* dst = static_cast<T*>(out);
  for (int64_t i = 0; i < count; ++i) Store(dst + i, mask[i] ? Load(src + i) * scale : 0.0);
}

class DropoutKernel : public OneDnnKernel {
 public:
  DropoutKernel(std::shared_ptr<Context> context, const DropoutDesc& desc,
                const KernelOptions& options)
      : OneDnnKernel(std::move(context), desc.ToString()),
        desc_(desc),
        seed_(options.seed),
        node_(options.node),
        first_index_(static_cast<uint64_t>(options.batch_offset) *
                     static_cast<uint64_t>(desc.dims.elements() / desc.dims.n)) {}

  absl::Status Init(const DropoutDesc&, const KernelOptions& options, const Inputs& inputs) {
    const DType dtype = options.dtype;
    const DropoutDesc& d = desc_;
    RETURN_IF_ERROR(CheckInputCount(inputs, 1, what_));
    ASSIGN_OR_RETURN(const TensorSpec* given, GivenInput(inputs, 0, dtype, d.dims.shape(), what_));
    const TensorSpec input = given != nullptr ? *given : TensorSpec::Plain(dtype, d.dims.shape());
    const memory::dims dims = ToDims(d.dims.shape());
    ASSIGN_OR_RETURN(memory::desc data_md, DescFromSpec(input, dims, "input 0", what_));
    dtype_ = dtype;
    elements_ = d.dims.elements();
    stored_ = static_cast<int64_t>(data_md.get_size() / SizeOf(dtype));
    data_bytes_ = data_md.get_size();
    signature_.saved_bytes = static_cast<size_t>(stored_);  // the mask, one byte per stored element
    if (data_md != PlainDesc(dims, data_md.data_type())) {
      // A blocked (or NHWC) x: draw the mask in logical order into scratch, then lay it
      // out like x (same blocking, one byte per element; padding gets 0).
      memory::desc mask_md = data_md;
      mask_md.data.data_type = dnnl_u8;
      mask_reorder_ = MakeReorder(*context_, PlainDesc(dims, memory::data_type::u8), mask_md);
      mask_offset_ = AlignUp(static_cast<size_t>(elements_));
      signature_.scratch_bytes = mask_offset_ + mask_reorder_.scratchpad_bytes();
    }
    signature_.inputs = {input};
    signature_.output = input;
    signature_.backward_reads_inputs = false;
    signature_.backward_reads_output = false;
    implementation_ = "loops";
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    if (!args.training) {
      if (args.y != x) std::memcpy(args.y, x, data_bytes_);
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(RequireSaved(args));
    RETURN_IF_ERROR(RequireScratch(args));
    uint8_t* mask = static_cast<uint8_t*>(args.saved);
    uint8_t* logical = mask_reorder_.valid() ? static_cast<uint8_t*>(args.scratch) : mask;
    const uint64_t key = DropoutKey(seed_, node_, args.step != nullptr ? *args.step : calls_);
    for (int64_t i = 0; i < elements_; ++i)
      logical[i] = DropoutKeeps(key, first_index_ + static_cast<uint64_t>(i), desc_.rate) ? 1 : 0;
    if (mask_reorder_.valid()) {
      RETURN_IF_ERROR(Guarded(what_, [&]() -> absl::Status {
        mask_reorder_.Set(DNNL_ARG_FROM, logical);
        mask_reorder_.Set(DNNL_ARG_TO, mask);
        mask_reorder_.SetScratchpad(static_cast<char*>(args.scratch) + mask_offset_);
        mask_reorder_.Execute(context_->stream);
        return absl::OkStatus();
      }));
    }
    ++calls_;
    Apply(x, mask, args.y);
    return absl::OkStatus();
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    if (!args.training) {  // the forward was the identity
      if (args.dx[0] != args.dy) std::memcpy(args.dx[0], args.dy, data_bytes_);
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(RequireSaved(args));
    Apply(args.dy, static_cast<const uint8_t*>(args.saved), args.dx[0]);
    return absl::OkStatus();
  }

 private:
  void Apply(const void* in, const uint8_t* mask, void* out) const {
    const double scale = 1.0 / (1.0 - desc_.rate);
    if (dtype_ == DType::kBF16) {
      ApplyMask<uint16_t>(in, mask, scale, stored_, out);
    } else {
      ApplyMask<float>(in, mask, scale, stored_, out);
    }
  }

  const DropoutDesc desc_;
  DType dtype_ = DType::kF32;
  int64_t elements_ = 0;  // logical
  int64_t stored_ = 0;    // in x's layout (blocked layouts may pad)
  size_t data_bytes_ = 0;
  BoundPrimitive mask_reorder_;  // logical -> x's layout, for blocked x
  size_t mask_offset_ = 0;       // scratch: logical mask, then the reorder's scratchpad
  const uint64_t seed_, node_;
  const uint64_t first_index_;  // global index of this batch's first element
  uint64_t calls_ = 0;          // training forwards so far: the step when none is given
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const DropoutDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<DropoutKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
