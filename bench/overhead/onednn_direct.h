// oneDNN's convolution and inner-product primitives called directly, with
// no cnnbench code between: the baseline the oneDNN backend's kernels are
// read against (//bench:onednn_overhead, //tools:step_breakdown --direct).
// Built as kernels/onednn builds them: format_tag::any, a user scratchpad,
// direct convolution, explicit diff descriptors, and backward data with the
// weights as the forward stores them where oneDNN runs the same kernel that
// way (else in its preferred layout, reordered once before timing), and
// backward weights written in the weights' layout where a kernel as good
// writes it (else in its preferred layout and reordered into the weights'
// within the pass: oneDNN 2.6's bf16 weight gradients have only a reference
// kernel for the forward's blocked layout). In fp32
// or bf16 (bf16 data, weights and their gradients; a bias and its gradient
// in fp32, as the backend keeps them).
#ifndef CNNBENCH_BENCH_OVERHEAD_ONEDNN_DIRECT_H_
#define CNNBENCH_BENCH_OVERHEAD_ONEDNN_DIRECT_H_

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "dnnl.hpp"
#include "kernels/desc.h"
#include "kernels/op_traits.h"

namespace cnnbench::bench {

class DirectLayer {
 public:
  // A convolution (one group, no fused ReLU) or a fully connected layer, in
  // kF32 or kBF16; InvalidArgument for another op, Unimplemented
  // ("unsupported: ...") where oneDNN has no such primitive here.
  static absl::StatusOr<std::unique_ptr<DirectLayer>> Create(const OpDesc& desc, DType dtype);

  // Executes one pass and waits for it.
  void Run(OpPass pass);
  // The memory of argument `id` (DNNL_ARG_*) of `pass`.
  dnnl::memory& arg(OpPass pass, int id);
  // Backward data reads the weights in its own layout: reorders the
  // forward's weights into it (once, before the pass is run).
  void PrepareBackwardWeights();
  // Fills every argument with small integers in [-2, 2] (exact in bf16),
  // the weights of backward data included.
  void FillSmallIntegers();
  // The implementation oneDNN picked for `pass` ("jit_bf16:avx512_core_bf16").
  std::string implementation(OpPass pass) const;
  // The median seconds of `runs` executions of `pass` after one untimed one.
  double MedianSeconds(OpPass pass, int runs);

 private:
  struct Primitive {
    dnnl::primitive primitive;
    std::unordered_map<int, dnnl::memory> args;
    std::string implementation;
    // Backward weights written in another layout than the weights': the
    // reorder into theirs, run as part of the pass (as the backend does).
    bool reorder_after = false;
    dnnl::reorder after;
    dnnl::memory after_to;
  };
  explicit DirectLayer(DType dtype);
  Primitive Bind(const dnnl::primitive_desc_base& pd, dnnl::primitive primitive,
                 const std::vector<int>& ids);
  void BuildConv(const ConvDesc& d);
  void BuildFc(const FcDesc& d);
  dnnl::memory::desc Any(const dnnl::memory::dims& dims) const;
  // Makes the last pass (backward weights) reorder its gradient into
  // `weights` when it writes another layout.
  void ReorderWeightGradient(const dnnl::memory::desc& weights);

  DType dtype_;
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::primitive_attr attr_;
  std::map<int, dnnl::memory> tensors_;
  std::vector<Primitive> passes_;  // indexed by OpPass
};

// The forward FLOPs of a conv or fc descriptor (each pass costs the same);
// 0 for other ops.
double DirectFlops(const OpDesc& desc);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_OVERHEAD_ONEDNN_DIRECT_H_
