// The one interface every backend implements: a descriptor becomes a
// ready-to-run kernel once (algorithm choice, layouts, workspace sizes,
// primitive creation), then runs many times with no allocation.
//
// Binding model (the same for every op, so the executor stays generic):
//   Forward:          x[i], params, state            -> y, saved
//   BackwardData:     dy, x[i], y, params, saved      -> dx[i]
//   BackwardWeights:  dy, x[i], y, saved              -> dparams
// `scratch` is temporary memory for any call. Buffers are laid out as the
// kernel's signature() says (the producers' layouts are given to Create).
#ifndef CNNBENCH_KERNELS_KERNEL_H_
#define CNNBENCH_KERNELS_KERNEL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "kernels/desc.h"
#include "kernels/loss_scale.h"
#include "kernels/op_traits.h"

namespace cnnbench {

// How one tensor is stored. `shape` is logical: (N,C,H,W) activations,
// (N,C) matrices, (K,C/g,R,S) conv weights, (OC,IC) fc weights, (C) vectors,
// (N) int32 labels, () the scalar loss. Plain layouts are dense row-major in
// that order; Layout::kBlocked is a backend's own, described by `native`.
struct TensorSpec {
  DType dtype = DType::kF32;
  Shape shape;
  Layout layout = Layout::kX;
  size_t bytes = 0;                    // storage size (blocked layouts may pad)
  std::shared_ptr<const void> native;  // backend-private layout (only that backend reads it)

  bool is_plain() const { return layout != Layout::kBlocked; }
  // Dense row-major spec of `shape` (layout: kNCHW for rank 4, kNC for rank 2, kX otherwise).
  static TensorSpec Plain(DType dtype, Shape shape);
  std::string DebugString() const;
};

struct KernelSignature {
  std::vector<TensorSpec> inputs;  // x[i]
  TensorSpec output;               // y
  std::vector<TensorSpec> params;  // trainable: conv/fc {weights, bias?}, bn {gamma, beta}
  std::vector<TensorSpec> state;   // persistent, not trained: bn {running_mean, running_var}
  size_t saved_bytes = 0;          // written by a training Forward, read by the backward passes
  size_t scratch_bytes = 0;        // temporary for any call
  // Liveness: whether the backward passes read x[i] / y (else the executor may
  // reuse their memory right after the forward pass has consumed them).
  bool backward_reads_inputs = true;
  bool backward_reads_output = false;
  // Every input's gradient is the same tensor (add): the executor may give
  // all of them one buffer, and BackwardData writes it once when the dx
  // pointers are equal.
  bool shared_input_gradient = false;
  // BackwardData takes the output gradient as a sum of parts (dy_parts,
  // with dy null): where the output feeds several layers, the executor
  // passes their gradients instead of summing them first.
  bool sums_output_gradient = false;
  // With sums_output_gradient: the most parts BackwardData takes (0: any
  // number); an output read by more layers has its gradients summed first.
  int max_output_gradient_parts = 0;
  // Forward may write y over x[output_over_input] (>= 0; the input has y's
  // spec): it reads each element of that input before it writes the same
  // element of y, or needs y to hold that input when it starts (oneDNN's
  // sum post-op) and copies it there when y is another buffer. A plan gives
  // y that input's buffer where no later layer reads it (train/step_plan.h).
  int output_over_input = -1;
  // Forward may find x[i] already in place inside y, at input_views[i]
  // bytes (a channel concatenation at batch 1 whose inputs' layouts are
  // each a contiguous run of y's): it then copies nothing for that input.
  // A plan may make the producer's output that view of y (train/step_plan.h);
  // an input given elsewhere is copied in. Empty: no input can be a view;
  // else one offset per input, each range x[i]'s bytes long, disjoint.
  std::vector<size_t> input_views;
};

struct KernelArgs {
  std::vector<const void*> x;
  void* y = nullptr;
  std::vector<void*> params;
  std::vector<void*> state;
  void* saved = nullptr;
  void* scratch = nullptr;
  const void* dy = nullptr;
  // With KernelSignature::sums_output_gradient: when not empty, the output
  // gradient is the sum of these (dy is then null).
  std::vector<const void*> dy_parts;
  std::vector<void*> dx;       // nullptr entries: that input needs no gradient
  std::vector<void*> dparams;  // overwritten (not accumulated)
  bool training = true;        // bn uses batch statistics; dropout drops
  // The training step, in device memory, read by random ops (dropout keys
  // its mask with it, so a replayed step draws a new mask). nullptr: the
  // kernel counts its own training calls.
  const uint64_t* step = nullptr;
  // softmax_xent's BackwardData multiplies the loss gradient by *loss_scale
  // (device memory) when given: dynamic loss scaling's start (fp16). The
  // reference and cuda backends honour it; oneDNN (no fp16) refuses it.
  const float* loss_scale = nullptr;
};

// Whether a kernel with `signature` takes an output gradient of `parts`
// parts (> 1) as they are (KernelArgs::dy_parts) rather than summed.
inline bool TakesOutputGradientParts(const KernelSignature& signature, size_t parts) {
  return signature.sums_output_gradient &&
         (signature.max_output_gradient_parts <= 0 ||
          parts <= static_cast<size_t>(signature.max_output_gradient_parts));
}

class Kernel {
 public:
  virtual ~Kernel() = default;
  const KernelSignature& signature() const { return signature_; }
  // What runs: "reference", or oneDNN's implementation name ("jit:avx2", ...).
  virtual std::string implementation() const = 0;
  // What runs in `pass`: implementation() unless the kernel's passes run
  // different implementations (a oneDNN convolution may run Winograd in
  // one pass and direct convolution in another).
  virtual std::string pass_implementation(OpPass pass) const { return implementation(); }
  // Each call enqueues on the backend's stream and does not wait for it.
  virtual absl::Status Forward(const KernelArgs& args) = 0;
  virtual absl::Status BackwardData(const KernelArgs& args) = 0;
  // Ops without parameters do nothing here.
  virtual absl::Status BackwardWeights(const KernelArgs& args) { return absl::OkStatus(); }
  // A training step's backward, as the executor runs it: BackwardData when
  // any dx is wanted, then BackwardWeights when the op has parameters. A
  // kernel whose two passes share work (a convolution's ReLU epilogue
  // masks dy by y > 0) does that work once here.
  virtual absl::Status Backward(const KernelArgs& args);
  // An error the device recorded in calls that have completed (e.g. a bad
  // label seen by a replayed CUDA graph, where no host code runs): the
  // executor asks every kernel after it has waited for its stream.
  virtual absl::Status DeviceErrors() const { return absl::OkStatus(); }

