// Shared pieces of the reference kernels: the base class that checks every
// call's bindings, input-spec resolution for plain layouts, and the
// fp32/fp64 dispatch.
#ifndef CNNBENCH_KERNELS_REFERENCE_COMMON_H_
#define CNNBENCH_KERNELS_REFERENCE_COMMON_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/dtype.h"
#include "kernels/desc.h"
#include "kernels/kernel.h"

namespace cnnbench {
namespace reference {

// A reference kernel: Forward/Backward check the bindings against the
// signature (so a wrong executor call is a clear error, not a crash) and then
// run the op's plain loops. Subclasses never allocate in the Run* methods.
class ReferenceKernel : public Kernel {
 public:
  std::string implementation() const override { return "reference"; }
  absl::Status Forward(const KernelArgs& args) final;
  absl::Status BackwardData(const KernelArgs& args) final;
  absl::Status BackwardWeights(const KernelArgs& args) final;

 protected:
  ReferenceKernel(std::string desc, KernelSignature signature);

  virtual absl::Status RunForward(const KernelArgs& args) = 0;
  virtual absl::Status RunBackwardData(const KernelArgs& args) = 0;
  virtual absl::Status RunBackwardWeights(const KernelArgs& args) { return absl::OkStatus(); }

  // The descriptor's canonical string, named in every error.
  const std::string& desc() const { return desc_; }
  absl::Status Error(absl::string_view what) const;
  // softmax_xent's backward starts from d loss = 1 and ignores dy.
  bool backward_reads_dy_ = true;

 private:
  std::string desc_;
};

// The specs the kernel will read its inputs as. `given` are the producers'
// specs (empty: plain `expected`). A 4-D (N,C,H,W) input is accepted for an
// expected (N, C*H*W) matrix when `flatten` is set (fc, softmax_xent).
// Blocked or NHWC inputs are Unimplemented; other mismatches are
// InvalidArgument naming the descriptor.
absl::StatusOr<std::vector<TensorSpec>> ResolveInputs(absl::string_view desc,
                                                      const std::vector<TensorSpec>& given,
                                                      const std::vector<TensorSpec>& expected,
                                                      bool flatten = false);

// The signature of an op that reads one plain input of `shape` and writes
// an output of the same shape (relu, lrn, dropout): inputs and output set,
// the rest left for the caller.
absl::StatusOr<KernelSignature> SameShapeSignature(absl::string_view desc, DType dtype,
                                                   const Shape& shape,
                                                   const std::vector<TensorSpec>& given);

absl::Status UnsupportedDType(absl::string_view desc, DType dtype);

// Builds Kernel<float> or Kernel<double> for `dtype`; anything else is
// Unimplemented("unsupported: ...").
template <template <typename> class KernelT, typename Desc>
absl::StatusOr<std::unique_ptr<Kernel>> MakeTyped(DType dtype, const Desc& desc,
                                                  KernelSignature signature) {
  switch (dtype) {
    case DType::kF32:
      return std::unique_ptr<Kernel>(new KernelT<float>(desc, std::move(signature)));
    case DType::kF64:
      return std::unique_ptr<Kernel>(new KernelT<double>(desc, std::move(signature)));
    default:
      return UnsupportedDType(desc.ToString(), dtype);
  }
}

// Dense (N,C,H,W) offset.
inline int64_t Offset4(int64_t c_size, int64_t h_size, int64_t w_size, int64_t n, int64_t c,
                       int64_t h, int64_t w) {
  return ((n * c_size + c) * h_size + h) * w_size + w;
}

}  // namespace reference
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_REFERENCE_COMMON_H_
