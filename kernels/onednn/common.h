// Pieces every oneDNN kernel shares: the backend's engine and stream,
// TensorSpec <-> dnnl::memory::desc conversions, dnnl::error -> Status, and a
// primitive bundled with the memory objects of its arguments.
#ifndef CNNBENCH_KERNELS_ONEDNN_COMMON_H_
#define CNNBENCH_KERNELS_ONEDNN_COMMON_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/status.h"
#include "dnnl.hpp"
#include "kernels/kernel.h"
#include "kernels/onednn/conv_choices.h"
#include "kernels/onednn/loop_util.h"

namespace cnnbench {
namespace onednn {

// One engine and one stream per backend, shared by all its kernels (which
// keep the context alive through a shared_ptr).
struct Context {
  dnnl::engine engine;
  dnnl::stream stream;
  bool has_bf16 = false;  // the CPU runs bf16 natively (avx512_bf16)
  CpuConvAlgorithm conv_algorithm = CpuConvAlgorithm::kDirect;
  ConvChoices* conv_choices = nullptr;  // never null in a backend's context
};

// Whether oneDNN's effective ISA includes avx512_core_bf16.
bool CpuHasBf16();

// A dnnl::error as a Status that names `what` (the descriptor string):
// unimplemented -> Unimplemented("unsupported: ..."), out of memory -> OOM,
// bad arguments -> InvalidArgument, anything else -> Internal.
absl::Status ErrorFromDnnl(const dnnl::error& e, absl::string_view what);

// Runs `fn` (returning Status or StatusOr) and turns the exceptions oneDNN's
// C++ API throws into a Status naming `what`.
template <typename Fn>
auto Guarded(absl::string_view what, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const dnnl::error& e) {
    return ErrorFromDnnl(e, what);
  } catch (const std::bad_alloc&) {
    return OutOfMemoryError(std::string(what));
  }
}

absl::StatusOr<dnnl::memory::data_type> ToDnnlType(DType dtype);
// The dense row-major tag of a rank (a, ab, abc, abcd, abcde).
dnnl::memory::format_tag PlainTag(int rank);
dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims, dnnl::memory::data_type type);
// `desc` with format_tag::any (lets the primitive choose).
dnnl::memory::desc AnyDesc(const dnnl::memory::dims& dims, dnnl::memory::data_type type);

// The memory descriptor of a tensor stored as `spec`, viewed with oneDNN
// dims `dims` (their product must equal the spec's element count: conv
// weights (K,C/g,R,S) are viewed as (g,K/g,C/g,R,S); fc weights (OC,IC) as
// (OC,C,H,W)). Plain specs map to their row-major tag (NHWC to nhwc);
// blocked specs must carry a native descriptor with exactly these dims.
// `role` names the tensor in errors ("input 0", "weights").
absl::StatusOr<dnnl::memory::desc> DescFromSpec(const TensorSpec& spec,
                                                const dnnl::memory::dims& dims,
                                                absl::string_view role, absl::string_view what);

// Checks `inputs` (the producers' specs given to Create) has `count`
// entries, or none.
absl::Status CheckInputCount(const std::vector<TensorSpec>& inputs, size_t count,
                             absl::string_view what);
// inputs[i] after checking its dtype and logical shape; nullptr when
// `inputs` is empty (plain layouts).
absl::StatusOr<const TensorSpec*> GivenInput(const std::vector<TensorSpec>& inputs, size_t i,
                                             DType dtype, const Shape& shape,
                                             absl::string_view what);
// The oneDNN dims of a shape.
dnnl::memory::dims ToDims(const Shape& shape);

// The spec of a tensor of logical `shape` stored as `desc`: plain when the
// descriptor is the dense row-major one, else kBlocked with `native` = a
// shared dnnl::memory::desc and bytes = desc.get_size().
TensorSpec SpecFromDesc(const dnnl::memory::desc& desc, DType dtype, Shape shape);

// Whether oneDNN made `pd` with its reference (scalar C++) implementation,
// "ref:any" and the like: correct everywhere, and far slower than its jit
// kernels.
bool IsReferenceKernel(const dnnl::primitive_desc_base& pd);

// The descriptor of a blocked spec made by SpecFromDesc (nullptr if none).
const dnnl::memory::desc* NativeDesc(const TensorSpec& spec);

// Rounds up to the 64-byte alignment oneDNN and AVX-512 like.
inline size_t AlignUp(size_t bytes) { return (bytes + 63) / 64 * 64; }

// A primitive with one memory object per argument, created once. A call
// points the memories at the caller's buffers (set_data_handle: no
// allocation) and executes.
class BoundPrimitive {
 public:
  BoundPrimitive() = default;
  // Makes memories for `arg_ids` from `pd`'s descriptors, plus the
  // scratchpad when `pd` needs one (the attribute must ask for a user one).
  BoundPrimitive(const dnnl::primitive_desc_base& pd, dnnl::primitive primitive,
                 const std::vector<int>& arg_ids, const dnnl::engine& engine);

  bool valid() const { return valid_; }
  void Set(int arg, const void* data) { args_.at(arg).set_data_handle(const_cast<void*>(data)); }
  // Points the scratchpad (if any) at `scratch`.
  void SetScratchpad(void* scratch);
  size_t scratchpad_bytes() const { return scratchpad_bytes_; }
  const dnnl::memory::desc& desc(int arg) const { return descs_.at(arg); }
  const std::string& implementation() const { return implementation_; }
  void Execute(dnnl::stream& stream) const;

