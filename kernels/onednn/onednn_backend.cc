// The oneDNN backend: one engine and stream, descriptor dispatch, the SGD
// optimizer, and Reorder with its primitives cached by (from, to) layout.
#include "kernels/onednn/onednn_backend.h"

#include <cstring>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "core/onednn_isa.h"
#include "core/status.h"
#include "kernels/onednn/common.h"
#include "kernels/onednn/masked_sum.h"
#include "kernels/onednn/ops.h"

namespace cnnbench {
namespace {

using dnnl::memory;
using onednn::Context;

// A (from, to) pair of memory descriptors: the reorder cache's key.
struct ReorderKey {
  memory::desc from, to;
  bool operator==(const ReorderKey& o) const { return from == o.from && to == o.to; }
};

size_t HashDesc(const memory::desc& desc) {
  const dnnl_memory_desc_t& d = desc.data;
  size_t h = std::hash<int>()(d.ndims) ^ (std::hash<int>()(d.data_type) << 1);
  auto mix = [&h](int64_t v) { h = h * 1000003u ^ std::hash<int64_t>()(v); };
  for (int i = 0; i < d.ndims; ++i) mix(d.dims[i]);
  mix(d.format_kind);
  mix(d.offset0);
  if (d.format_kind == dnnl_blocked) {
    const dnnl_blocking_desc_t& b = d.format_desc.blocking;
    for (int i = 0; i < d.ndims; ++i) mix(b.strides[i]);
    for (int i = 0; i < b.inner_nblks; ++i) {
      mix(b.inner_blks[i]);
      mix(b.inner_idxs[i]);
    }
  }
  return h;
}

struct ReorderKeyHash {
  size_t operator()(const ReorderKey& k) const { return HashDesc(k.from) * 31u + HashDesc(k.to); }
};

// The oneDNN dims a spec is reordered with: a blocked spec's own, else its
// shape's (a scalar as one element).
memory::dims NativeDims(const TensorSpec& spec) {
  if (const memory::desc* native = onednn::NativeDesc(spec)) return native->dims();
  if (spec.shape.rank() == 0) return {1};
  return onednn::ToDims(spec.shape);
}

// Whether `a` and `b` store the same elements in the same order, one in
// fp32 and the other in bf16: equal plain row-major specs, or blocked specs
// whose descriptors differ only in the data type.
bool SameLayoutOtherType(const TensorSpec& a, const TensorSpec& b) {
  const bool types = (a.dtype == DType::kF32 && b.dtype == DType::kBF16) ||
                     (a.dtype == DType::kBF16 && b.dtype == DType::kF32);
  if (!types || a.shape != b.shape) return false;
  if (a.is_plain() && b.is_plain()) return a.layout == b.layout;
  const memory::desc* da = onednn::NativeDesc(a);
  const memory::desc* db = onednn::NativeDesc(b);
  if (da == nullptr || db == nullptr) return false;
  dnnl_memory_desc_t retyped = da->data;
  retyped.data_type = db->data.data_type;
  return memory::desc(retyped) == *db;
}

class OneDnnBackend : public Backend {
 public:
  explicit OneDnnBackend(std::shared_ptr<Context> context) : context_(std::move(context)) {}

  absl::string_view name() const override { return "onednn"; }
  Device device() const override { return Device::Cpu(); }

  const Stream& stream() const override { return stream_; }

  // fp32 and bf16 sums of up to four gradients on the OpenMP team,
  // vectorised (Backend's loop is one thread, scalar in bf16); the rest as
  // Backend sums them.
  absl::Status SumInto(const TensorSpec& spec, const std::vector<const void*>& srcs,
                       void* dst) override {
    if ((spec.dtype != DType::kF32 && spec.dtype != DType::kBF16) || srcs.size() > 4)
      return Backend::SumInto(spec, srcs, dst);
    onednn::ParallelSum(spec.dtype, srcs.data(), static_cast<int>(srcs.size()), dst,
                        static_cast<int64_t>(spec.bytes / SizeOf(spec.dtype)));
    return absl::OkStatus();
  }

