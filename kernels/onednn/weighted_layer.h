// The part convolution and inner product share: forward, backward data and
// backward weights over (weights, bias?) parameters, with the weights
// reordered into scratch when backward data wants another layout.
#ifndef CNNBENCH_KERNELS_ONEDNN_WEIGHTED_LAYER_H_
#define CNNBENCH_KERNELS_ONEDNN_WEIGHTED_LAYER_H_

#include <memory>
#include <string>

#include "kernels/onednn/common.h"

namespace cnnbench {
namespace onednn {

// Backward data's primitive descriptor, made by `make(weights_desc)`: with
// the weights as the forward stores them (`stored`) when oneDNN runs the
// same kernel that way as with its preferred layout (`any`), so no reorder
// is needed (gemm-based inner products); else the preferred one (jit
// convolutions, which fall back to ref:any on the forward's layout).
template <typename PrimitiveDesc, typename Make>
PrimitiveDesc ChooseBackwardData(Make make, const dnnl::memory::desc& stored,
                                 const dnnl::memory::desc& any) {
  PrimitiveDesc preferred = make(any);
  if (preferred.weights_desc() == stored) return preferred;
  try {
    PrimitiveDesc as_stored = make(stored);
    if (std::string(as_stored.impl_info_str()) == preferred.impl_info_str()) return as_stored;
  } catch (const dnnl::error&) {
    // No kernel reads the stored layout: reorder.
  }
  return preferred;
}

// The same choice for backward weights, whose output is the weight
// gradient: in the layout the parameters are stored in when a kernel as good
// as the preferred one writes it, else in the preferred layout (reordered
// into place afterwards; e.g. oneDNN 2.6's bf16 convolution weight
// gradients have only a reference kernel for the forward's blocked layout).
template <typename PrimitiveDesc, typename Make>
PrimitiveDesc ChooseBackwardWeights(Make make, const dnnl::memory::desc& stored,
                                    const dnnl::memory::desc& any) {
  PrimitiveDesc preferred = make(any);
  if (preferred.diff_weights_desc() == stored) return preferred;
  try {
    PrimitiveDesc as_stored = make(stored);
    if (std::string(as_stored.impl_info_str()) == preferred.impl_info_str()) return as_stored;
  } catch (const dnnl::error&) {
    // No kernel writes the stored layout: reorder.
  }
  return preferred;
}

class WeightedLayer : public OneDnnKernel {
 public:
  absl::Status Forward(const KernelArgs& args) override;
  absl::Status BackwardData(const KernelArgs& args) override;
  absl::Status BackwardWeights(const KernelArgs& args) override;
  // Both passes; behind an activation epilogue dy is masked once for the two.
  absl::Status Backward(const KernelArgs& args) override;
  // Each pass's primitive's implementation (a reorder around it not named).
  std::string pass_implementation(OpPass pass) const override;

 protected:
  WeightedLayer(std::shared_ptr<Context> context, std::string what, bool bias)
      : OneDnnKernel(std::move(context), std::move(what)), bias_(bias) {}

  // Takes the three primitives a subclass created (the backward ones with
  // the forward's src/dst/weights descriptors as their diff descriptors),
  // binds their arguments and sets scratch_bytes, the liveness flags and
  // implementation(). The subclass fills in the specs.
  void Bind(const dnnl::primitive_desc_base& forward_pd, dnnl::primitive forward,
            const dnnl::primitive_desc_base& backward_data_pd, dnnl::primitive backward_data,
            const dnnl::primitive_desc_base& backward_weights_pd, dnnl::primitive backward_weights);
  // The same for a kernel made forward only (KernelOptions::forward_only):
  // its backward passes refuse.
  void BindForward(const dnnl::primitive_desc_base& forward_pd, dnnl::primitive forward);
  // After Bind: the forward ends in the activation `kind` (ReLU or ReLU6,
  // an eltwise post-op), so both backward passes take dy masked where it
  // passes at y (ReLU: y > 0; ReLU6: 0 < y < 6, activation.h's
  // ActivationPasses), written into the head of scratch: fp32 and bf16 by
  // the backend's own vectorised loop over the forward's destination
  // storage (masked_sum.h; with oneDNN 2.6.3's ReLU backward, googlenet's
  // bf16 conv+ReLU backward passes took 1.2-3.8x the convolution alone),
  // other types by oneDNN's eltwise backward on y (the *_use_dst_for_bwd
  // algorithms). The backward then reads y.
  void MaskOutputGradient(ActivationKind kind);

  const bool bias_;

 private:
  // dy masked by y into `scratch`, where the forward has an activation.
  absl::Status Mask(const KernelArgs& args, char* scratch);
  // The passes on the output gradient `dy`, with `scratch` as their scratch.
  absl::Status RunBackwardData(const KernelArgs& args, const void* dy, char* scratch);
  absl::Status RunBackwardWeights(const KernelArgs& args, const void* dy, char* scratch);

  BoundPrimitive forward_;
  BoundPrimitive backward_data_;
  BoundPrimitive backward_weights_;
  BoundPrimitive weights_reorder_;      // forward -> backward-data weights layout, if they differ
  size_t reordered_weights_bytes_ = 0;  // head of scratch holding those weights
  // Backward weights writing another layout than the parameters': its
  // gradient goes to the head of scratch, then this reorder puts it in place.
  BoundPrimitive dweights_reorder_;
  size_t dweights_bytes_ = 0;
  // Backward weights reading x and dy in other layouts than the forward's
  // (a convolution whose weight gradient oneDNN has only as its reference
  // kernel for the forward's layout: see conv.cc): these reorders copy them
  // into scratch after the diff weights, x's copy first.
  BoundPrimitive x_reorder_, dy_reorder_;
  size_t x_copy_bytes_ = 0, dy_copy_bytes_ = 0;
  // The activation epilogue's backward (MaskOutputGradient): y, dy ->
  // masked dy, which takes the first masked_bytes_ of scratch.
  // masked_: there is an epilogue (mask_kind_); mask_loop_: it is masked by
  // MaskedSum over mask_count_ elements of mask_dtype_, else by mask_.
  bool masked_ = false, mask_loop_ = false;
  ActivationKind mask_kind_ = ActivationKind::kNone;
  DType mask_dtype_ = DType::kF32;
  int64_t mask_count_ = 0;
  BoundPrimitive mask_;
  size_t masked_bytes_ = 0;
};

}  // namespace onednn
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ONEDNN_WEIGHTED_LAYER_H_