 private:
  bool valid_ = false;
  dnnl::primitive primitive_;
  std::unordered_map<int, dnnl::memory> args_;
  // The same arguments for the C API, built once: the C++ execute() would
  // rebuild this vector (an allocation) on every call.
  std::vector<dnnl_exec_arg_t> exec_args_;
  std::unordered_map<int, dnnl::memory::desc> descs_;
  size_t scratchpad_bytes_ = 0;
  std::string implementation_;
};

// The attribute every primitive here is created with: a user scratchpad, so
// the kernel's `scratch` buffer holds it (no allocation inside a call).
dnnl::primitive_attr UserScratchpadAttr();
// oneDNN's eltwise algorithms of an activation (kernels/activation.h's
// arithmetic), applied in order: ReLU eltwise_relu (alpha 0), ReLU6
// eltwise_clip_v2 (0, 6), whose backward masks 0 < x < 6 as the reference
// does (eltwise_clip's passes dy at x == 6); sigmoid eltwise_logistic, SiLU
// eltwise_swish (alpha 1), hard-swish eltwise_hardswish, GELU
// eltwise_gelu_erf and eltwise_gelu_tanh; hard-sigmoid, which oneDNN 2.6.3
// lacks, clip_v2 (-3, 3) then linear (1/6, 0.5), whose backward passes both
// read x (linear's derivative is constant). `use_dst`: the
// *_use_dst_for_bwd forms (the masking kinds only: ActivationMasks).
struct EltwiseActivation {
  dnnl::algorithm algorithm = dnnl::algorithm::eltwise_relu;
  float alpha = 0, beta = 0;
};
std::vector<EltwiseActivation> OneDnnActivationSteps(ActivationKind kind, bool use_dst);
// The one step of a masking kind (ReLU, ReLU6).
EltwiseActivation OneDnnActivation(ActivationKind kind, bool use_dst);
// The same, with an activation applied to the primitive's output as its
// post-op (a fused residual add's, a convolution's epilogue).
dnnl::primitive_attr UserScratchpadActivationAttr(ActivationKind kind);
// A convolution's epilogue as post-ops: with `sum`, the destination's old
// contents added (a residual input written there first: oneDNN 2.6 runs a
// full-tensor binary add post-op only as its reference kernel, the sum in
// its jit and brgemm ones), then the activation (none: no eltwise).
dnnl::primitive_attr UserScratchpadEpilogueAttr(bool sum, ActivationKind kind);

// Seconds of the fastest of `runs` executions of `primitive`, each waited
// for, on buffers of its arguments' descriptors (`args`, FROM and TO for a
// reorder) and its scratchpad, filled with uniform values in [-1, 1) (fp32
// or bf16; other types zeros). How a kernel times its candidates when it is
// created; throws dnnl::error or std::bad_alloc as the C++ API does.
double TimeExecution(const Context& context, BoundPrimitive& primitive,
                     const std::vector<int>& args, int runs);

// A reorder between two descriptors as a BoundPrimitive (args FROM, TO).
BoundPrimitive MakeReorder(const Context& context, const dnnl::memory::desc& from,
                           const dnnl::memory::desc& to);

// The backward pass whose parameter gradients a kernel kept in its saved
// memory (a batch norm computes dx and dgamma/dbeta in one pass): a
// BackwardWeights after a BackwardData of the same forward, x, dy and saved
// copies them instead of running the pass again.
struct BackwardRecord {
  int64_t forward_count = -1;
  const void* x = nullptr;
  const void* dy = nullptr;
  const void* saved = nullptr;
  bool operator==(const BackwardRecord& o) const {
    return forward_count == o.forward_count && x == o.x && dy == o.dy && saved == o.saved;
  }
};

// Base of the oneDNN kernels: the shared context, the descriptor string for
// errors, and argument checks.
class OneDnnKernel : public Kernel {
 public:
  std::string implementation() const override { return implementation_; }
  // The forward's implementation_, the backward passes' backward_implementation_
  // where a kernel set one.
  std::string pass_implementation(OpPass pass) const override {
    return pass == OpPass::kForward || backward_implementation_.empty() ? implementation_
                                                                        : backward_implementation_;
  }

 protected:
  OneDnnKernel(std::shared_ptr<Context> context, std::string what)
      : context_(std::move(context)), what_(std::move(what)) {}

  // InvalidArgument naming the descriptor when `pointer` is null.
  absl::Status Require(const void* pointer, absl::string_view name) const;
  // The pointer of x[i] / params[i] / state[i] / dx[i] / dparams[i], or an
  // error when it is missing.
  absl::StatusOr<const void*> Input(const KernelArgs& args, size_t i) const;
  absl::StatusOr<void*> Param(const std::vector<void*>& list, size_t i,
                              absl::string_view name) const;
  absl::Status RequireScratch(const KernelArgs& args) const;
  absl::Status RequireSaved(const KernelArgs& args) const;

  std::shared_ptr<Context> context_;
  std::string what_;
  std::string implementation_;
  std::string backward_implementation_;  // "" when the backward runs what the forward does
};

}  // namespace onednn
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ONEDNN_COMMON_H_
