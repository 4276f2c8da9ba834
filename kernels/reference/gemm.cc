// Reference GEMM: C(m,n) = op(A) op(B), A stored (m,k) or (k,m) with _ta, B
// stored (k,n) or (n,k) with _tb; backward gives dA = dC op(B)^T and
// dB = op(A)^T dC, each stored like its input.
#include "kernels/reference/common.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace reference {
namespace {

template <typename T>
class GemmKernel final : public ReferenceKernel {
 public:
  GemmKernel(const GemmDesc& d, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)), d_(d) {}

 private:
  // Offsets of op(A)(i,p) and op(B)(p,j) in storage.
  int64_t AIndex(int64_t i, int64_t p) const {
    return d_.transpose_a ? p * d_.m + i : i * d_.k + p;
  }
  int64_t BIndex(int64_t p, int64_t j) const {
    return d_.transpose_b ? j * d_.k + p : p * d_.n + j;
  }

  absl::Status RunForward(const KernelArgs& a) override {
    const T* x = static_cast<const T*>(a.x[0]);
    const T* w = static_cast<const T*>(a.x[1]);
    T* c = static_cast<T*>(a.y);
    for (int64_t i = 0; i < d_.m; ++i)
      for (int64_t j = 0; j < d_.n; ++j) {
        double acc = 0.0;
        for (int64_t p = 0; p < d_.k; ++p)
          acc += static_cast<double>(x[AIndex(i, p)]) * static_cast<double>(w[BIndex(p, j)]);
        c[i * d_.n + j] = static_cast<T>(acc);
      }
    return absl::OkStatus();
  }

  absl::Status RunBackwardData(const KernelArgs& a) override {
    const T* x = static_cast<const T*>(a.x[0]);
    const T* w = static_cast<const T*>(a.x[1]);
    const T* dc = static_cast<const T*>(a.dy);
    if (T* da = a.dx.size() > 0 ? static_cast<T*>(a.dx[0]) : nullptr) {
      for (int64_t i = 0; i < d_.m; ++i)
        for (int64_t p = 0; p < d_.k; ++p) {
          double acc = 0.0;
          for (int64_t j = 0; j < d_.n; ++j)
            acc += static_cast<double>(dc[i * d_.n + j]) * static_cast<double>(w[BIndex(p, j)]);
          da[AIndex(i, p)] = static_cast<T>(acc);
        }
    }
    if (T* db = a.dx.size() > 1 ? static_cast<T*>(a.dx[1]) : nullptr) {
      for (int64_t p = 0; p < d_.k; ++p)
        for (int64_t j = 0; j < d_.n; ++j) {
          double acc = 0.0;
          for (int64_t i = 0; i < d_.m; ++i)
            acc += static_cast<double>(x[AIndex(i, p)]) * static_cast<double>(dc[i * d_.n + j]);
          db[BIndex(p, j)] = static_cast<T>(acc);
        }
    }
    return absl::OkStatus();
  }

  const GemmDesc d_;
};

}  // namespace

KernelOr CreateOp(ContextPtr, const GemmDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  const DType dtype = options.dtype;
  KernelSignature sig;
  const Shape a = desc.transpose_a ? Shape{desc.k, desc.m} : Shape{desc.m, desc.k};
  const Shape b = desc.transpose_b ? Shape{desc.n, desc.k} : Shape{desc.k, desc.n};
  auto resolved = ResolveInputs(desc.ToString(), inputs,
                                {TensorSpec::Plain(dtype, a), TensorSpec::Plain(dtype, b)});
  if (!resolved.ok()) return resolved.status();
  sig.inputs = *std::move(resolved);
  sig.output = TensorSpec::Plain(dtype, Shape{desc.m, desc.n});
  sig.backward_reads_inputs = true;  // dA needs B, dB needs A
  sig.backward_reads_output = false;
  return MakeTyped<GemmKernel>(dtype, desc, std::move(sig));
}

}  // namespace reference
}  // namespace cnnbench