  absl::Status Reorder(const TensorSpec& from, const void* src, const TensorSpec& to,
                       void* dst) override {
    // Built only for an error: the executor reorders on graph edges every step.
    auto what = [&] {
      return absl::StrCat("reorder ", from.DebugString(), " -> ", to.DebugString());
    };
    if (src == nullptr || dst == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(what(), ": null buffer"));
    if (from.shape.num_elements() != to.shape.num_elements())
      return absl::InvalidArgumentError(absl::StrCat(what(), ": element counts differ"));
    // Two dense row-major copies of one type: a memcpy.
    auto row_major = [](const TensorSpec& s) { return s.is_plain() && s.layout != Layout::kNHWC; };
    if (row_major(from) && row_major(to) && from.dtype == to.dtype) {
      if (dst != src)
        std::memcpy(dst, src, static_cast<size_t>(from.shape.num_elements()) * SizeOf(from.dtype));
      return absl::OkStatus();
    }
    // fp32 <-> bf16 in one layout (a low-precision parameter's working copy
    // and its master, MasterSpec): an elementwise conversion.
    if (SameLayoutOtherType(from, to)) {
      const int64_t count = static_cast<int64_t>(from.bytes / SizeOf(from.dtype));
      if (from.dtype == DType::kF32)
        onednn::ConvertF32ToBf16(static_cast<const float*>(src), static_cast<uint16_t*>(dst),
                                 count);
      else
        onednn::ConvertBf16ToF32(static_cast<const uint16_t*>(src), static_cast<float*>(dst),
                                 count);
      return absl::OkStatus();
    }
    // A blocked side fixes the dims both sides are viewed with (so plain
    // (K,C/g,R,S) weights meet oneDNN's (g,K/g,C/g,R,S), and plain (OC,IC)
    // fc weights its (OC,C,H,W)).
    const memory::dims dims = !from.is_plain() ? NativeDims(from) : NativeDims(to);
    ASSIGN_OR_RETURN(memory::desc from_md, onednn::DescFromSpec(from, dims, "source", "reorder"));
    ASSIGN_OR_RETURN(memory::desc to_md, onednn::DescFromSpec(to, dims, "destination", "reorder"));
    try {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = reorders_.find(ReorderKey{from_md, to_md});
      if (it == reorders_.end()) {
        dnnl::reorder::primitive_desc pd(context_->engine, from_md, context_->engine, to_md);
        onednn::BoundPrimitive reorder(pd, dnnl::reorder(pd), {DNNL_ARG_FROM, DNNL_ARG_TO},
                                       context_->engine);
        it = reorders_.emplace(ReorderKey{from_md, to_md}, std::move(reorder)).first;
      }
      it->second.Set(DNNL_ARG_FROM, src);
      it->second.Set(DNNL_ARG_TO, dst);
      it->second.Execute(context_->stream);
    } catch (const dnnl::error& e) {
      return onednn::ErrorFromDnnl(e, what());
    }
    return absl::OkStatus();
  }

  // A blocked bf16 working copy's master is fp32 in the same blocking
  // (padding included), so the gradient casts and the working copy's
  // refresh are ConvertBf16ToF32 / ConvertF32ToBf16 over the stored
  // elements, not layout-changing reorders.
  TensorSpec MasterSpec(const TensorSpec& working) const override {
    const memory::desc* native = onednn::NativeDesc(working);
    if (working.dtype != DType::kBF16 || native == nullptr) return Backend::MasterSpec(working);
    dnnl_memory_desc_t f32 = native->data;
    f32.data_type = dnnl_f32;
    return onednn::SpecFromDesc(memory::desc(f32), DType::kF32, working.shape);
  }

  // The master MasterSpec makes for a bf16 working copy (or any fp32/bf16
  // pair in one layout): the SGD update writes the copy in its own pass.
  bool CastsElementwise(const TensorSpec& master, const TensorSpec& working) const override {
    return master.dtype == DType::kF32 && working.dtype == DType::kBF16 &&
           master.bytes == 2 * working.bytes && SameLayoutOtherType(master, working);
  }