 protected:
  KernelSignature signature_;
};

// A bf16 working copy of fp32 master parameters: `data[i]` is
// params[offset + i] rounded to nearest even, for i in [0, count).
struct Bf16Copy {
  int64_t offset = 0;
  int64_t count = 0;
  uint16_t* data = nullptr;
};

// What the fused optimizer update reads and writes; every pointer is device
// memory of the backend's device.
struct UpdateArgs {
  float* params = nullptr;       // `count` fp32 master weights
  const float* grads = nullptr;  // their gradients (scaled by the loss scale)
  float* momentum = nullptr;     // optimizer state
  // Gradients are divided by *loss_scale before use (nullptr: 1). Read on
  // the device, so a captured step sees the scale of the moment.
  float* loss_scale = nullptr;
  // When given: set to 1, and the update skipped, if any gradient is not
  // finite; else 0.
  int32_t* overflow = nullptr;
  // When given: incremented by every call, also a skipped one (the step
  // counter random ops read; see KernelArgs::step).
  uint64_t* step = nullptr;
  // Dynamic loss scaling (fp16), when given with loss_scale and overflow:
  // after the update, AdjustLossScale (kernels/loss_scale.h) halves or
  // grows *loss_scale, counting clean updates in *good_steps.
  int32_t* good_steps = nullptr;
  int32_t growth_interval = kGrowthInterval;
  // bf16 working copies the update writes in the same pass, for an
  // optimizer whose WritesBf16Copies() is true (others refuse a non-empty
  // list): each is params [offset, offset + count) rounded to bf16 element
  // by element (Backend::CastsElementwise), sorted by offset, disjoint.
  // A skipped update writes none (its masters are unchanged).
  const Bf16Copy* bf16_copies = nullptr;
  int num_bf16_copies = 0;
};

// The fused optimizer update over `count` contiguous fp32 parameters,
// gradients and momentum buffers.
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual absl::Status Update(const UpdateArgs& args) = 0;
  absl::Status Update(float* params, const float* grads, float* momentum) {
    UpdateArgs args;
    args.params = params;
    args.grads = grads;
    args.momentum = momentum;
    return Update(args);
  }
  // Whether Update writes UpdateArgs::bf16_copies (the executor refreshes
  // the working copies itself otherwise, a second pass over the masters).
  virtual bool WritesBf16Copies() const { return false; }
};

