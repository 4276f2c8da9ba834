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

class WeightedLayer : public OneDnnKernel {
 public:
  absl::Status Forward(const KernelArgs& args) override;
  absl::Status BackwardData(const KernelArgs& args) override;
  absl::Status BackwardWeights(const KernelArgs& args) override;

 protected:
  WeightedLayer(std::shared_ptr<Context> context, std::string what, bool bias)
      : OneDnnKernel(std::move(context), std::move(what)), bias_(bias) {}

  // Takes the three primitives a subclass created (the backward ones with
  // the forward's src/dst/weights descriptors as their diff descriptors),
  // binds their arguments and sets scratch_bytes, the liveness flags and
  // implementation(). The subclass fills in the specs.
  void Bind(const dnnl::primitive_desc_base& forward_pd, dnnl::primitive forward,
            const dnnl::primitive_desc_base& backward_data_pd, dnnl::primitive backward_data,
            const dnnl::primitive_desc_base& backward_weights_pd,
            dnnl::primitive backward_weights);

  const bool bias_;

 private:
  BoundPrimitive forward_;
  BoundPrimitive backward_data_;
  BoundPrimitive backward_weights_;
  BoundPrimitive weights_reorder_;      // forward -> backward-data weights layout, if they differ
  size_t reordered_weights_bytes_ = 0;  // head of scratch holding those weights
};

}  // namespace onednn
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ONEDNN_WEIGHTED_LAYER_H_
