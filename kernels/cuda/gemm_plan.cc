#include "kernels/cuda/gemm_plan.h"

#include "absl/strings/str_cat.h"

namespace cnnbench::cuda {

PassGemm ForwardGemm(const GemmDesc& desc) { return {desc, Operand::kA, Operand::kB}; }

PassGemm GradientOfA(const GemmDesc& d) {
  // A stored (M,K): dA = dy(M,N) op(B)^T(N,K). A stored (K,M): dA = op(B)(K,N) dy^T(N,M).
  if (!d.transpose_a) return {GemmDesc{d.m, d.k, d.n, false, !d.transpose_b}, Operand::kDy, Operand::kB};
  return {GemmDesc{d.k, d.m, d.n, d.transpose_b, true}, Operand::kB, Operand::kDy};
}

PassGemm GradientOfB(const GemmDesc& d) {
  // B stored (K,N): dB = op(A)^T(K,M) dy(M,N). B stored (N,K): dB = dy^T(N,M) op(A)(M,K).
  if (!d.transpose_b) return {GemmDesc{d.k, d.n, d.m, !d.transpose_a, false}, Operand::kA, Operand::kDy};
  return {GemmDesc{d.n, d.k, d.m, true, d.transpose_a}, Operand::kDy, Operand::kA};
}

std::string LtMatmul::ToString() const {
  return absl::StrCat("m", m, "n", n, "k", k, transpose_a ? "_ta" : "", transpose_b ? "_tb" : "",
                      " lda", a.ld, " ldb", b.ld, " ldd", d.ld);
}

LtMatmul ToColumnMajor(const PassGemm& g) {
  const int64_t m = g.desc.m, n = g.desc.n, k = g.desc.k;
  LtMatmul lt;
  lt.m = n;
  lt.n = m;
  lt.k = k;
  lt.transpose_a = g.desc.transpose_b;
  lt.transpose_b = g.desc.transpose_a;
  lt.lt_a = g.second;
  lt.lt_b = g.first;
  // Row-major second (K,N) is column-major (N,K); stored (N,K) it is (K,N).
  lt.a = lt.transpose_a ? LtMatrix{k, n, k} : LtMatrix{n, k, n};
  // Row-major first (M,K) is column-major (K,M); stored (K,M) it is (M,K).
  lt.b = lt.transpose_b ? LtMatrix{m, k, m} : LtMatrix{k, m, k};
  lt.d = LtMatrix{n, m, n};
  return lt;
}

void ColumnMajorMatmul(const LtMatmul& lt, const double* a, const double* b, double* d) {
  for (int64_t j = 0; j < lt.n; ++j) {
    for (int64_t i = 0; i < lt.m; ++i) {
      double sum = 0;
      for (int64_t p = 0; p < lt.k; ++p) {
        const double av = lt.transpose_a ? a[p + i * lt.a.ld] : a[i + p * lt.a.ld];
        const double bv = lt.transpose_b ? b[j + p * lt.b.ld] : b[p + j * lt.b.ld];
        sum += av * bv;
      }
      d[i + j * lt.d.ld] = sum;
    }
  }
}

absl::StatusOr<FcLayout> FcLayoutFor(const FcDesc& desc, DType dtype,
                                     const std::vector<TensorSpec>& inputs) {
  const std::string what = desc.ToString();
  FcLayout layout;
  layout.input = TensorSpec::Plain(dtype, Shape{desc.n, desc.ic});
  layout.weights = TensorSpec::Plain(dtype, Shape{desc.oc, desc.ic});
  if (inputs.size() > 1)
    return absl::InvalidArgumentError(absl::StrCat(what, ": takes 1 input, got ", inputs.size()));
  if (inputs.empty()) return layout;
  const TensorSpec& given = inputs[0];
  const Shape& s = given.shape;
  if (!given.is_plain() || given.dtype != dtype || (s.rank() != 2 && s.rank() != 4) ||
      s[0] != desc.n || s.num_elements() != desc.n * desc.ic)
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": input spec ", given.DebugString(), " does not fit"));
  layout.input = given;
  if (s.rank() == 4 && given.layout == Layout::kNHWC && s[2] * s[3] > 1) {
    layout.weights = TensorSpec::Plain(dtype, Shape{desc.oc, s[1], s[2], s[3]});
    layout.weights.layout = Layout::kNHWC;
  }
  return layout;
}

}  // namespace cnnbench::cuda