// How a kernel computes: the activations' storage type and the math mode
// (tf32 and fp32 both store fp32; the reference also runs fp64 under fp32),
// plus the keys of random ops.
struct KernelOptions {
  DType dtype = DType::kF32;
  Precision precision = Precision::kFp32;
  uint64_t seed = 0;         // the run's seed (dropout masks)
  uint64_t node = 0;         // the layer's key among the graph's random ops
  int64_t batch_offset = 0;  // global index of this batch's first example (data parallel)
  // Only Forward will run (an inference plan): a backend may leave the
  // backward passes out (they then refuse), and may run what it has no
  // backward for (Supports answers for this use).
  bool forward_only = false;

  // The options of a plain kernel storing `dtype`: fp32 math for fp32 and
  // fp64, the matching mixed precision for fp16 and bf16.
  static KernelOptions ForDType(DType dtype);
  static KernelOptions ForPrecision(Precision precision);
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual absl::string_view name() const = 0;  // "reference", "onednn"
  virtual Device device() const = 0;
  // The stream every kernel, fill, copy and reorder of this backend enqueues on.
  virtual const Stream& stream() const = 0;
  // Alignment of every buffer handed to a kernel (64 bytes on the CPU).
  virtual size_t alignment() const { return 64; }

  // Validates the descriptor and the options (shared by every backend),
  // asks the backend whether it runs them (CheckSupported), then creates the
  // kernel (CreateKernel). `inputs`: the specs the producers' outputs have
  // (their layouts); empty means plain layouts. Errors name the descriptor;
  // what a backend cannot run is absl::UnimplementedError("unsupported: ...").
  absl::StatusOr<std::unique_ptr<Kernel>> Create(const OpDesc& desc, const KernelOptions& options,
                                                 const std::vector<TensorSpec>& inputs);
  absl::StatusOr<std::unique_ptr<Kernel>> Create(const OpDesc& desc, DType dtype,
                                                 const std::vector<TensorSpec>& inputs) {
    return Create(desc, KernelOptions::ForDType(dtype), inputs);
  }
  // What Create checks before creating anything: OK when this backend runs
  // `desc` with `options`. The executor asks before fusing layers.
  absl::Status Supports(const OpDesc& desc, const KernelOptions& options) const;
  // Validates the descriptor (errors name it), then creates the backend's
  // fused update (CreateSgd).
  absl::StatusOr<std::unique_ptr<Optimizer>> CreateOptimizer(const SgdDesc& desc);

  // Device memory operations, enqueued on stream(): a byte fill, a copy, and
  // dst = sum of `srcs` (elementwise, `spec` describes each; dst may be srcs[0]).
  // AddN checks its arguments here for every backend, then calls SumInto.
  virtual absl::Status Fill(void* dst, int byte, size_t bytes);
  virtual absl::Status Copy(void* dst, const void* src, size_t bytes);
  absl::Status AddN(const TensorSpec& spec, const std::vector<const void*>& srcs, void* dst);

  // Copies `src` stored as `from` into `dst` stored as `to` (same logical
  // shape; layouts and dtypes may differ), both in this backend's device
  // memory. Used at graph edges, never between two layers of one backend.
  virtual absl::Status Reorder(const TensorSpec& from, const void* src, const TensorSpec& to,
                               void* dst) = 0;
  // Host memory in a plain layout to device memory stored as `to`, and back.
  // Synchronous: the host side may be reused on return. The host side's
  // layout is checked here for every backend; the copy is UploadChecked /
  // DownloadChecked (on the CPU, Reorder).
  absl::Status Upload(const TensorSpec& host, const void* src, const TensorSpec& to, void* dst);
  absl::Status Download(const TensorSpec& from, const void* src, const TensorSpec& host, void* dst);
  // Whether data stored as `a` can be read as `b` with no reorder. The
  // executor inserts a Reorder on every graph edge where this is false.
  // Default: equal plain specs, or blocked specs sharing one `native` object
  // (a consumer that takes its producer's layout returns that very spec).
  virtual bool SameLayout(const TensorSpec& a, const TensorSpec& b) const;
  // How the executor stores the fp32 master of a low-precision parameter
  // whose working copy is stored as `working` (and its gradient and
  // momentum beside it). Default: plain fp32. A backend may keep the
  // working copy's layout, so the casts between them (each weight gradient,
  // each refresh of the working copy) are elementwise.
  virtual TensorSpec MasterSpec(const TensorSpec& working) const;
  // Whether the fp32 `master` and the bf16 `working` copy store their
  // elements in one order (padding included), so the working copy is the
  // master rounded element by element: the copies an optimizer that
  // WritesBf16Copies() refreshes in its update pass. Default: false.
  virtual bool CastsElementwise(const TensorSpec& master, const TensorSpec& working) const {
    return false;
  }