  // Besides the default (equal plain specs, or one shared native object),
  // two blocked specs of this backend with equal descriptors match.
  bool SameLayout(const TensorSpec& a, const TensorSpec& b) const override {
    if (Backend::SameLayout(a, b)) return true;
    const memory::desc* da = onednn::NativeDesc(a);
    const memory::desc* db = onednn::NativeDesc(b);
    return da != nullptr && db != nullptr && a.dtype == b.dtype && a.shape == b.shape &&
           a.bytes == b.bytes && *da == *db;
  }

 protected:
  absl::StatusOr<std::unique_ptr<Optimizer>> CreateSgd(const SgdDesc& desc) override {
    return onednn::CreateSgd(desc);
  }

  absl::Status CheckSupported(const OpDesc& desc, const KernelOptions& options) const override {
    if (options.dtype == DType::kBF16 && !context_->has_bf16)
      return absl::UnimplementedError(
          absl::StrCat("unsupported: bf16 needs avx512_bf16: ", OnednnBf16Unavailable(), " (",
                       OpDescToString(desc), ")"));
    if (options.dtype != DType::kF32 && options.dtype != DType::kBF16)
      return absl::UnimplementedError(absl::StrCat("unsupported: ", DTypeName(options.dtype),
                                                   " on the onednn backend (", OpDescToString(desc),
                                                   ")"));
    // Fused ReLU and ReLU6 run in batch norm, add and the convolution's
    // epilogue, in training and inference (masked_sum.h masks either's
    // gradient). Another kind (ActivationMasks is false: its gradient needs
    // x): in batch norm everywhere (bn_activation.cc recomputes x from the
    // norm's input) and the convolution's forward-only epilogue (eltwise
    // post-ops); elsewhere it stays a layer of its own.
    const ActivationKind fused = FusedActivation(desc);
    if (fused != ActivationKind::kNone && fused != ActivationKind::kRelu &&
        fused != ActivationKind::kRelu6 && !std::holds_alternative<BatchNormDesc>(desc) &&
        !(std::holds_alternative<ConvDesc>(desc) && options.forward_only))
      return absl::UnimplementedError(absl::StrCat(
          "unsupported: the onednn backend fuses ReLU and ReLU6 alone in training outside batch "
          "norm (",
          OpDescToString(desc), ")"));
    if (options.precision == Precision::kTf32)
      return absl::UnimplementedError(absl::StrCat(
          "unsupported: tf32 is a GPU math mode; the onednn backend runs fp32 or bf16 (",
          OpDescToString(desc), ")"));
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<Kernel>> CreateKernel(
      const OpDesc& desc, const KernelOptions& options,
      const std::vector<TensorSpec>& inputs) override {
    return CreateOpKernel(context_, desc, options, inputs);
  }

 private:
  const Stream stream_ = Stream::Cpu();
  std::shared_ptr<Context> context_;
  std::mutex mutex_;  // guards the cache and the stream for concurrent Reorder calls
  std::unordered_map<ReorderKey, onednn::BoundPrimitive, ReorderKeyHash> reorders_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> CreateOneDnnBackend() {
  return CreateOneDnnBackend(OneDnnOptions());
}

absl::StatusOr<std::unique_ptr<Backend>> CreateOneDnnBackend(const OneDnnOptions& options) {
  return onednn::Guarded("onednn backend", [&]() -> absl::StatusOr<std::unique_ptr<Backend>> {
    auto context = std::make_shared<Context>();
    context->conv_algorithm = options.conv_algorithm;
    context->conv_choices = options.choices != nullptr ? options.choices : &ConvChoices::Process();
    context->engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
    context->stream = dnnl::stream(context->engine);
    context->has_bf16 = onednn::CpuHasBf16();
    return std::unique_ptr<Backend>(new OneDnnBackend(std::move(context)));
  });
}

}  // namespace cnnbench
