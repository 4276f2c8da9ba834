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
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "kernels/desc.h"

namespace cnnbench {

// How one tensor is stored. `shape` is logical: (N,C,H,W) activations,
// (N,C) matrices, (K,C/g,R,S) conv weights, (OC,IC) fc weights, (C) vectors,
// (N) int32 labels, () the scalar loss. Plain layouts are dense row-major in
// that order; Layout::kBlocked is a backend's own, described by `native`.
struct TensorSpec {
  DType dtype = DType::kF32;
  Shape shape;
  Layout layout = Layout::kX;
  size_t bytes = 0;                     // storage size (blocked layouts may pad)
  std::shared_ptr<const void> native;   // backend-private layout (only that backend reads it)

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
};

struct KernelArgs {
  std::vector<const void*> x;
  void* y = nullptr;
  std::vector<void*> params;
  std::vector<void*> state;
  void* saved = nullptr;
  void* scratch = nullptr;
  const void* dy = nullptr;
  std::vector<void*> dx;       // nullptr entries: that input needs no gradient
  std::vector<void*> dparams;  // overwritten (not accumulated)
  bool training = true;        // bn uses batch statistics; dropout drops
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  const KernelSignature& signature() const { return signature_; }
  // What runs: "reference", or oneDNN's implementation name ("jit:avx2", ...).
  virtual std::string implementation() const = 0;
  virtual absl::Status Forward(const KernelArgs& args) = 0;
  virtual absl::Status BackwardData(const KernelArgs& args) = 0;
  // Ops without parameters do nothing here.
  virtual absl::Status BackwardWeights(const KernelArgs& args) { return absl::OkStatus(); }

 protected:
  KernelSignature signature_;
};

// The fused optimizer update over `count` contiguous fp32 parameters,
// gradients and momentum buffers.
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual absl::Status Update(float* params, const float* grads, float* momentum) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual absl::string_view name() const = 0;  // "reference", "onednn"
  virtual Device device() const = 0;

  // `inputs`: the specs the producers' outputs have (their layouts); empty
  // means plain layouts. `dtype`: the activations' type (fp32 or bf16).
  // Unsupported configurations are absl::UnimplementedError("unsupported: ...").
  virtual absl::StatusOr<std::unique_ptr<Kernel>> Create(const OpDesc& desc, DType dtype,
                                                         const std::vector<TensorSpec>& inputs) = 0;
  virtual absl::StatusOr<std::unique_ptr<Optimizer>> CreateOptimizer(const SgdDesc& desc) = 0;
  // Copies `src` stored as `from` into `dst` stored as `to` (same logical
  // shape; layouts and dtypes may differ). Used at graph edges and for
  // parameter initialisation, never between two layers of one backend.
  virtual absl::Status Reorder(const TensorSpec& from, const void* src, const TensorSpec& to,
                               void* dst) = 0;
  // Whether data stored as `a` can be read as `b` with no reorder. The
  // executor inserts a Reorder on every graph edge where this is false.
  // Default: equal plain specs, or blocked specs sharing one `native` object
  // (a consumer that takes its producer's layout returns that very spec).
  virtual bool SameLayout(const TensorSpec& a, const TensorSpec& b) const;
};

// "reference" or "onednn" on the CPU.
absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(absl::string_view name,
                                                       const Device& device);

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_KERNEL_H_