 protected:
  // OK when this backend runs `options` for `desc`; else
  // UnimplementedError("unsupported: ..."). The descriptor is already valid.
  virtual absl::Status CheckSupported(const OpDesc& desc, const KernelOptions& options) const = 0;
  // Every backend implements this with CreateOpKernel (below).
  virtual absl::StatusOr<std::unique_ptr<Kernel>> CreateKernel(
      const OpDesc& desc, const KernelOptions& options, const std::vector<TensorSpec>& inputs) = 0;
  // The update of a valid descriptor.
  virtual absl::StatusOr<std::unique_ptr<Optimizer>> CreateSgd(const SgdDesc& desc) = 0;
  // The bodies of AddN, Upload and Download, called with checked arguments
  // (srcs not empty, no null pointer; host specs plain). The defaults run on
  // the CPU: a loop, and Reorder.
  virtual absl::Status SumInto(const TensorSpec& spec, const std::vector<const void*>& srcs,
                               void* dst);
  virtual absl::Status UploadChecked(const TensorSpec& host, const void* src, const TensorSpec& to,
                                     void* dst);
  virtual absl::Status DownloadChecked(const TensorSpec& from, const void* src,
                                       const TensorSpec& host, void* dst);
};

// A kernel object K made from (context, desc), or from (context, desc,
// options) where K's constructor takes the options: the first half of each
// backend's MakeKernel (its ops.h), which then initialises it.
template <typename K, typename ContextPtr, typename Desc>
std::unique_ptr<K> ConstructKernel(ContextPtr context, const Desc& desc,
                                   const KernelOptions& options) {
  if constexpr (std::is_constructible_v<K, ContextPtr, const Desc&, const KernelOptions&>) {
    return std::make_unique<K>(std::move(context), desc, options);
  } else {
    return std::make_unique<K>(std::move(context), desc);
  }
}

// The one dispatch from a descriptor to its op's constructor, which every
// backend's CreateKernel calls. Each backend's namespace declares, for every
// alternative D of OpDesc, one constructor of this shape (its ops.h):
//
//   KernelOr CreateOp(ContextPtr context, const D& desc, const KernelOptions& options,
//                     const std::vector<TensorSpec>& inputs);
//
// found by argument-dependent lookup through the backend's own ContextPtr
// type. A backend that lacks one for some op does not compile.
template <typename ContextPtr>
absl::StatusOr<std::unique_ptr<Kernel>> CreateOpKernel(const ContextPtr& context,
                                                       const OpDesc& desc,
                                                       const KernelOptions& options,
                                                       const std::vector<TensorSpec>& inputs) {
  return std::visit(
      [&](const auto& d) -> absl::StatusOr<std::unique_ptr<Kernel>> {
        return CreateOp(context, d, options, inputs);
      },
      desc);
}

// What the backward passes of a kernel made forward only
// (KernelOptions::forward_only) return: a FailedPrecondition naming `what`
// and why.
absl::Status ForwardOnlyError(absl::string_view what);

// The checks every optimizer's Update makes of its arguments: the
// parameters and gradients, the momentum buffer where momentum > 0, and the
// bf16 copies (in range, sorted, disjoint; refused unless the optimizer
// `writes_bf16_copies`).
absl::Status CheckUpdateArgs(const SgdDesc& desc, const UpdateArgs& args,
                             bool writes_bf16_copies = false);

// The part of an update every CPU optimizer shares: checks the arguments,
// advances the step counter, reads the loss scale, and (when asked) checks
// that every gradient is finite, setting the overflow flag.
struct CpuUpdatePlan {
  double inverse_scale = 1.0;  // multiply each gradient by this
  bool skip = false;           // a gradient was not finite: leave the parameters
};
absl::StatusOr<CpuUpdatePlan> PrepareCpuUpdate(const SgdDesc& desc, const UpdateArgs& args,
                                               bool writes_bf16_copies = false);

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_KERNEL_H_
